package spec

import (
	"slices"
	"strings"
	"testing"
)

// TestStorage16Targets checks that 16-bit rope storage keeps every target:
// neon is among the defaults and may be listed, as for f32 rope and other
// encodings.
func TestStorage16Targets(t *testing.T) {
	const rope = "name: r\nencoding: rope\nhead_dim: 64\nlayout: half\n"
	for _, dt := range []string{"f16", "bf16"} {
		s, err := Parse("r.yaml", []byte(rope+"dtype: "+dt+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Targets, AllTargets) {
			t.Errorf("%s: default targets %v, want %v", dt, s.Targets, AllTargets)
		}
		s, err = Parse("r.yaml", []byte(rope+"dtype: "+dt+"\ntargets: [go, neon]\n"))
		if err != nil {
			t.Errorf("%s with neon listed: %v", dt, err)
		} else if !slices.Equal(s.Targets, []string{TargetGo, TargetNEON}) {
			t.Errorf("%s with neon listed: targets %v, want [go neon]", dt, s.Targets)
		}
	}
	for _, src := range []string{rope, rope + "dtype: f32\n", "name: a\nencoding: alibi\nheads: 8\ndtype: bf16\n"} {
		s, err := Parse("x.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(s.Targets, TargetNEON) {
			t.Errorf("%q: targets %v lost neon", src, s.Targets)
		}
	}
}

// TestMRoPERefuses16BitStorage: the M-RoPE forms have no []uint16 API, so a
// 16-bit M-RoPE spec is refused naming dtype and its line.
func TestMRoPERefuses16BitStorage(t *testing.T) {
	for _, dt := range []string{"f16", "bf16"} {
		src := "name: mr16\nencoding: rope\nhead_dim: 128\nmrope_section: [16, 24, 24]\ndtype: " + dt + "\n"
		_, err := Parse("mr16.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "mr16.yaml:5") || !strings.Contains(err.Error(), "dtype") {
			t.Errorf("dtype %s: got %v, want an error naming mr16.yaml:5 and dtype", dt, err)
		}
	}
}
