// Package cli holds what the posenc and posenc-plot commands share: flag
// parsing that accepts flags after positional arguments, spec loading and
// generation, and running go commands inside the current module.
package cli

import (
	"errors"
	"flag"
	"fmt"
)

// ErrUsage marks an error caused by bad command-line use (exit status 2).
var ErrUsage = errors.New("usage")

// Parse parses args with fs, accepting flags before, between and after
// positional arguments (posenc import-hf config.json -o x.yaml); after a
// "--" every argument is positional. fs.Args() then holds the positional
// arguments in order. Flag errors wrap ErrUsage; -h returns flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	// Leave fs.Args() = pos without touching the flags already set.
	return fs.Parse(append([]string{"--"}, pos...))
}

// MultiFlag collects a repeatable string flag.
type MultiFlag []string

func (m *MultiFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *MultiFlag) Set(v string) error { *m = append(*m, v); return nil }
