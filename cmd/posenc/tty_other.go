//go:build !linux && !darwin

package main

// terminalWidth reports no terminal: progress falls back to plain lines on
// systems other than Linux and macOS.
func terminalWidth(fd uintptr) (cols int, ok bool) { return 0, false }
