package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/gen/family"
)

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explain", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: explain takes one spec file or zoo name", errUsage)
	}
	// A file may hold several specs (import-hf writes Gemma 3's two to
	// stdout as one file): explain each in turn, after deriving them all.
	specs, err := loadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	derived := make([]family.Derived, len(specs))
	for i, s := range specs {
		if derived[i], err = gen.Derive(s); err != nil {
			return err
		}
	}
	for i, c := range derived {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		explain(stdout, c)
	}
	return nil
}

// explain prints what a user porting the encoding needs to compare against
// another implementation: every derived constant.
func explain(w io.Writer, c family.Derived) {
	s := c.Input()
	fmt.Fprintf(w, "%s (%s), encoding %s, targets %s, dtype %s\n", s.Name, s.File, s.Encoding, strings.Join(s.Targets, ","), s.DType)
	c.Explain(w)
}
