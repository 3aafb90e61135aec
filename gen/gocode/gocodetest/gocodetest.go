// Package gocodetest builds generated packages inside the module and runs
// the go command on them, for the families' end-to-end tests.
package gocodetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
)

// ModuleRoot returns the directory holding go.mod above the working directory.
func ModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// ScratchModuleDir makes a directory inside the module (so generated
// packages can import verify) whose name starts with "_", so ./... patterns
// ignore it; it is removed when the test ends.
func ScratchModuleDir(t *testing.T, prefix string) (root, dir string) {
	t.Helper()
	root = ModuleRoot(t)
	dir, err := os.MkdirTemp(root, "_"+prefix+"-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return root, dir
}

// WriteScratchPackage writes files as the package dir/name and returns its
// ./-relative path from root, for the go command.
func WriteScratchPackage(t *testing.T, root, dir, name string, files []emit.File) string {
	t.Helper()
	pd := filepath.Join(dir, name)
	if err := os.Mkdir(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pd, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := filepath.Rel(root, pd)
	if err != nil {
		t.Fatal(err)
	}
	return "./" + filepath.ToSlash(rel)
}

// GoOnPackages runs `go args... pkgs...` in root. The scratch packages hold
// the Go files only, so POSENC_REQUIRE (set by CI for the real packages) is
// cleared: there is no assembly variant to require.
func GoOnPackages(t *testing.T, root string, pkgs []string, args ...string) (string, error) {
	t.Helper()
	return GoOnPackagesEnv(t, root, pkgs, []string{"POSENC_REQUIRE="}, args...)
}

// GoOnPackagesEnv is GoOnPackages with env (KEY=value entries) added to the
// environment instead of clearing POSENC_REQUIRE.
func GoOnPackagesEnv(t *testing.T, root string, pkgs []string, env []string, args ...string) (string, error) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	cmd := exec.Command(goTool, append(args, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = &goError{args: strings.Join(args, " "), err: err}
	}
	return string(out), err
}

type goError struct {
	args string
	err  error
}

func (e *goError) Error() string { return "go " + e.args + ": " + e.err.Error() }
