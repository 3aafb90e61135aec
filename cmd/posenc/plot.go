package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// plotCommand draws posenc's pictures. It is a command of its own so that
// the posenc tool does not import gonum/plot and its fonts: a module that
// depends on posenc for generation vendors none of them.
const plotCommand = "github.com/posenc/posenc/cmd/posenc-plot"

// exitStatus is an error that only carries a child command's exit status:
// the child already printed why.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runPlot builds github.com/posenc/posenc/cmd/posenc-plot in the current
// module (as go run would, into a temporary directory) and runs it with
// args, passing its output and its exit status through: go run itself would
// turn every non-zero status into 1 (and print "exit status N"), so a usage
// error (2) would not read as one.
func runPlot(args []string, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "posenc-plot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "posenc-plot")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	var errs bytes.Buffer
	build := exec.Command("go", "build", "-o", exe, plotCommand)
	build.Stdout = stderr
	build.Stderr = io.MultiWriter(stderr, &errs)
	if err := build.Run(); err != nil {
		if missingModule(errs.String()) {
			return fmt.Errorf("pictures are drawn by %s, which needs gonum/plot: posenc itself does not import it, so this module lacks it. "+
				"Add it with `go get -tool %s` (then `go tool posenc-plot` or `posenc plot` work here), or run posenc plot in a posenc checkout", plotCommand, plotCommand)
		}
		return fmt.Errorf("go build %s: %w", plotCommand, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ee):
		return fmt.Errorf("%s: %w", plotCommand, err)
	}
	return exitStatus(ee.ExitCode())
}

// missingModule reports whether go's stderr says a package of posenc-plot
// is outside the module's requirements (or its vendor directory).
func missingModule(stderr string) bool {
	for _, s := range []string{"no required module provides package", "missing go.sum entry", "-mod=vendor", "cannot find module providing package"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}
