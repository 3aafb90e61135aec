// Package verify is posenc's independent float64 reference for every
// positional encoding a spec can describe, plus the harness that runs a
// generated package's kernels against it (RunRoPE, RunBias, RunAbsolute,
// Emit) and against the golden cases in testdata/golden.
//
// The reference is written from the published math and shares no code with
// the generator (it imports only package spec):
//   - RoPE: Su et al., RoFormer; the scalings follow Hugging Face
//     transformers modeling_rope_utils.py (_compute_linear_scaling_rope_parameters,
//     _compute_dynamic_ntk_parameters, _compute_yarn_parameters,
//     _compute_llama3_parameters, _compute_longrope_parameters); the layouts
//     are rope_rotation of Géron's appendix D notebook (interleaved;
//     github.com/ageron/handson-mlp, Appendix_D_relative_positional_encoding.ipynb)
//     and Hugging Face transformers' rotate_half (half, GPT-NeoX/Llama).
//   - ALiBi: Press et al. 2022, "Train Short, Test Long", get_slopes; the
//     notebook's get_alibi_biases.
//   - Relative-position biases: the notebook's gather_biases (clamp rule,
//     Shaw et al. 2018) and Hugging Face T5Attention._relative_position_bucket
//     (T5 rule, Raffel et al. 2020).
//   - Absolute encodings: Vaswani et al. 2017 (sinusoidal) and the formulas
//     of docs/design (algebraic, binary, mixture).
//
// Every function expects a spec as returned by spec.Parse, with every
// default applied.
package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// rotaryDim is the spec's rotary dimension R (HeadDim when not set).
func rotaryDim(s *spec.Spec) int {
	if s.RotaryDim > 0 {
		return s.RotaryDim
	}
	return s.HeadDim
}

// ropeBase is the spec's rope_theta (10000 when not set).
func ropeBase(s *spec.Spec) float64 {
	if s.Base > 0 {
		return s.Base
	}
	return 10000
}

// unscaledFrequencies returns ω_i = base^(−2i/R) for i < R/2, the
// inv_freq of modeling_rope_utils._compute_default_rope_parameters
// (1 / base^(arange(0, dim, 2)/dim)).
func unscaledFrequencies(base float64, r int) []float64 {
	w := make([]float64, r/2)
	for i := range w {
		w[i] = 1 / math.Pow(base, float64(2*i)/float64(r))
	}
	return w
}

// RoPEFrequencies returns the effective rotation frequencies ω_i (i <
// RotaryDim/2) that a call whose largest position is seqLen−1 uses, after
// the spec's scaling, computed in float64 as in Hugging Face
// modeling_rope_utils.py with dim = RotaryDim:
//
//   - none:     ω_i = base^(−2i/R)
//   - linear:   ω_i / factor (_compute_linear_scaling_rope_parameters)
//   - ntk:      static NTK-aware base' = base·factor^(R/(R−2))
//   - dynamic:  when seqLen > original_max_position,
//     base' = base·(factor·seqLen/omp − (factor−1))^(R/(R−2))
//     (_compute_dynamic_ntk_parameters); otherwise unscaled
//   - yarn:     _compute_yarn_parameters: correction range from beta_fast
//     and beta_slow (floored/ceiled when truncate), clamped to [0, R−1],
//     linear ramp over R/2 (min == max → max+0.001), blend of ω/factor
//     (interpolation) and ω (extrapolation)
//   - llama3:   _compute_llama3_parameters (wavelength bands with a smooth
//     interpolation between low_freq_factor and high_freq_factor)
//   - longrope: ω_i = 1/(ext_i·base^(2i/R)), ext = long_factor when seqLen >
//     original_max_position, else short_factor (_compute_longrope_parameters)
//
// seqLen only matters for dynamic and longrope; 0 means "no runtime switch".
func RoPEFrequencies(s *spec.Spec, seqLen int) []float64 {
	if isMRoPEVision(s) {
		return mropeVisionFrequencies(s)
	}
	r := rotaryDim(s)
	base := ropeBase(s)
	sc := s.Scaling
	if sc == nil {
		return unscaledFrequencies(base, r)
	}
	dimRatio := float64(r) / float64(r-2)
	switch sc.Type {
	case spec.ScaleLinear:
		w := unscaledFrequencies(base, r)
		for i := range w {
			w[i] /= sc.Factor
		}
		return w
	case spec.ScaleNTK:
		return unscaledFrequencies(base*math.Pow(sc.Factor, dimRatio), r)
	case spec.ScaleDynamic:
		omp := float64(sc.OriginalMaxPosition)
		if seqLen > sc.OriginalMaxPosition {
			b := base * math.Pow(sc.Factor*float64(seqLen)/omp-(sc.Factor-1), dimRatio)
			return unscaledFrequencies(b, r)
		}
		return unscaledFrequencies(base, r)
	case spec.ScaleYaRN:
		return yarnFrequencies(s, base, r)
	case spec.ScaleLlama3:
		return llama3Frequencies(sc, unscaledFrequencies(base, r))
	case spec.ScaleLongRoPE:
		ext := sc.ShortFactor
		if seqLen > sc.OriginalMaxPosition {
			ext = sc.LongFactor
		}
		w := make([]float64, r/2)
		for i := range w {
			w[i] = 1 / (ext[i] * math.Pow(base, float64(2*i)/float64(r)))
		}
		return w
	}
	panic("verify: unknown RoPE scaling type " + sc.Type)
}

// yarnFrequencies follows _compute_yarn_parameters of modeling_rope_utils.py.
func yarnFrequencies(s *spec.Spec, base float64, r int) []float64 {
	sc := s.Scaling
	dim := float64(r)
	omp := float64(sc.OriginalMaxPosition)
	// find_correction_dim: the dimension index at which a frequency makes
	// numRotations full turns over the original context.
	corrDim := func(numRotations float64) float64 {
		return dim * math.Log(omp/(numRotations*2*math.Pi)) / (2 * math.Log(base))
	}
	// find_correction_range
	low, high := corrDim(sc.BetaFast), corrDim(sc.BetaSlow)
	if sc.Truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low = math.Max(low, 0)
	high = math.Min(high, dim-1)
	// linear_ramp_factor
	if low == high {
		high += 0.001
	}
	w := make([]float64, r/2)
	for i := range w {
		ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
		extrapolation := 1 - ramp // inv_freq_extrapolation_factor
		omega := 1 / math.Pow(base, float64(2*i)/dim)
		w[i] = omega/sc.Factor*(1-extrapolation) + omega*extrapolation
	}
	return w
}

// llama3Frequencies follows _compute_llama3_parameters of
// modeling_rope_utils.py, applied to the unscaled ω. An empty band
// (low_freq_factor == high_freq_factor, Llama 4 Scout) leaves only the two
// torch.where cases: wavelengths below omp/low kept, above it divided by
// factor; a wavelength on the edge, where HF's smoothing is 0/0 = NaN, is
// refused by spec.Parse.
func llama3Frequencies(sc *spec.Scaling, w []float64) []float64 {
	old := float64(sc.OriginalMaxPosition)
	lowFreqWavelen := old / sc.LowFreqFactor
	highFreqWavelen := old / sc.HighFreqFactor
	for i, omega := range w {
		wavelen := 2 * math.Pi / omega
		switch {
		case wavelen < highFreqWavelen: // high frequency: unchanged
		case wavelen > lowFreqWavelen: // low frequency: interpolated
			w[i] = omega / sc.Factor
		default: // medium: smooth blend
			smooth := (old/wavelen - sc.LowFreqFactor) / (sc.HighFreqFactor - sc.LowFreqFactor)
			w[i] = (1-smooth)*omega/sc.Factor + smooth*omega
		}
	}
	return w
}

// yarnMscale is get_mscale of _compute_yarn_parameters:
// 0.1·m·ln(scale) + 1 for scale > 1, else 1.
func yarnMscale(scale, m float64) float64 {
	if scale <= 1 {
		return 1
	}
	return 0.1*m*math.Log(scale) + 1
}

// RoPEAttentionFactor returns A, the factor Hugging Face multiplies cos and
// sin by: 1 except for
//   - yarn (_compute_yarn_parameters): attention_factor when given; else,
//     when mscale and mscale_all_dim are both given and non-zero (Python
//     truthiness), get_mscale(factor, mscale)/get_mscale(factor,
//     mscale_all_dim); else get_mscale(factor) = 0.1·ln(factor)+1 (1 for
//     factor ≤ 1);
//   - longrope (_compute_longrope_parameters): attention_factor when given;
//     else 1 for factor ≤ 1, else √(1 + ln factor / ln original_max_position).
func RoPEAttentionFactor(s *spec.Spec) float64 {
	sc := s.Scaling
	if sc == nil {
		return 1
	}
	switch sc.Type {
	case spec.ScaleYaRN:
		if sc.HasAttentionFactor {
			return sc.AttentionFactor
		}
		if sc.HasMscale && sc.Mscale != 0 && sc.HasMscaleAllDim && sc.MscaleAllDim != 0 {
			return yarnMscale(sc.Factor, sc.Mscale) / yarnMscale(sc.Factor, sc.MscaleAllDim)
		}
		return yarnMscale(sc.Factor, 1)
	case spec.ScaleLongRoPE:
		if sc.HasAttentionFactor {
			return sc.AttentionFactor
		}
		if sc.Factor <= 1 {
			return 1
		}
		return math.Sqrt(1 + math.Log(sc.Factor)/math.Log(float64(sc.OriginalMaxPosition)))
	}
	return 1
}

// CallSeqLen is the seq_len a RoPE call derives from its positions:
// max(pos)+1 (HF's dynamic_rope_update / longrope switch), 0 for no tokens.
func CallSeqLen(pos []int32) int {
	if len(pos) == 0 {
		return 0
	}
	m := int(pos[0])
	for _, p := range pos[1:] {
		m = max(m, int(p))
	}
	return m + 1
}

// RoPEPairs returns the index pairs (a_i, b_i), i < RotaryDim/2, that RoPE
// rotates within one head: (i, i+R/2) for the half layout (Hugging
// Face transformers' rotate_half) and (2i, 2i+1) for interleaved (Géron's
// rope_rotation, RoFormer's pairing).
func RoPEPairs(s *spec.Spec) (a, b []int) {
	r := rotaryDim(s)
	n := r / 2
	a, b = make([]int, n), make([]int, n)
	for i := range n {
		if s.Layout == spec.LayoutInterleaved {
			a[i], b[i] = 2*i, 2*i+1
		} else {
			a[i], b[i] = i, i+n
		}
	}
	return a, b
}

// RoPEApply returns, in float64, x rotated by RoPE: x is [token][head][HeadDim]
// with len(pos) tokens and heads heads. Pair i of every head of token t turns
// by the angle pos[t]·ω_i (computed as a float64 product and evaluated with
// math.Sincos), with ω from RoPEFrequencies(s, max(pos)+1), and both cos and
// sin are multiplied by RoPEAttentionFactor(s):
//
//	y_a = A·(x_a·cos θ − x_b·sin θ),  y_b = A·(x_b·cos θ + x_a·sin θ).
//
// inverse rotates by −θ (the backward pass). Dims ≥ RotaryDim are copied.
func RoPEApply(s *spec.Spec, x []float32, pos []int32, heads int, inverse bool) []float64 {
	hd := s.HeadDim
	if len(x) != len(pos)*heads*hd {
		panic("verify: RoPEApply: len(x) does not match tokens·heads·HeadDim")
	}
	w := RoPEFrequencies(s, CallSeqLen(pos))
	attn := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	c := make([]float64, len(w))
	sn := make([]float64, len(w))
	for t, p := range pos {
		for i, omega := range w {
			si, ci := math.Sincos(float64(p) * omega)
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
