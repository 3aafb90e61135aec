package gocodetest

import (
	"bytes"
	"go/format"
	"testing"

	"github.com/posenc/posenc/internal/emit"
)

// CheckGoFiles checks the Go files a family emitted for the package name
// from the spec file source, in two runs a and b: exactly <name>.go,
// <name>_generic.go, <name>_test.go and <name>_variants.go, then the extra
// names (a family's further files, e.g. its attention form), in that order,
// identical between the runs, each starting with the generated-code header
// and gofmt-clean.
func CheckGoFiles(t *testing.T, name, source string, a, b []emit.File, extra ...string) {
	t.Helper()
	want := append([]string{name + ".go", name + "_generic.go", name + "_test.go", name + "_variants.go"}, extra...)
	if len(a) != len(want) || len(b) != len(want) {
		t.Fatalf("%d and %d files, want %v", len(a), len(b), want)
	}
	for i, f := range a {
		if f.Name != want[i] {
			t.Errorf("file %d is %s, want %s", i, f.Name, want[i])
		}
		if !bytes.Equal(f.Data, b[i].Data) {
			t.Errorf("%s differs between two runs", f.Name)
		}
		if !bytes.HasPrefix(f.Data, []byte(emit.Header(source)+"\n")) {
			t.Errorf("%s does not start with the generated-code header", f.Name)
		}
		src, err := format.Source(f.Data)
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
		} else if !bytes.Equal(src, f.Data) {
			t.Errorf("%s is not gofmt-clean", f.Name)
		}
	}
}
