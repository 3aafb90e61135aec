//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerifyScratchOnSignal runs `posenc verify` in a throwaway module on a
// spec that takes seconds to generate, beside a scratch directory of an
// exited process, and sends SIGTERM as soon as its own scratch directory
// appears: the run must exit 143 with both directories gone.
func TestVerifyScratchOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the posenc binary; skipped under -short")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "posenc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(tmp, "mod")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module scratchtest\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(root, "_posenc-verify-"+strconv.Itoa(dead.Process.Pid)+"-1")
	if err := os.MkdirAll(filepath.Join(stale, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	specPath, err := filepath.Abs("../../spec/testdata/limits/lim_rope_1024.yaml")
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "verify", specPath)
	cmd.Dir = root
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mine := "_posenc-verify-" + strconv.Itoa(cmd.Process.Pid) + "-"
	found := false
	for deadline := time.Now().Add(30 * time.Second); !found && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			found = found || strings.HasPrefix(e.Name(), mine)
		}
	}
	if !found {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no %s* directory appeared in the module root", mine)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Errorf("posenc verify after SIGTERM: %v, want exit status 143", err)
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "_posenc-") {
			t.Errorf("%s is left in the module root", e.Name())
		}
	}
}
