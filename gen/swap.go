package gen

import "os"

// swapDirTwoStep moves dir aside, renames tmp to dir, and moves the old
// directory to tmp for the caller to delete. Between the two renames dir is
// briefly absent, but never half-written.
func swapDirTwoStep(tmp, dir string) error {
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir) // put the old package back
		return err
	}
	return os.Rename(old, tmp)
}
