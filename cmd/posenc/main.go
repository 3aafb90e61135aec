// Command posenc generates verified positional-encoding kernels from specs.
//
//	posenc                       generate the embedded zoo into generated/ and verify it
//	posenc gen [-o DIR] [-force] [-zoo NAME]... [SPEC.yaml...]
//	posenc verify [-targets LIST|auto] [-gpu] [-zoo NAME]... [SPEC.yaml...]
//	posenc bench [-short] [-benchtime D] [-gpu [-reps N]] [-zoo NAME]... [SPEC.yaml...]
//	posenc list
//	posenc explain SPEC.yaml|NAME
//	posenc plot [-kind KIND] [-zoo NAME] [-name NAME] -o FILE.png|FILE.svg [SPEC.yaml|NAME]  (runs cmd/posenc-plot)
//	posenc import-hf [-name NAME] [-force] [-o SPEC.yaml | DIR/] config.json
//	posenc import-gguf [-name NAME] [-force] [-o SPEC.yaml | DIR/] model.gguf
//
// Every command takes -h.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// command is one subcommand of posenc.
type command struct {
	name  string
	usage string // one line of arguments
	help  string // what it does
	run   func(args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"gen", "[-o DIR] [-force] [-zoo NAME]... [SPEC.yaml...]", "write the generated package of each spec (no spec: the whole zoo) into DIR/<name>/", runGen},
		{"verify", "[-targets LIST|auto] [-gpu] [-zoo NAME]... [SPEC.yaml...]", "generate each spec (no spec: the zoo) into a temporary directory inside the current module and check every variant against the float64 reference (-gpu: also the CUDA kernels on this machine's GPU, built with nvcc)", runVerify},
		{"bench", "[-short] [-benchtime D] [-gpu [-reps N]] [-zoo NAME]... [SPEC.yaml...]", "benchmark every kernel variant: GB/s, ratio to copy() of the same size, speed-up over the plain Go loop (-gpu: the CUDA kernels, as a ratio to a device-to-device copy)", runBench},
		{"list", "", "list the embedded zoo of real-model specs", runList},
		{"explain", "SPEC.yaml|NAME", "print the constants derived from a spec (a file holding several: each in turn): frequencies, attention factor, slopes, buckets", runExplain},
		{"plot", "[-kind KIND] [-width PX] [-height PX] [-zoo NAME] [-name NAME] -o FILE.png|FILE.svg [SPEC.yaml|NAME]", "draw a spec's picture (builds and runs " + plotCommand + ", a separate command so that posenc does not import gonum/plot): RoPE spectrum, long-term decay and kernel error against position, ALiBi bias per head, bucket map, absolute encoding heatmap; of a file holding several specs, -name picks one", runPlot},
		{"import-hf", "[-name NAME] [-force] [-o SPEC.yaml | DIR/] config.json", "turn a Hugging Face config.json into its spec(s) (Gemma 3: NAME_local and NAME_global; unsupported fields are errors, never a silently different spec); -o DIR/ or an existing directory gets DIR/NAME.yaml per spec; an existing file is replaced only with -force", runImportHF},
		{"import-gguf", "[-name NAME] [-force] [-o SPEC.yaml | DIR/] model.gguf", "turn a GGUF file's header metadata into a spec (tensor data is never read); -o DIR/ or an existing directory gets DIR/NAME.yaml; an existing file is replaced only with -force", runImportGGUF},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes posenc with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if err := runDefault(stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "posenc:", err)
			return 1
		}
		return 0
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		mainUsage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var status exitStatus
		switch {
		case errors.As(err, &status):
			return int(status)
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintln(stderr, "posenc "+c.name+":", err)
			return 2
		default:
			fmt.Fprintln(stderr, "posenc "+c.name+":", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "posenc: unknown command %q\n", args[0])
	mainUsage(stderr)
	return 2
}

func mainUsage(w io.Writer) {
	fmt.Fprintln(w, "posenc generates verified positional-encoding kernels (Go, AVX2, AVX-512, NEON, CUDA) from YAML specs.")
	fmt.Fprintln(w, "\nUsage:\n  posenc                 generate the embedded zoo into generated/ and verify it")
	for _, c := range commands {
		fmt.Fprintf(w, "  posenc %s %s\n      %s\n", c.name, c.usage, c.help)
	}
	fmt.Fprintln(w, "\nRun 'posenc COMMAND -h' for a command's flags.")
}

// newFlags makes a FlagSet whose -h prints the command's usage to stdout.
func newFlags(name string, stdout io.Writer) *flag.FlagSet {
	var c command
	for _, x := range commands {
		if x.name == name {
			c = x
		}
	}
	fs := flag.NewFlagSet("posenc "+name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: posenc %s %s\n\n%s.\n", name, c.usage, c.help)
		if hasFlags(fs) {
			fmt.Fprintln(stdout, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}
