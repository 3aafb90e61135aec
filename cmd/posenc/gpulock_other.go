//go:build !(linux || darwin)

package main

import "fmt"

// lockFile has no flock(2) to take here: POSENC_GPU_LOCK is refused.
func lockFile(path string, _ bool) (func(), error) {
	return nil, fmt.Errorf("%s=%s: no flock(2) on this system; unset it", gpuLockEnv, path)
}
