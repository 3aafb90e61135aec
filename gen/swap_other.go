//go:build !linux

package gen

// swapDir puts the directory tmp in dir's place (two renames; only Linux
// has an atomic directory exchange).
func swapDir(tmp, dir string) error { return swapDirTwoStep(tmp, dir) }
