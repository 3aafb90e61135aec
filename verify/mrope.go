package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// The float64 reference of multimodal RoPE (spec keys mrope_section,
// mrope_interleaved, mrope_freqs), transcribed from Hugging Face
// transformers:
//
//   - Qwen2-VL / Qwen2.5-VL text: Qwen2VLRotaryEmbedding computes
//     freqs[a] = position_ids[a] ⊗ inv_freq for the axes a = t, h, w and
//     emb = cat(freqs, freqs); apply_multimodal_rotary_pos_emb then builds
//     cos from cos.split(mrope_section·2), chunk j taken from axis j % 3.
//   - Qwen3-VL text: apply_interleaved_mrope starts from freqs[0] (t) and
//     overwrites, for axis a = 1, 2, the entries slice(a, mrope_section[a]·3, 3)
//     with freqs[a]; all other entries, the tail included, stay t.
//   - Qwen2-VL vision: VisionRotaryEmbedding(head_dim/2) gives inv_freq
//     1/θ^(arange(0, dim, 2)/dim); rot_pos_emb gathers it at the row id and
//     at the column id and concatenates: the first half of the pairs turn
//     by the row, the second half by the column.
//   - Pixtral vision: PixtralRotaryEmbedding takes freqs = 1/θ^(arange(0,
//     dim, 2)/dim), freqs[::2] times the row id, freqs[1::2] times the
//     column id, concatenated (then cat(x, x) and rotate_half).

// mropeFreqIndexAxes returns, for each entry of HF's half-width freqs
// vector (one per rotary pair), the axis whose position it is taken from.
func mropeFreqIndexAxes(s *spec.Spec) []int {
	sec := s.MRoPESection
	n := len(sec)
	pairs := rotaryDim(s) / 2
	axis := make([]int, pairs)
	if s.MRoPEInterleaved {
		// freqs_t[..., slice(offset, length, 3)] = freqs[dim, ..., idx] with
		// offset = dim and length = mrope_section[dim]·3 (3 = n axes here).
		for dim := 1; dim < n; dim++ {
			for idx := dim; idx < sec[dim]*n && idx < pairs; idx += n {
				axis[idx] = dim
			}
		}
		return axis
	}
	// cos (length R = 2·pairs) split into the chunks mrope_section·2; chunk
	// j comes from axis j % n. Entry i < pairs of the first half is the
	// pair's frequency (the second half repeats it).
	chunks := append(append([]int(nil), sec...), sec...)
	full := make([]int, 2*pairs)
	d := 0
	for j, size := range chunks {
		for range size {
			full[d] = j % n
			d++
		}
	}
	copy(axis, full[:pairs])
	return axis
}

// mropeVisionFrequencies returns the per-pair frequencies of the vision
// assignments: per_axis (VisionRotaryEmbedding for each section: dim = 2·n_a)
// and alternate (Pixtral: freqs[a::n] for axis a, concatenated).
func mropeVisionFrequencies(s *spec.Spec) []float64 {
	base := ropeBase(s)
	var w []float64
	switch s.MRoPEFreqs {
	case spec.MRoPEFreqsPerAxis:
		for _, k := range s.MRoPESection {
			dim := 2 * k
			for j := 0; j < dim; j += 2 {
				w = append(w, 1/math.Pow(base, float64(j)/float64(dim)))
			}
		}
	case spec.MRoPEFreqsAlternate:
		freqs := unscaledFrequencies(base, rotaryDim(s))
		n := len(s.MRoPESection)
		for a := range n {
			for k := a; k < len(freqs); k += n {
				w = append(w, freqs[k])
			}
		}
	default:
		panic("verify: mropeVisionFrequencies on mrope_freqs " + s.MRoPEFreqs)
	}
	return w
}

// isMRoPEVision reports whether s assigns vision frequencies (per_axis or
// alternate), which replace RoPEFrequencies' ordinary ones.
func isMRoPEVision(s *spec.Spec) bool {
	return s.IsMRoPE() && (s.MRoPEFreqs == spec.MRoPEFreqsPerAxis || s.MRoPEFreqs == spec.MRoPEFreqsAlternate)
}

// MRoPEPairAxes returns, for each rotary pair i < RotaryDim/2 of an M-RoPE
// spec, the position axis a whose position pos[t·Axes+a] turns it.
func MRoPEPairAxes(s *spec.Spec) []int { return mropeFreqIndexAxes(s) }

// MRoPEAxes returns the number of position axes of an M-RoPE spec.
func MRoPEAxes(s *spec.Spec) int { return len(s.MRoPESection) }

// MRoPEApply returns, in float64, x rotated by multimodal RoPE: x is
// [token][head][HeadDim] with len(pos)/Axes tokens, pos token-major
// (pos[t·Axes+a] is token t's position on axis a). Pair i of every head of
// token t turns by pos[t·Axes+a_i]·ω_i, a_i and ω_i as HF assigns them (see
// above), cos and sin times the attention factor; inverse negates the
// angle. Dims ≥ RotaryDim are copied.
func MRoPEApply(s *spec.Spec, x []float32, pos []int32, heads int, inverse bool) []float64 {
	n := MRoPEAxes(s)
	hd := s.HeadDim
	if n == 0 || len(pos)%n != 0 || len(x) != len(pos)/n*heads*hd {
		panic("verify: MRoPEApply: shapes do not match")
	}
	w := RoPEFrequencies(s, 0)
	axis := mropeFreqIndexAxes(s)
	attn := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	c := make([]float64, len(w))
	sn := make([]float64, len(w))
	for t := range len(pos) / n {
		for i, omega := range w {
			si, ci := math.Sincos(float64(pos[t*n+axis[i]]) * omega)
			if inverse {
				si = -si
			}
			c[i], sn[i] = attn*ci, attn*si
		}
		for h := range heads {
			row := y[(t*heads+h)*hd : (t*heads+h+1)*hd]
			for i := range w {
				x0, x1 := row[pa[i]], row[pb[i]]
				row[pa[i]] = x0*c[i] - x1*sn[i]
				row[pb[i]] = x1*c[i] + x0*sn[i]
			}
		}
	}
	return y
}
