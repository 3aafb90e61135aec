//go:build !unix

package main

// terminalWidth reports no terminal: progress falls back to plain lines on
// systems without the unix TIOCGWINSZ ioctl.
func terminalWidth(fd uintptr) (cols int, ok bool) { return 0, false }
