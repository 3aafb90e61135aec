package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/spec"
)

func runList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: list takes no arguments", errUsage)
	}
	specs, err := spec.Zoo()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENCODING\tSHAPE\tSOURCE")
	for _, s := range specs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Encoding, shape(s), sourceLine(s))
	}
	return tw.Flush()
}

// shape summarizes a spec's dimensions in one short phrase (its family's
// Summary).
func shape(s *spec.Spec) string {
	f, ok := gen.Lookup(s.Encoding)
	if !ok {
		return ""
	}
	return f.Summary(s)
}

// sourceLine is the first comment line of a zoo spec: the model and where
// its parameters come from.
func sourceLine(s *spec.Spec) string {
	for _, l := range strings.Split(s.Source, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			return strings.TrimSpace(strings.TrimLeft(l, "#"))
		}
		if l != "" {
			break
		}
	}
	return ""
}
