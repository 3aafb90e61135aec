// Package asmtest runs the kernels the asm family programs generate: it
// writes generated packages with test harnesses into a temporary directory
// inside the posenc module, vets them (asmdecl checks the assembly against
// its Go declarations) and runs their tests, natively on amd64 and under
// qemu-aarch64-static for NEON. Only tests import it.
package asmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// GoTool returns the go binary of the running toolchain (go env GOROOT).
func GoTool(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	root := strings.TrimSpace(string(out))
	if err != nil || root == "" {
		root = runtime.GOROOT()
	}
	return filepath.Join(root, "bin", "go")
}

// RunGo runs go with args in dir (with extra environment variables env)
// and returns its combined output, failing t on an error.
func RunGo(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(GoTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// ModuleRoot returns the posenc module root: the nearest directory above
// the test's working directory holding go.mod.
func ModuleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("module root not found above %s", wd)
		}
	}
}

// write creates path (and its directory) with data, failing t on an error.
func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sourceDir is the directory of this package's sources (its testdata).
func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}
