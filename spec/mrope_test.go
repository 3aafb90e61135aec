package spec

import (
	"errors"
	"reflect"
	"testing"
)

// mropeBase is a Qwen2.5-VL-like rope spec; each case appends lines.
const mropeBase = "name: m\nencoding: rope\nhead_dim: 128\nlayout: half\n"

func TestMRoPEValid(t *testing.T) {
	s, err := Parse("m.yaml", []byte(mropeBase+"mrope_section: [16, 24, 24]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsMRoPE() || !reflect.DeepEqual(s.MRoPESection, []int{16, 24, 24}) || s.MRoPEInterleaved || s.MRoPEFreqs != MRoPEFreqsShared {
		t.Errorf("got %+v", s)
	}
	s, err = Parse("m.yaml", []byte(mropeBase+"mrope_section: [24, 20, 20]\nmrope_interleaved: true\n"))
	if err != nil || !s.MRoPEInterleaved {
		t.Errorf("qwen3-vl: %v %+v", err, s)
	}
	if _, err := Parse("m.yaml", []byte(mropeBase+"mrope_section: [32, 32]\nmrope_freqs: alternate\n")); err != nil {
		t.Errorf("pixtral-like: %v", err)
	}
	if s, err := Parse("m.yaml", []byte(mropeBase)); err != nil || s.IsMRoPE() || s.MRoPEFreqs != "" {
		t.Errorf("plain rope: %v %+v", err, s)
	}
}

// Every rule names its field and line.
func TestMRoPEErrors(t *testing.T) {
	for _, c := range []struct {
		extra, field string
		line         int
	}{
		{"mrope_section: [16, 24, 20]\n", "mrope_section", 5},
		{"mrope_section: [64]\n", "mrope_section", 5},
		{"mrope_section: [16, 0, 48]\n", "mrope_section[1]", 5},
		// Four sections near 2^62 whose int64 sum wraps around to 64.
		{"mrope_section: [4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387968]\n", "mrope_section[0]", 5},
		{"mrope_section:\n  - 16\n  - -9223372036854775808\n  - 24\n", "mrope_section[1]", 7},
		{"mrope_section: [65, 24]\n", "mrope_section[0]", 5},
		{"mrope_section: [16, 24, x]\n", "mrope_section[2]", 5},
		{"mrope_section: 64\n", "mrope_section", 5},
		{"mrope_interleaved: true\n", "mrope_interleaved", 5},
		{"mrope_freqs: per_axis\n", "mrope_freqs", 5},
		{"mrope_section: [16, 24, 24]\nmrope_freqs: radial\n", "mrope_freqs", 6},
		// Interleaved h pairs 1, 4, …, 1+3·23 = 70 ≥ 64.
		{"mrope_section: [16, 24, 24]\nmrope_interleaved: true\n", "mrope_section[1]", 5},
		{"mrope_section: [24, 20, 20]\nmrope_interleaved: true\nmrope_freqs: per_axis\n", "mrope_interleaved", 6},
		{"mrope_section: [40, 24]\nmrope_freqs: alternate\n", "mrope_section[1]", 5},
		{"mrope_section: [16, 24, 24]\nscaling:\n  type: dynamic\n  factor: 2\n  original_max_position: 4096\n", "scaling.type", 7},
		{"mrope_section: [32, 32]\nmrope_freqs: per_axis\nscaling:\n  type: linear\n  factor: 2\n", "scaling", 7},
	} {
		_, err := Parse("m.yaml", []byte(mropeBase+c.extra))
		var e *Error
		if !errors.As(err, &e) || e.Field != c.field || e.Line != c.line {
			t.Errorf("%q: got %v, want field %s at line %d", c.extra, err, c.field, c.line)
		}
	}
	// The keys belong to rope only.
	_, err := Parse("a.yaml", []byte("name: a\nencoding: alibi\nheads: 4\nmrope_section: [1, 1]\n"))
	var e *Error
	if !errors.As(err, &e) || e.Field != "mrope_section" || e.Line != 4 {
		t.Errorf("alibi with mrope_section: %v", err)
	}
}
