//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Written specs have mode 0644 less the umask, like any file the user
// writes (not os.CreateTemp's 0600).
func TestImportFileMode(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o002, 0o644}, {0o077, 0o600}, {0o027, 0o640}} {
		syscall.Umask(c.umask)
		p := filepath.Join(dir, "m.yaml")
		os.Remove(p)
		code, _, errs := runCLI("import-hf", "-name", "m", "-o", p, llamaCfg)
		if code != 0 {
			t.Fatalf("umask %03o: code %d: %s", c.umask, code, errs)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("umask %03o: mode %v, want %v", c.umask, fi.Mode().Perm(), c.want)
		}
	}
}
