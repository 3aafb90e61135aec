//go:build linux || darwin

package main

import (
	"path/filepath"
	"testing"
)

// TestLockFile checks that the GPU lock excludes a second holder (another
// open of the file, as another bench process's) until it is released.
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.lock")
	release, err := lockFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := lockFile(path, true); err == nil {
		r()
		t.Fatal("a second holder took the lock while the first held it")
	}
	release()
	r, err := lockFile(path, true)
	if err != nil {
		t.Fatalf("the lock, released, stays taken: %v", err)
	}
	r()
	if _, err := lockFile(filepath.Join(t.TempDir(), "no", "dir", "gpu.lock"), false); err == nil {
		t.Error("a lock file in a missing directory was taken")
	}
}
