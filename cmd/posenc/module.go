package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/posenc/posenc/internal/scratch"
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

// scratchDir makes a temporary directory inside the module root: the
// generated packages must sit inside the module to import its verify
// package through the module's own requirements (a directory elsewhere
// would need a go.mod of its own naming posenc's version or path). Its name,
// "_posenc-<what>-<pid>-<random>", starts with "_" so that ./... patterns
// never pick it up. Directories of the same kind left by killed runs (their
// process is gone) are removed first. Until done is called, SIGINT or
// SIGTERM removes the directory and exits (status 130 or 143), so an
// interrupted run leaves nothing in the module root; done stops that and
// removes the directory.
func scratchDir(root, what string) (dir string, done func(), err error) {
	prefix := "_posenc-" + what + "-"
	scratch.RemoveStale(root, prefix)
	// Catch the signals before the directory exists, so none can kill the
	// run between the two.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	dir, err = scratch.Dir(root, prefix, "")
	if err != nil {
		signal.Stop(sig)
		return "", nil, err
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case s := <-sig:
			removeAll(dir)
			fmt.Fprintf(os.Stderr, "posenc: %v: removed %s\n", s, dir)
			code := 130
			if s == syscall.SIGTERM {
				code = 143
			}
			os.Exit(code)
		case <-stop:
		}
	}()
	return dir, func() {
		signal.Stop(sig)
		close(stop)
		<-finished
		removeAll(dir)
	}, nil
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
