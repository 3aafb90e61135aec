//go:build linux || darwin

package main

import (
	"syscall"
	"unsafe"
)

// terminalWidth returns the column count of the terminal on fd, or ok
// false when fd is not a terminal (TIOCGWINSZ fails with ENOTTY). Package
// syscall, not golang.org/x/sys/unix, so that modules depending on posenc
// vendor no x/sys/unix.
func terminalWidth(fd uintptr) (cols int, ok bool) {
	var ws struct{ Row, Col, X, Y uint16 }
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if e != 0 {
		return 0, false
	}
	return int(ws.Col), true
}
