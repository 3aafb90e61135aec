package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// TestGenerateAllReportsEveryFailure makes two of four packages
// unwritable (a file where each package directory goes): the write is all
// or nothing, so none of the four may be written, and the error must name
// both failures, each with its own cause.
func TestGenerateAllReportsEveryFailure(t *testing.T) {
	zoo, err := spec.Zoo()
	if err != nil {
		t.Fatal(err)
	}
	if len(zoo) < 4 {
		t.Fatalf("zoo has %d specs, want 4", len(zoo))
	}
	specs := zoo[:4]
	out := t.TempDir()
	for _, s := range []*spec.Spec{specs[1], specs[3]} {
		if err := os.WriteFile(filepath.Join(out, s.Name), []byte("not a package\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := GenerateAll(specs, out, false)
	if n != 0 {
		t.Errorf("GenerateAll wrote %d packages, want 0", n)
	}
	if err == nil {
		t.Fatal("GenerateAll: no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"2 of 4 packages cannot be written into " + out + ": " + specs[1].Name + ", " + specs[3].Name + " (nothing written)",
		"\n" + specs[1].Name + ": " + filepath.Join(out, specs[1].Name) + ": exists and is not a directory",
		"\n" + specs[3].Name + ": " + filepath.Join(out, specs[3].Name) + ": exists and is not a directory",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want only the two files in the way", out, names)
	}
}

// TestGenerateAllNoneWritten: when every package fails the error says so.
func TestGenerateAllNoneWritten(t *testing.T) {
	zoo, err := spec.Zoo()
	if err != nil {
		t.Fatal(err)
	}
	specs := zoo[:2]
	out := t.TempDir()
	for _, s := range specs {
		if err := os.WriteFile(filepath.Join(out, s.Name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := GenerateAll(specs, out, false)
	if n != 0 || err == nil || !strings.Contains(err.Error(), "2 of 2 packages cannot be written") || !strings.Contains(err.Error(), "(nothing written)") {
		t.Fatalf("GenerateAll = %d, %v; want 0 and an error saying nothing was written", n, err)
	}
}
