// Command posenc-plot draws a positional-encoding spec with gonum/plot:
// RoPE frequency spectrum, long-term decay and a generated kernel's error
// against position, ALiBi bias per head, bucket map, absolute-encoding
// heatmap (docs/plots.md).
//
//	posenc-plot [-kind KIND] [-width PX] [-height PX] [-zoo NAME] [-name NAME] -o FILE.png|FILE.svg [SPEC.yaml|NAME]
//
// `posenc plot ARGS` runs it with go run. It is a command of its own so that
// the posenc generator does not import gonum/plot, its fonts and image
// libraries: a module depending on posenc pays for them only when it adds
// this command (go get -tool github.com/posenc/posenc/cmd/posenc-plot).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/posenc/posenc/internal/cli"
)

const usage = "[-kind KIND] [-width PX] [-height PX] [-zoo NAME] [-name NAME] -o FILE.png|FILE.svg [SPEC.yaml|NAME]"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes posenc-plot with args and returns the exit status: 0, 1 on
// failure, 2 on bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	err := runPlot(args, stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, cli.ErrUsage):
		fmt.Fprintln(stderr, "posenc plot:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "posenc plot:", err)
		return 1
	}
}

// newFlags makes the FlagSet whose -h prints the usage and flags to stdout.
func newFlags(stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("posenc plot", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: posenc plot %s\n   or: posenc-plot %s\n\n"+
			"Draw a spec's picture: RoPE spectrum, long-term decay and kernel error against position,\n"+
			"ALiBi bias per head, bucket map, absolute encoding heatmap.\n\nFlags:\n", usage, usage)
		fs.PrintDefaults()
	}
	return fs
}
