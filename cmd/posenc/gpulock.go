package main

import "os"

// gpuLockEnv names a lock file that bench -gpu takes between building its
// drivers and timing them, so that several bench processes started
// together (tools/gpu/attn_call.sh's builds with different -D flags)
// compile side by side on the CPUs but time one at a time on the GPU.
const gpuLockEnv = "POSENC_GPU_LOCK"

// gpuLock waits for the lock POSENC_GPU_LOCK names, saying so through p,
// and returns its release; without the variable it does nothing.
func gpuLock(p *progress) (func(), error) {
	path := os.Getenv(gpuLockEnv)
	if path == "" {
		return func() {}, nil
	}
	p.Printf("waiting for the GPU lock %s (%s)", path, gpuLockEnv)
	return lockFile(path, false)
}
