//go:build linux

package gen

import (
	"os"

	"golang.org/x/sys/unix"
)

// swapDir puts the directory tmp in dir's place. When dir exists the two
// are exchanged in one renameat2(RENAME_EXCHANGE), leaving the old package
// at tmp for the caller to delete; otherwise tmp is renamed to dir.
func swapDir(tmp, dir string) error {
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return os.Rename(tmp, dir)
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	if err == unix.ENOSYS || err == unix.EINVAL {
		return swapDirTwoStep(tmp, dir)
	}
	if err != nil {
		return &os.LinkError{Op: "renameat2", Old: tmp, New: dir, Err: err}
	}
	return nil
}
