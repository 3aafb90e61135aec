package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal side of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the terminal side: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A terminal gets the status line unless NO_COLOR or TERM=dumb asks for
// plain output.
func TestProgressTerminalDetection(t *testing.T) {
	tty := openPTY(t)
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	if _, ok := interactive(tty); !ok {
		t.Fatal("a pseudo-terminal not taken for a terminal")
	}
	p := newProgress(tty, 1)
	if !p.tty {
		t.Error("newProgress on a terminal renders plain lines")
	}
	p.Step("one step")
	p.Done()
	t.Setenv("NO_COLOR", "1")
	if _, ok := interactive(tty); ok {
		t.Error("NO_COLOR set, yet a status line")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "dumb")
	if _, ok := interactive(tty); ok {
		t.Error("TERM=dumb, yet a status line")
	}
}
