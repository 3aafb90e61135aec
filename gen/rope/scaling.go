package rope

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/gen/exactmath"
	"github.com/posenc/posenc/spec"
)

// BaseFreqs returns the unscaled rotary frequencies ω_i = 1/base^(2i/dim),
// i < dim/2, computed as Hugging Face's _compute_default_rope_parameters
// does (inv_freq = 1.0 / base ** (arange(0, dim, 2) / dim)). The generated
// code uses the same expression for its run-time rescaling, so baked and
// run-time frequencies agree bit for bit.
func BaseFreqs(base float64, dim int) []float64 {
	f := make([]float64, dim/2)
	for i := range f {
		f[i] = 1 / exactmath.Pow(base, float64(2*i)/float64(dim))
	}
	return f
}

// NTKBase is the NTK-aware base base·factor^(dim/(dim−2)).
func NTKBase(base, factor float64, dim int) float64 {
	return base * exactmath.Pow(factor, float64(dim)/float64(dim-2))
}

// yarnMscale is get_mscale from Hugging Face's _compute_yarn_parameters
// (YaRN paper, Peng et al. 2023, eq. for √(1/t) = 0.1·ln s + 1, with
// DeepSeek's extra mscale multiplier): 0.1·m·ln(scale) + 1 for scale > 1,
// else 1.
func yarnMscale(scale, m float64) float64 {
	if scale <= 1 {
		return 1
	}
	return float64(0.1*m*exactmath.Log(scale)) + 1 // float64(): no fused multiply-add on any GOARCH
}

// yarn follows Hugging Face's _compute_yarn_parameters ("YaRN: Efficient
// Context Window Extension of Large Language Models", Peng et al. 2023,
// §3.2 "NTK-by-parts" and §3.4 the attention temperature).
func yarn(base float64, dim int, sc *spec.Scaling) ([]float64, float64) {
	factor := sc.Factor
	var attn float64
	switch {
	case sc.HasAttentionFactor:
		attn = sc.AttentionFactor
	case sc.HasMscale && sc.HasMscaleAllDim && sc.Mscale != 0 && sc.MscaleAllDim != 0:
		// `if mscale and mscale_all_dim`: both present and non-zero.
		attn = yarnMscale(factor, sc.Mscale) / yarnMscale(factor, sc.MscaleAllDim)
	default:
		attn = yarnMscale(factor, 1)
	}

	// find_correction_dim: the dimension whose wavelength completes
	// numRotations turns over original_max_position tokens.
	omp := float64(sc.OriginalMaxPosition)
	d := float64(dim)
	correctionDim := func(numRotations float64) float64 {
		return d * exactmath.Log(omp/(numRotations*2*math.Pi)) / (2 * exactmath.Log(base))
	}
	// find_correction_range(beta_fast, beta_slow, ...), optionally
	// truncated to whole dimensions, clamped to [0, dim−1].
	low, high := correctionDim(sc.BetaFast), correctionDim(sc.BetaSlow)
	if sc.Truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = math.Max(low, 0), math.Min(high, d-1)
	// linear_ramp_factor(low, high, dim//2): a zero-width ramp is widened
	// by 0.001 to avoid dividing by zero.
	if low == high {
		high += 0.001
	}

	f := make([]float64, dim/2)
	for i := range f {
		posFreq := exactmath.Pow(base, float64(2*i)/d)
		extrapolation := 1 / posFreq
		interpolation := 1 / (factor * posFreq)
		ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
		extrapolationFactor := 1 - ramp
		// float64() on each product: Go may fuse x*y + z into one FMA on some
		// GOARCHes, and generated constants must not depend on the host.
		f[i] = float64(interpolation*(1-extrapolationFactor)) + float64(extrapolation*extrapolationFactor)
	}
	return f, attn
}

// llama3 follows Hugging Face's _compute_llama3_parameters (Llama 3.1's
// apply_scaling): wavelengths shorter than omp/high_freq_factor are kept,
// longer than omp/low_freq_factor are divided by factor, and those between
// are interpolated with smooth = (omp/wavelen − low)/(high − low). With
// low_freq_factor == high_freq_factor (Llama 4 Scout) the band is empty:
// every wavelength below omp/low is kept and every one above it divided,
// as torch.where does in HF; spec.Parse rejects a wavelength on the edge
// itself (HF's smoothing divides 0 by 0 there); llama3 returns an error
// if the smoothing branch meets high == low all the same.
func llama3(base float64, dim int, sc *spec.Scaling) ([]float64, error) {
	f := BaseFreqs(base, dim)
	omp := float64(sc.OriginalMaxPosition)
	lowWavelen := omp / sc.LowFreqFactor
	highWavelen := omp / sc.HighFreqFactor
	for i, w := range f {
		wavelen := 2 * math.Pi / w
		switch {
		case wavelen < highWavelen:
			// high frequency: unchanged
		case wavelen > lowWavelen:
			f[i] = w / sc.Factor
		case sc.HighFreqFactor == sc.LowFreqFactor:
			return nil, fmt.Errorf("rope: llama3 scaling: pair %d's wavelength %v is the edge of the empty band low_freq_factor = high_freq_factor = %v (HF's smoothing would be 0/0)", i, wavelen, sc.LowFreqFactor)
		default:
			smooth := (omp/wavelen - sc.LowFreqFactor) / (sc.HighFreqFactor - sc.LowFreqFactor)
			f[i] = float64((1-smooth)*w/sc.Factor) + float64(smooth*w) // no FMA fusion (see yarn)
		}
	}
	return f, nil
}

// longrope follows Hugging Face's _compute_longrope_parameters: one
// extension factor per frequency, ω_i = 1/(ext_i·base^(2i/dim)).
func longrope(base float64, dim int, ext []float64, name string) ([]float64, error) {
	if len(ext) != dim/2 {
		return nil, fmt.Errorf("rope: longrope scaling.%s has %d entries, want rotary_dim/2 = %d", name, len(ext), dim/2)
	}
	f := make([]float64, dim/2)
	for i := range f {
		if !(ext[i] > 0) {
			return nil, fmt.Errorf("rope: longrope scaling.%s[%d] = %v must be > 0", name, i, ext[i])
		}
		f[i] = 1 / (ext[i] * exactmath.Pow(base, float64(2*i)/float64(dim)))
	}
	return f, nil
}

// longropeAttention is LongRoPE's attention factor (Hugging Face
// _compute_longrope_parameters, as in Phi-3): the given attention_factor,
// else √(1 + ln factor / ln original_max_position) when factor > 1, else 1.
func longropeAttention(sc *spec.Scaling) float64 {
	if sc.HasAttentionFactor {
		return sc.AttentionFactor
	}
	if sc.Factor <= 1 {
		return 1
	}
	return math.Sqrt(1 + exactmath.Log(sc.Factor)/exactmath.Log(float64(sc.OriginalMaxPosition)))
}
