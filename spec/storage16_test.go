package spec

import (
	"slices"
	"strings"
	"testing"
)

// TestStorage16Targets checks the neon rule of 16-bit rope storage: left
// out of the default targets, an error when listed, no effect on f32 rope
// or on other encodings.
func TestStorage16Targets(t *testing.T) {
	const rope = "name: r\nencoding: rope\nhead_dim: 64\nlayout: half\n"
	for _, dt := range []string{"f16", "bf16"} {
		s, err := Parse("r.yaml", []byte(rope+"dtype: "+dt+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(s.Targets, TargetNEON) || !slices.Contains(s.Targets, TargetAVX512) || len(s.Targets) != len(AllTargets)-1 {
			t.Errorf("%s: default targets %v, want all but neon", dt, s.Targets)
		}
		_, err = Parse("r.yaml", []byte(rope+"dtype: "+dt+"\ntargets: [go, neon]\n"))
		if err == nil || !strings.Contains(err.Error(), "r.yaml:6: targets:") || !strings.Contains(err.Error(), "neon") {
			t.Errorf("%s with neon listed: %v, want an error at line 6", dt, err)
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

// TestStorage16MRoPETemperature: M-RoPE (mrope_section) and Llama 4's
// attn_temperature take 16-bit storage like every rope form, under the
// same neon rule (left out by default, an error when listed).
func TestStorage16MRoPETemperature(t *testing.T) {
	for _, extra := range []string{"mrope_section: [16, 24, 24]\n", "attn_temperature: {}\n"} {
		for _, dt := range []string{"f16", "bf16"} {
			src := "name: mr16\nencoding: rope\nhead_dim: 128\nlayout: half\n" + extra + "dtype: " + dt + "\n"
			s, err := Parse("mr16.yaml", []byte(src))
			if err != nil {
				t.Fatalf("%q: %v", src, err)
			}
			if s.DType != dt || slices.Contains(s.Targets, TargetNEON) || !slices.Contains(s.Targets, TargetAVX512) {
				t.Errorf("%q: dtype %s, targets %v; want %s and every target but neon", src, s.DType, s.Targets, dt)
			}
			_, err = Parse("mr16.yaml", []byte(src+"targets: [go, avx2, neon]\n"))
			if err == nil || !strings.Contains(err.Error(), "mr16.yaml:") || !strings.Contains(err.Error(), "targets") || !strings.Contains(err.Error(), "neon") {
				t.Errorf("%q with neon listed: %v, want a targets error naming neon", src, err)
			}
		}
	}
}
