package spec

import (
	"slices"
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

// TestStorage16MRoPETemperature: M-RoPE (mrope_section) and Llama 4's
// attn_temperature take 16-bit storage like every rope form, and keep neon:
// M-RoPE runs on the 16-bit rotate kernel, ScaleQ on the 16-bit NEON
// scaleRows kernel (asm/rope/neon_scalerows16.go).
func TestStorage16MRoPETemperature(t *testing.T) {
	for _, extra := range []string{"mrope_section: [16, 24, 24]\n", "attn_temperature: {}\n", "mrope_section: [16, 24, 24]\nattn_temperature: {}\n"} {
		for _, dt := range []string{"f16", "bf16"} {
			src := "name: mr16\nencoding: rope\nhead_dim: 128\nlayout: half\n" + extra + "dtype: " + dt + "\n"
			s, err := Parse("mr16.yaml", []byte(src))
			if err != nil {
				t.Fatalf("%q: %v", src, err)
			}
			if s.DType != dt || !slices.Equal(s.Targets, AllTargets) {
				t.Errorf("%q: dtype %s, targets %v; want %s and the default %v", src, s.DType, s.Targets, dt, AllTargets)
			}
			s, err = Parse("mr16.yaml", []byte(src+"targets: [go, avx2, neon]\n"))
			if err != nil {
				t.Errorf("%q with neon listed: %v", src, err)
			} else if !slices.Equal(s.Targets, []string{TargetGo, TargetAVX2, TargetNEON}) {
				t.Errorf("%q with neon listed: targets %v, want [go avx2 neon]", src, s.Targets)
			}
		}
	}
}
