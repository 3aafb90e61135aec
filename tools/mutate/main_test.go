package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMutationsApply checks every mutation against the repository's files,
// without writing them: its file exists, its anchor and target are found
// as apply requires, and the mutated text differs. A generator change that
// moves a mutation's target fails here before the suite runs.
func TestMutationsApply(t *testing.T) {
	root := filepath.Join("..", "..")
	all, err := allMutations(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.Name] {
			t.Errorf("duplicate mutation name %q", m.Name)
		}
		seen[m.Name] = true
		if _, ok := checks[m.Check]; !ok {
			t.Errorf("%s: unknown check %q", m.Name, m.Check)
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		out, err := m.apply(src)
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		if len(out) != len(src)+len(m.New)-len(m.Old) || string(out) == string(src) {
			t.Errorf("%s: the mutation changed nothing or more than its token", m.Name)
		}
	}
	if len(mutations) < 30 {
		t.Errorf("%d mutations, want at least 30", len(mutations))
	}
}

// TestApply checks apply's rules on a small text: the first target after
// the anchor, a repeated anchor or target refused, a missing one reported.
func TestApply(t *testing.T) {
	src := []byte("A: x y\nB: x y\n")
	for _, c := range []struct {
		m    Mutation
		want string // "" for an error
	}{
		{Mutation{After: "B:", Old: "x", New: "z"}, "A: x y\nB: z y\n"},
		{Mutation{After: "A:", Old: "y", New: "z"}, "A: x z\nB: x y\n"},
		{Mutation{Old: "A: x", New: "A: w"}, "A: w y\nB: x y\n"},
		{Mutation{Old: "x", New: "z"}, ""},              // two targets, no anchor
		{Mutation{After: ": ", Old: "x", New: "z"}, ""}, // two anchors
		{Mutation{After: "B:", Old: "A", New: "z"}, ""}, // nothing after the anchor
	} {
		out, err := c.m.apply(src)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%+v: applied as %q, want an error", c.m, out)
		case c.want != "" && err != nil:
			t.Errorf("%+v: %v", c.m, err)
		case c.want != "" && string(out) != c.want:
			t.Errorf("%+v: %q, want %q", c.m, out, c.want)
		}
	}
}

// TestCopyTree checks that the scratch copy holds the module's files.
func TestCopyTree(t *testing.T) {
	dst := t.TempDir()
	if err := copyTree(filepath.Join("..", ".."), dst); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "generated/llama2_7b/llama2_7b_amd64.s", "templates/rope.cu.tmpl", "tools/mutate/mutations.go"} {
		b, err := os.ReadFile(filepath.Join(dst, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: not copied (%v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); err == nil || !strings.Contains(err.Error(), "no such") {
		t.Errorf(".git was copied (%v)", err)
	}
}
