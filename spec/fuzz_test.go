package spec

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics and returns either a named spec
// or an *Error. The seed corpus under testdata/fuzz/FuzzParse holds the
// golden and zoo specs and some broken ones.
func FuzzParse(f *testing.F) {
	f.Add([]byte("name: a\nencoding: alibi\nheads: 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		switch {
		case err != nil && s != nil:
			t.Fatalf("Parse returned both a spec and the error %v", err)
		case err != nil:
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
		case s == nil:
			t.Fatal("Parse returned neither a spec nor an error")
		case s.Name == "" || s.Encoding == "" || len(s.Targets) == 0 || s.DType == "":
			t.Fatalf("parsed spec lacks name, encoding, targets or dtype: %+v", s)
		}
	})
}
