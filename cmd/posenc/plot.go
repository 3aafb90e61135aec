package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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

// runPlot runs `go run github.com/posenc/posenc/cmd/posenc-plot ARGS` in the
// current directory, passing its output and exit status through.
func runPlot(args []string, stdout, stderr io.Writer) error {
	var errs bytes.Buffer
	cmd := exec.Command("go", append([]string{"run", plotCommand}, args...)...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = stdout
	cmd.Stderr = io.MultiWriter(stderr, &errs)
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ee):
		return fmt.Errorf("go run %s: %w", plotCommand, err)
	case missingModule(errs.String()):
		return fmt.Errorf("pictures are drawn by %s, which needs gonum/plot: posenc itself does not import it, so this module lacks it. "+
			"Add it with `go get -tool %s` (then `go tool posenc-plot` or `posenc plot` work here), or run posenc plot in a posenc checkout", plotCommand, plotCommand)
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
