package spec

import (
	"bytes"
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

// FuzzParseAll checks that ParseAll never panics, returns *Error on
// failure, and on a file without "---" lines agrees with Parse.
func FuzzParseAll(f *testing.F) {
	f.Add([]byte("name: a\nencoding: alibi\nheads: 3\n---\nname: b\nencoding: alibi\nheads: [\n"))
	f.Add([]byte("# c\n---\nname: a\nencoding: alibi\nheads: 3\n--- # x\nname: b\nencoding: alibi\nheads: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ss, err := ParseAll("fuzz.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || ss != nil {
				t.Fatalf("ParseAll: %v (%T), %d specs", err, err, len(ss))
			}
		}
		for _, s := range ss {
			if s == nil || s.Name == "" {
				t.Fatalf("ParseAll returned an empty spec: %+v", s)
			}
		}
		if bytes.Contains(data, []byte("---")) {
			return
		}
		s, perr := Parse("fuzz.yaml", data)
		if (perr == nil) != (err == nil) || perr != nil && perr.Error() != err.Error() || s != nil && (len(ss) != 1 || ss[0].Name != s.Name) {
			t.Fatalf("Parse: %v; ParseAll: %v", perr, err)
		}
	})
}
