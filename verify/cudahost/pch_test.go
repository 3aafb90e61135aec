package cudahost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPrecompiledHeader builds the shared header directory in a fresh
// cache: with GCC it holds the header and its precompiled form, a second
// call finds it, a rebuild prunes a stale sibling, and GCC accepts the
// precompiled form for a driver's flags (-Winvalid-pch -Werror).
func TestPrecompiledHeader(t *testing.T) {
	cxx, ok := CXX()
	if !ok {
		t.Skip("no C++ compiler")
	}
	if v, err := exec.Command(cxx, "--version").Output(); err != nil || strings.Contains(string(v), "clang") {
		if buildPCH(cxx) != "" {
			t.Fatal("a precompiled header for clang")
		}
		t.Skip("not GCC")
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	stale := filepath.Join(cache, "posenc-cudahost", "pch-0123456789abcdef")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * pchKeep)
	os.Chtimes(stale, old, old)
	d := buildPCH(cxx)
	if d == "" {
		t.Fatal("no precompiled header directory")
	}
	for _, f := range []string{HeaderName, HeaderName + ".gch"} {
		if _, err := os.Stat(filepath.Join(d, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale directory is still there (%v)", err)
	}
	if again := buildPCH(cxx); again != d {
		t.Errorf("second call: %q, want %q", again, d)
	}
	entries, _ := os.ReadDir(filepath.Dir(d))
	if len(entries) != 1 {
		t.Errorf("%d entries in the cache, want 1", len(entries))
	}
	// A driver's compile with the same flags takes the precompiled form.
	src := filepath.Join(t.TempDir(), "x.cpp")
	if err := os.WriteFile(src, []byte("#include \""+HeaderName+"\"\nint main() { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string(nil), hostFlags...), "-Winvalid-pch", "-Werror", "-H", "-I", d, "-fsyntax-only", src)
	out, err := exec.Command(cxx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), HeaderName+".gch") {
		t.Errorf("the compile did not use %s.gch:\n%.2000s", HeaderName, out)
	}
}
