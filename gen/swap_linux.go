//go:build linux

package gen

import (
	"os"
	"syscall"
	"unsafe"
)

// renameExchange is RENAME_EXCHANGE of renameat2(2); atFDCWD is AT_FDCWD.
const (
	renameExchange = 1 << 1
	atFDCWD        = -100
)

// swapDir puts the directory tmp in dir's place. When dir exists the two
// are exchanged in one renameat2(RENAME_EXCHANGE), leaving the old package
// at tmp for the caller to delete; otherwise tmp is renamed to dir. Where
// the kernel, file system or GOARCH lacks renameat2 it falls back to
// swapDirTwoStep. (It calls the system call through package syscall, not
// golang.org/x/sys/unix, so that modules depending on posenc vendor no
// x/sys/unix.)
func swapDir(tmp, dir string) error {
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return os.Rename(tmp, dir)
	}
	err := renameat2Exchange(tmp, dir)
	if err == syscall.ENOSYS || err == syscall.EINVAL {
		return swapDirTwoStep(tmp, dir)
	}
	if err != nil {
		return &os.LinkError{Op: "renameat2", Old: tmp, New: dir, Err: err}
	}
	return nil
}

// renameat2Exchange exchanges the paths a and b atomically, or returns
// ENOSYS where sysRenameat2 is unknown for this GOARCH.
func renameat2Exchange(a, b string) error {
	if sysRenameat2 == 0 {
		return syscall.ENOSYS
	}
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	fd := atFDCWD
	_, _, e := syscall.Syscall6(sysRenameat2, uintptr(fd), uintptr(unsafe.Pointer(pa)), uintptr(fd), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	if e != 0 {
		return e
	}
	return nil
}
