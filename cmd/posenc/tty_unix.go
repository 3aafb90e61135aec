//go:build unix

package main

import "golang.org/x/sys/unix"

// terminalWidth returns the column count of the terminal on fd, or ok
// false when fd is not a terminal (TIOCGWINSZ fails with ENOTTY).
func terminalWidth(fd uintptr) (cols int, ok bool) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}
