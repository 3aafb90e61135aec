package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// moduleRoot returns the directory of the Go module enclosing the current
// directory: generated packages are tested inside it, so they can import
// github.com/posenc/posenc/verify through the module's requirements.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module: run it from a module that requires github.com/posenc/posenc (the generated packages are built there)")
	}
	return filepath.Dir(gomod), nil
}

// scratchDir makes a temporary directory inside the module root. Its name
// starts with "_" so that ./... patterns never pick it up.
func scratchDir(root, what string) (string, error) {
	return os.MkdirTemp(root, "_posenc-"+what+"-")
}

// goCmd builds a go command running in dir with extra environment entries.
func goCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// runCapture runs cmd and returns its combined output.
func runCapture(cmd *exec.Cmd) ([]byte, error) {
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.Bytes(), err
}
