package cli

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

// ModuleRoot returns the directory of the Go module enclosing the current
// directory: generated packages are tested inside it, so they can import
// github.com/posenc/posenc/verify through the module's requirements.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module: run it from a module that requires github.com/posenc/posenc (the generated packages are built there; see the README's \"Use it from your module\")")
	}
	return filepath.Dir(gomod), nil
}

// ScratchDir makes a temporary directory inside the module root: the
// generated packages must sit inside the module to import its verify
// package through the module's own requirements (a directory elsewhere
// would need a go.mod of its own naming posenc's version or path). Its name,
// "_posenc-<what>-<pid>-<random>", starts with "_" so that ./... patterns
// never pick it up. Directories of the same kind left by killed runs (their
// process is gone) are removed first. Until done is called, SIGINT or
// SIGTERM removes the directory and exits (status 130 or 143), so an
// interrupted run leaves nothing in the module root; done stops that and
// removes the directory.
func ScratchDir(root, what string) (dir string, done func(), err error) {
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
			RemoveAll(dir)
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
		RemoveAll(dir)
	}, nil
}

// RemoveAll deletes a scratch directory, reporting (not failing on) errors.
func RemoveAll(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "posenc: cleaning up:", err)
	}
}

// GoCmd builds a go command running in dir with extra environment entries.
func GoCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// RunCapture runs cmd and returns its combined output.
func RunCapture(cmd *exec.Cmd) ([]byte, error) {
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// Tail returns the last lines of b.
func Tail(b []byte, lines int) string {
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// Rel is filepath.Rel(base, p), or p when p has no path relative to base.
func Rel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}
