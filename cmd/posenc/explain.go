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
	s, err := loadOne(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := gen.Derive(s)
	if err != nil {
		return err
	}
	explain(stdout, c)
	return nil
}

// explain prints what a user porting the encoding needs to compare against
// another implementation: every derived constant.
func explain(w io.Writer, c family.Derived) {
	s := c.Input()
	fmt.Fprintf(w, "%s (%s), encoding %s, targets %s, dtype %s\n", s.Name, s.File, s.Encoding, strings.Join(s.Targets, ","), s.DType)
	c.Explain(w)
}
