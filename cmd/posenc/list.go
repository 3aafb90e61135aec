package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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

// shape summarizes a spec's dimensions in one short phrase.
func shape(s *spec.Spec) string {
	switch s.Encoding {
	case spec.RoPE:
		sc := ""
		if s.Scaling != nil {
			sc = fmt.Sprintf(", %s ×%g", s.Scaling.Type, s.Scaling.Factor)
		}
		return fmt.Sprintf("head_dim %d, rotary %d, %s, base %g%s", s.HeadDim, s.RotaryDim, s.Layout, s.Base, sc)
	case spec.ALiBi:
		return fmt.Sprintf("%d heads", s.Heads)
	case spec.RPEBias:
		if s.Buckets != nil {
			return fmt.Sprintf("%d heads, T5 %d buckets to %d", s.Heads, s.Buckets.Num, s.Buckets.MaxDistance)
		}
		return fmt.Sprintf("%d heads, r_max %d", s.Heads, s.RMax)
	case spec.RPEFull:
		return fmt.Sprintf("head_dim %d, r_max %d", s.HeadDim, s.RMax)
	case spec.XL:
		return fmt.Sprintf("head_dim %d, base %g", s.HeadDim, s.Base)
	}
	return fmt.Sprintf("d_model %d, max_len %d", s.DModel, s.MaxLen)
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
