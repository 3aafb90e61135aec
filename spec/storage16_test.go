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

// TestStorage16MRoPETemperature: M-RoPE (mrope_section) and Llama 4's
// attn_temperature take 16-bit storage like every rope form. M-RoPE keeps
// neon (it runs on the 16-bit rotate kernel); attn_temperature leaves it out
// by default and refuses it when listed (ScaleQ has no 16-bit NEON kernel).
func TestStorage16MRoPETemperature(t *testing.T) {
	for _, extra := range []string{"mrope_section: [16, 24, 24]\n", "attn_temperature: {}\n"} {
		wantNEON := extra[0] == 'm'
		for _, dt := range []string{"f16", "bf16"} {
			src := "name: mr16\nencoding: rope\nhead_dim: 128\nlayout: half\n" + extra + "dtype: " + dt + "\n"
			s, err := Parse("mr16.yaml", []byte(src))
			if err != nil {
				t.Fatalf("%q: %v", src, err)
			}
			if s.DType != dt || slices.Contains(s.Targets, TargetNEON) != wantNEON || !slices.Contains(s.Targets, TargetAVX512) {
				t.Errorf("%q: dtype %s, targets %v; want %s, neon among them: %v", src, s.DType, s.Targets, dt, wantNEON)
			}
			_, err = Parse("mr16.yaml", []byte(src+"targets: [go, avx2, neon]\n"))
			switch {
			case wantNEON && err != nil:
				t.Errorf("%q with neon listed: %v", src, err)
			case !wantNEON && (err == nil || !strings.Contains(err.Error(), "mr16.yaml:") || !strings.Contains(err.Error(), "targets") || !strings.Contains(err.Error(), "neon")):
				t.Errorf("%q with neon listed: %v, want a targets error naming neon", src, err)
			}
		}
	}
}
