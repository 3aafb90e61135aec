package spec

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Multimodal RoPE (M-RoPE): the rotary pairs of a head are split among
// several position axes, (t, h, w) for Qwen2-VL's text model or (h, w) for
// a 2D vision tower, and each pair turns by the position of its own axis.

// MRoPE frequency assignments, as written in `mrope_freqs`.
const (
	// MRoPEFreqsShared gives pair i the frequency ω_i of ordinary RoPE
	// whatever its axis (Qwen2-VL's Qwen2VLRotaryEmbedding and Qwen3-VL's
	// text rotary: one inv_freq, the axis only picks the position).
	MRoPEFreqsShared = "shared"
	// MRoPEFreqsPerAxis restarts the frequencies in every section: the
	// j-th pair of an n-pair section turns at base^(−j/n) (Qwen2-VL's
	// VisionRotaryEmbedding(head_dim/2), whose rot_pos_emb gives the first
	// half of the pairs the row id and the second half the column id).
	MRoPEFreqsPerAxis = "per_axis"
	// MRoPEFreqsAlternate deals the ordinary frequencies ω_k = base^(−2k/R)
	// to the axes in turn: axis a gets k = a, a+n, a+2n, … for n axes
	// (Pixtral's PixtralRotaryEmbedding: freqs[::2] to the rows, freqs[1::2]
	// to the columns).
	MRoPEFreqsAlternate = "alternate"
)

// MRoPEFreqModes lists the mrope_freqs values.
var MRoPEFreqModes = []string{MRoPEFreqsShared, MRoPEFreqsPerAxis, MRoPEFreqsAlternate}

// MaxMRoPEAxes bounds the number of sections (position axes) of mrope_section.
const MaxMRoPEAxes = 4

// IsMRoPE reports whether s is a multimodal RoPE spec (has mrope_section).
func (s *Spec) IsMRoPE() bool { return len(s.MRoPESection) > 0 }

// mrope checks mrope_section, mrope_interleaved and mrope_freqs of a rope
// spec and applies the default of mrope_freqs. It runs after rotary_dim and
// scaling are known.
func (d *decoder) mrope(s *Spec) {
	if !d.has("mrope_section") {
		for _, k := range []string{"mrope_interleaved", "mrope_freqs"} {
			if d.has(k) {
				d.fail(d.line(k), k, "needs mrope_section (the pairs of each position axis)")
				return
			}
		}
		return
	}
	const p = "mrope_section"
	sec := s.MRoPESection
	pairs := s.RotaryDim / 2
	if len(sec) < 2 || len(sec) > MaxMRoPEAxes {
		d.fail(d.line(p), p, "must list the rotary pairs of 2 to %d position axes (Qwen2-VL: [t, h, w] = [16, 24, 24]), got %d entries", MaxMRoPEAxes, len(sec))
		return
	}
	// Each section is range-checked before any is added: with every
	// section in [1, pairs] the sum of at most MaxMRoPEAxes of them cannot
	// overflow (sections near 2^62 used to wrap around to rotary_dim/2).
	sum := 0
	for i, n := range sec {
		if ip := fmt.Sprintf("%s[%d]", p, i); n < 1 || n > pairs {
			d.fail(d.line(ip), ip, "must be an integer in [1, %d] (the pairs of axis %d, at most rotary_dim/2), got %d", pairs, i, n)
			return
		}
		sum += n
	}
	if sum != pairs {
		d.fail(d.line(p), p, "the sections must add up to the rotary pairs, rotary_dim/2 = %d, got %v summing to %d", pairs, sec, sum)
		return
	}
	if !d.has("mrope_freqs") {
		s.MRoPEFreqs = MRoPEFreqsShared
	} else if !contains(MRoPEFreqModes, s.MRoPEFreqs) {
		d.fail(d.line("mrope_freqs"), "mrope_freqs", "unknown frequency assignment %q; %s", s.MRoPEFreqs, oneOf(MRoPEFreqModes))
		return
	}
	if s.MRoPEInterleaved {
		if s.MRoPEFreqs != MRoPEFreqsShared {
			d.fail(d.line("mrope_interleaved"), "mrope_interleaved", "interleaved sections (Qwen3-VL) take mrope_freqs shared, got %s", s.MRoPEFreqs)
			return
		}
		// Qwen3-VL's apply_interleaved_mrope gives axis a > 0 the pairs a,
		// a+n, …, below n·section[a]; the last must be a rotary pair, or
		// transformers' slice would silently give the axis fewer pairs.
		n := len(sec)
		for a := 1; a < n; a++ {
			if last := a + n*(sec[a]-1); last >= pairs {
				d.fail(d.line(p), fmt.Sprintf("%s[%d]", p, a), "interleaved: axis %d takes every %d-th pair from %d, and its %d pairs end at pair %d, beyond the %d rotary pairs", a, n, a, sec[a], last, pairs)
				return
			}
		}
	}
	if s.MRoPEFreqs == MRoPEFreqsAlternate {
		for i, v := range sec {
			if v != sec[0] {
				d.fail(d.line(p), fmt.Sprintf("%s[%d]", p, i), "mrope_freqs alternate deals the frequencies to the axes in turn and needs equal sections, got %v", sec)
				return
			}
		}
	}
	if sc := s.Scaling; sc != nil {
		if sc.Type == ScaleDynamic || sc.Type == ScaleLongRoPE {
			d.fail(d.line("scaling.type"), "scaling.type", "%s scaling picks frequencies per call and is not supported with mrope_section", sc.Type)
			return
		}
		if s.MRoPEFreqs != MRoPEFreqsShared {
			d.fail(d.line("scaling"), "scaling", "mrope_freqs %s (a vision rotary) takes no scaling", s.MRoPEFreqs)
		}
	}
}

// integers decodes a list of integers.
func (d *decoder) integers(n *yaml.Node, path string) []int {
	items := d.list(n, path, "integers")
	if items == nil {
		return nil
	}
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = d.integer(it, fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}
