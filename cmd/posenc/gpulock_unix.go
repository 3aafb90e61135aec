//go:build linux || darwin

package main

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on the file at path (created if
// missing), waiting for it unless nowait, and returns its release. The
// kernel drops the lock when the process ends, however it ends, so a
// killed holder leaves nothing stale behind; flock(1) takes the same lock.
func lockFile(path string, nowait bool) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gpuLockEnv, err)
	}
	how := syscall.LOCK_EX
	if nowait {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: flock %s: %w", gpuLockEnv, path, err)
	}
	return func() { f.Close() }, nil
}
