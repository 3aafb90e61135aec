package cli

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args    []string
		o       string
		v       bool
		zoo     []string
		posArgs []string
	}{
		{[]string{"config.json", "-o", "x.yaml"}, "x.yaml", false, nil, []string{"config.json"}},
		{[]string{"-o", "x.yaml", "config.json"}, "x.yaml", false, nil, []string{"config.json"}},
		{[]string{"a.yaml", "-zoo", "x", "b.yaml", "-v", "-zoo=y"}, "", true, []string{"x", "y"}, []string{"a.yaml", "b.yaml"}},
		{[]string{"a.yaml", "--", "-o", "b"}, "", false, nil, []string{"a.yaml", "-o", "b"}},
		{[]string{"-", "-v"}, "", true, nil, []string{"-"}},
		{nil, "", false, nil, nil},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o := fs.String("o", "", "")
		v := fs.Bool("v", false, "")
		var zoo MultiFlag
		fs.Var(&zoo, "zoo", "")
		if err := Parse(fs, c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if *o != c.o || *v != c.v || !slices.Equal(zoo, c.zoo) || !slices.Equal(fs.Args(), c.posArgs) {
			t.Errorf("%q: o=%q v=%v zoo=%q args=%q, want %q %v %q %q", c.args, *o, *v, zoo, fs.Args(), c.o, c.v, c.zoo, c.posArgs)
		}
	}
}

func TestParseErrors(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("o", "", "")
	if err := Parse(fs, []string{"a", "-nosuch"}); !errors.Is(err, ErrUsage) {
		t.Errorf("unknown flag after a positional: %v, want a usage error", err)
	}
	if err := Parse(fs, []string{"a", "-o"}); !errors.Is(err, ErrUsage) {
		t.Errorf("flag without value: %v, want a usage error", err)
	}
	if err := Parse(fs, []string{"a", "-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h after a positional: %v, want flag.ErrHelp", err)
	}
}
