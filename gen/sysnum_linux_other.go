//go:build linux && !amd64 && !arm64

package gen

// sysRenameat2 is unknown here: swapDir uses its two-step fallback.
const sysRenameat2 = 0
