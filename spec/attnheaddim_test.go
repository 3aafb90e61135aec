package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestAttnHeadDim covers the optional head_dim of alibi and rpe_bias: kept
// when given (any parity up to MaxAttentionHeadDim), 0 when absent, refused
// out of range with its line, and refused by the encodings that take no
// head_dim.
func TestAttnHeadDim(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"name: a\nencoding: alibi\nheads: 32\nhead_dim: 128\n", 128},
		{"name: a\nencoding: alibi\nhead_dim: 1\nheads: 2\n", 1},
		{"name: a\nencoding: alibi\nheads: 71\nhead_dim: 73\nslopes: [" + strings.Repeat("0.5, ", 70) + "0.5]\n", 73},
		{"name: a\nencoding: alibi\nheads: 2\n", 0},
		{"name: b\nencoding: rpe_bias\nheads: 12\nbuckets: {num: 32, max_distance: 128}\nhead_dim: 64\n", 64},
		{"name: b\nencoding: rpe_bias\nheads: 2\nr_max: 4\nhead_dim: 1024\n", MaxAttentionHeadDim},
		{"name: b\nencoding: rpe_bias\nheads: 2\nr_max: 4\n", 0},
	} {
		s := mustParse(t, c.src)
		if s.HeadDim != c.want {
			t.Errorf("%q: HeadDim %d, want %d", c.src, s.HeadDim, c.want)
		}
	}
	s := mustParse(t, "name: a\nencoding: alibi\nheads: 4\nhead_dim: 64\n")
	if s.MaxBias != DefaultMaxBias || !s.Causal || s.RotaryDim != 0 || s.Base != 0 {
		t.Errorf("alibi with head_dim: defaults %+v", s)
	}

	for _, c := range []struct {
		name, src, field string
		line             int
		msg              string
	}{
		{"alibi 0", "name: a\nencoding: alibi\nheads: 4\nhead_dim: 0\n", "head_dim", 4, "[1, 1024], got 0"},
		{"alibi negative", "name: a\nencoding: alibi\nhead_dim: -64\nheads: 4\n", "head_dim", 3, "[1, 1024], got -64"},
		{"alibi 1025", "name: a\nencoding: alibi\nheads: 4\nhead_dim: 1025\n", "head_dim", 4, "[1, 1024], got 1025"},
		{"rpe_bias 2048", "name: b\nencoding: rpe_bias\nheads: 2\nr_max: 4\nhead_dim: 2048\n", "head_dim", 5, "[1, 1024]"},
		{"t5 65536", "name: b\nencoding: rpe_bias\nheads: 2\nhead_dim: 65536\nbuckets:\n  num: 8\n  max_distance: 4\n", "head_dim", 4, "[1, 1024]"},
		{"alibi float", "name: a\nencoding: alibi\nheads: 4\nhead_dim: 64.5\n", "head_dim", 4, "must be an integer"},
		{"alibi string", "name: a\nencoding: alibi\nheads: 4\nhead_dim: \"64\"\n", "head_dim", 4, "must be an integer"},
		{"alibi duplicate", "name: a\nencoding: alibi\nhead_dim: 64\nheads: 4\nhead_dim: 64\n", "head_dim", 5, "duplicate key"},
		// An earlier rule's error comes first.
		{"alibi heads first", "name: a\nencoding: alibi\nheads: 0\nhead_dim: 0\n", "heads", 3, "[1, "},
		{"sinusoidal", "name: s\nencoding: sinusoidal\nd_model: 16\nhead_dim: 16\n", "head_dim", 4, "does not apply to encoding sinusoidal"},
		{"learned", "name: l\nencoding: learned\nd_model: 4\nmax_len: 8\nhead_dim: 4\n", "head_dim", 5, "does not apply to encoding learned"},
		{"algebraic", "name: g\nencoding: algebraic\nhead_dim: 4\nd_model: 4\nmax_len: 8\n", "head_dim", 3, "does not apply to encoding algebraic"},
		{"binary", "name: n\nencoding: binary\nd_model: 4\nmax_len: 8\nhead_dim: 4\n", "head_dim", 5, "does not apply to encoding binary"},
		{"mixture", "name: m\nencoding: mixture\nd_model: 4\nmax_len: 8\nhead_dim: 4\n", "head_dim", 5, "does not apply to encoding mixture"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("h.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("parsed %+v, want an error", s)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if e.Field != c.field || e.Line != c.line || e.File != "h.yaml" || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("got %q (field %q, line %d); want field %q, line %d and %q", err, e.Field, e.Line, c.field, c.line, c.msg)
			}
		})
	}
}

// TestAttnHeadDimKeys pins which encodings take head_dim.
func TestAttnHeadDimKeys(t *testing.T) {
	want := map[string]bool{RoPE: true, ALiBi: true, RPEBias: true, RPEFull: true, XL: true}
	for _, enc := range Encodings {
		if got := contains(encodingKeys[enc], "head_dim"); got != want[enc] {
			t.Errorf("encoding %s takes head_dim: %v, want %v", enc, got, want[enc])
		}
	}
}
