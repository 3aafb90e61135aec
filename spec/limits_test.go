package spec

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// rope64 is a rope spec prefix (lines 1–4); scaling keys follow.
const rope64 = "name: r\nencoding: rope\nhead_dim: 64\nlayout: half\n"

// TestLimitsRefused feeds the hostile specs of issue 13 (and one per range
// rule) to Parse: each must fail with the field and the line of the value
// that breaks the rule.
func TestLimitsRefused(t *testing.T) {
	cases := []struct {
		name, src, field string
		line             int
		msg              string
	}{
		{"alibi slope 1e39", "name: a\nencoding: alibi\nheads: 2\nslopes: [1e39, 1]\n", "slopes[0]", 4, "2^−126"},
		{"alibi slope above 2^96", "name: a\nencoding: alibi\nheads: 2\nslopes:\n  - 1\n  - 1e29\n", "slopes[1]", 6, "finite float32"},
		{"alibi slope subnormal", "name: a\nencoding: alibi\nheads: 1\nslopes: [1e-39]\n", "slopes[0]", 4, "2^−126"},
		{"alibi max_bias 127", "name: a\nencoding: alibi\nheads: 8\nmax_bias: 127\n", "max_bias", 4, "≤ 126"},
		{"alibi heads", "name: a\nencoding: alibi\nheads: 257\n", "heads", 3, "[1, 256]"},
		{"linear factor 1e-320", rope64 + "scaling:\n  type: linear\n  factor: 1e-320\n", "scaling.factor", 7, "above 4"},
		{"linear factor 1e-300", rope64 + "scaling:\n  type: linear\n  factor: 1e-300\n", "scaling.factor", 7, "above 4"},
		{"linear factor 0.2", rope64 + "scaling:\n  type: linear\n  factor: 0.2\n", "scaling.factor", 7, "above 4"},
		{"linear factor 1e40", rope64 + "scaling:\n  type: linear\n  factor: 1e40\n", "scaling.factor", 7, "below the least normal float32"},
		{"ntk factor 1e300", rope64 + "scaling:\n  type: ntk\n  factor: 1e300\n", "scaling.factor", 7, "overflows float64"},
		{"ntk factor 1e-10", rope64 + "scaling:\n  type: ntk\n  factor: 1e-10\n", "scaling.factor", 7, "above 4"},
		{"dynamic factor 1e300", rope64 + "scaling:\n  type: dynamic\n  factor: 1e300\n  original_max_position: 4096\n", "scaling.factor", 7, "overflows float64"},
		{"dynamic factor 1e30", rope64 + "scaling:\n  type: dynamic\n  factor: 1e30\n  original_max_position: 4096\n", "scaling.factor", 7, "below the least normal"},
		{"yarn factor 1e-20", rope64 + "scaling:\n  type: yarn\n  factor: 1e-20\n  original_max_position: 4096\n", "scaling.factor", 7, "above 4"},
		{"yarn attention_factor 1e300", rope64 + "scaling:\n  type: yarn\n  factor: 4\n  original_max_position: 4096\n  attention_factor: 1e300\n", "scaling.attention_factor", 9, "[2^−64, 2^64]"},
		{"yarn attention_factor tiny", rope64 + "scaling:\n  type: yarn\n  factor: 4\n  original_max_position: 4096\n  attention_factor: 1e-20\n", "scaling.attention_factor", 9, "[2^−64, 2^64]"},
		{"yarn mscale 1e300", rope64 + "scaling:\n  type: yarn\n  factor: 4\n  original_max_position: 4096\n  mscale: 1e300\n  mscale_all_dim: 1e-300\n", "scaling.mscale", 9, "attention factor"},
		{"llama3 factor 1e60", rope64 + "scaling:\n  type: llama3\n  factor: 1e60\n  original_max_position: 8192\n  low_freq_factor: 1\n  high_freq_factor: 4\n", "scaling.factor", 7, "below the least normal"},
		{"longrope attention_factor 1e39", "name: r\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1, 2]\n  long_factor: [1, 2]\n  attention_factor: 1e39\n", "scaling.attention_factor", 10, "[2^−64, 2^64]"},
		{"longrope short 1e300", "name: r\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1e300, 2]\n  long_factor: [1, 2]\n", "scaling.short_factor[0]", 8, "below the least normal"},
		{"longrope long 1e-300", "name: r\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1, 2]\n  long_factor:\n    - 1\n    - 1e-300\n", "scaling.long_factor[1]", 11, "above 4"},
		{"rope base 1e300", "name: r\nencoding: rope\nhead_dim: 64\nlayout: half\nbase: 1e300\n", "base", 5, "below the least normal"},
		{"rope head_dim 2048", "name: r\nencoding: rope\nhead_dim: 2048\nlayout: half\n", "head_dim", 3, "[2, 1024]"},
		{"rope head_dim 65536", "name: r\nencoding: rope\nhead_dim: 65536\nlayout: half\n", "head_dim", 3, "[2, 1024]"},
		{"t5 max_distance 2^31-1", "name: b\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 32\n  max_distance: 2147483647\n", "buckets.max_distance", 6, "[9, 8191]"},
		{"t5 heads", "name: b\nencoding: rpe_bias\nheads: 16384\nbuckets:\n  num: 8192\n  max_distance: 8000\n", "heads", 3, "[1, 256]"},
		{"rpe_bias r_max 2^30", "name: b\nencoding: rpe_bias\nheads: 2\nr_max: 1073741824\n", "r_max", 4, "[1, 8192]"},
		{"rpe_bias r_max 2^24", "name: b\nencoding: rpe_bias\nheads: 2\nr_max: 16777216\n", "r_max", 4, "[1, 8192]"},
		{"rpe_full r_max", "name: f\nencoding: rpe_full\nhead_dim: 8\nr_max: 8193\n", "r_max", 4, "[1, 8192]"},
		{"rpe_full tables", "name: f\nencoding: rpe_full\nhead_dim: 65536\nr_max: 8192\n", "r_max", 4, "relative tables"},
		{"rpe_full tables 256 MiB", "name: f\nencoding: rpe_full\nhead_dim: 4096\nr_max: 8192\n", "r_max", 4, "exceeds 64 MiB"},
		{"learned table", "name: l\nencoding: learned\nd_model: 65536\nmax_len: 2147483647\n", "max_len", 4, "caller's table"},
		{"mixture table", "name: m\nencoding: mixture\nd_model: 1024\nmax_len: 1000000\n", "max_len", 4, "caller's table"},
		{"sinusoidal constant memory", "name: s\nencoding: sinusoidal\nd_model: 16386\nmax_len: 16\n", "d_model", 3, "64 KiB of constant memory"},
		{"algebraic constant memory", "name: g\nencoding: algebraic\nd_model: 8193\nmax_len: 16\n", "d_model", 3, "64 KiB of constant memory"},
		{"xl constant memory", "name: x\nencoding: xl\nhead_dim: 16386\n", "head_dim", 3, "64 KiB of constant memory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("hostile.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("parsed %+v, want an error", s)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if e.Field != c.field || e.Line != c.line || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("got %q (field %q, line %d); want field %q, line %d and %q", err, e.Field, e.Line, c.field, c.line, c.msg)
			}
		})
	}
}

// TestLimitsAccepted parses the specs at (or next to) every limit in
// testdata/limits (gen's tests generate them): they must be valid.
func TestLimitsAccepted(t *testing.T) {
	paths, err := filepath.Glob("testdata/limits/*.yaml")
	if err != nil || len(paths) < 10 {
		t.Fatalf("testdata/limits: %d specs, %v", len(paths), err)
	}
	for _, p := range paths {
		if _, err := Load(p); err != nil {
			t.Errorf("%v", err)
		}
	}
}
