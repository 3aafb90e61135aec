package scratch

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

func TestOwner(t *testing.T) {
	for name, want := range map[string]int{
		".posenc-new-123-llama-456":      123,
		".posenc-new-123-my-pkg-456.old": 123,
		".posenc-new-7-99":               7,
		".posenc-new-llama-456":          0, // an older run's name: no pid
		".posenc-new-0-x":                0,
		".posenc-new-012-x":              0,
		".posenc-new-123":                0,
		"llama2_7b":                      0,
	} {
		got, ok := Owner(name, ".posenc-new-")
		if got != want || ok != (want != 0) {
			t.Errorf("Owner(%q) = %d, %v; want %d, %v", name, got, ok, want, want != 0)
		}
	}
}

// TestRemoveStale removes the directory of a process that has exited and
// keeps those of the running test, of a live child process, of an unknown
// owner and other entries.
func TestRemoveStale(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no kill(pid, 0)")
	}
	parent := t.TempDir()
	const prefix = ".posenc-new-"
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Skip("cannot run sleep:", err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()

	mine, err := Dir(parent, prefix, "pkg")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deadDir := mk(prefix + strconv.Itoa(dead.Process.Pid) + "-pkg-1")
	deadOld := mk(prefix + strconv.Itoa(dead.Process.Pid) + "-pkg-2.old")
	liveDir := mk(prefix + strconv.Itoa(live.Process.Pid) + "-pkg-3")
	legacy := mk(prefix + "pkg-4")
	other := mk("pkg")

	removed := RemoveStale(parent, prefix)
	if len(removed) != 2 {
		t.Errorf("removed %v, want the two directories of the exited process", removed)
	}
	for _, p := range []string{deadDir, deadOld} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s of an exited process is still there (%v)", p, err)
		}
	}
	for _, p := range []string{mine, liveDir, legacy, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
