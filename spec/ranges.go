package spec

import (
	"fmt"
	"math"
)

// Range rules on derived constants (docs/spec.md, "Limits"): every RoPE
// frequency lies in [MinNormal32, MaxFrequency], every attention factor in
// [MinAttention, MaxAttention], every ALiBi slope in [MinNormal32, MaxSlope], and the CUDA
// constant tables fit CUDAConstBytes. The frequencies are bounded from the
// extreme base frequencies, with math.Pow: a margin of an ulp is
// immaterial next to the bounds.

// maxCallLen is the largest sequence length a call can see: max(pos)+1 for
// an int32 position.
const maxCallLen = 1 << 31

// freqsOK reports whether ω in [lo, hi] lies in [MinNormal32, MaxFrequency];
// otherwise it fails at path, saying which constant (what) broke the range.
func (d *decoder) freqsOK(lo, hi float64, path, what string) bool {
	switch {
	case !(hi <= MaxFrequency):
		d.fail(d.line(path), path, "%s include %.3g rad/token, above %d: the float64 angle p·ω at positions up to 2^31 would lose the verified precision", what, hi, MaxFrequency)
	case !(lo >= MinNormal32):
		d.fail(d.line(path), path, "%s include %.3g rad/token, below the least normal float32 2^−126 (%.3g): the frequencies are stored as float32", what, lo, MinNormal32)
	default:
		return true
	}
	return false
}

// normal32 requires v to lie in [MinNormal32, hi] at path; why says what
// the upper bound protects.
func (d *decoder) normal32(v, hi float64, path, what, why string) bool {
	if v >= MinNormal32 && v <= hi {
		return true
	}
	d.fail(d.line(path), path, "%s %.6g must be in [2^−126, %.6g]: %s", what, v, hi, why)
	return false
}

// ropeRanges checks the frequencies and attention factor a validated rope
// spec derives (lo = base^(−(R−2)/R) is the smallest base frequency, 1 the
// largest).
func (d *decoder) ropeRanges(s *Spec) {
	r := float64(s.RotaryDim)
	lo := math.Pow(s.Base, -(r-2)/r)
	if !d.freqsOK(lo, 1, "base", "the base frequencies base^(−2i/rotary_dim)") {
		return
	}
	sc := s.Scaling
	if sc == nil {
		return
	}
	const fp = "scaling.factor"
	f := sc.Factor
	switch sc.Type {
	case ScaleLinear:
		d.freqsOK(lo/f, 1/f, fp, "the frequencies ω_i/factor")
	case ScaleNTK:
		if nb := s.Base * math.Pow(f, r/(r-2)); math.IsInf(nb, 0) {
			d.fail(d.line(fp), fp, "the NTK base base·factor^(R/(R−2)) overflows float64")
			return
		}
		d.freqsOK(math.Min(1, lo/f), math.Max(1, lo/f), fp, "the NTK-scaled frequencies")
	case ScaleDynamic:
		// The run-time base grows with the call length L; at L = 2^31 it is
		// base·g^(R/(R−2)), g = factor·L/original − (factor−1).
		g := 1 + f*(maxCallLen/float64(sc.OriginalMaxPosition)-1)
		if g < 1 {
			g = 1
		}
		if nb := s.Base * math.Pow(g, r/(r-2)); math.IsInf(nb, 0) {
			d.fail(d.line(fp), fp, "the dynamic NTK base at a call length of 2^31 overflows float64")
			return
		}
		d.freqsOK(lo/g, 1, fp, "the dynamic NTK frequencies at a call length of 2^31")
	case ScaleYaRN, ScaleLlama3:
		// Every frequency lies between ω_i/factor and ω_i.
		if d.freqsOK(math.Min(lo, lo/f), math.Max(1, 1/f), fp, "the frequencies between ω_i/factor and ω_i") && sc.Type == ScaleYaRN {
			d.attention(yarnAttention(sc), sc)
		}
	case ScaleLongRoPE:
		for _, l := range []struct {
			path string
			ext  []float64
		}{{"scaling.short_factor", sc.ShortFactor}, {"scaling.long_factor", sc.LongFactor}} {
			for i, e := range l.ext {
				w := math.Pow(s.Base, -2*float64(i)/r) / e
				if !d.freqsOK(w, w, fmt.Sprintf("%s[%d]", l.path, i), fmt.Sprintf("the frequencies ω_%d/%s[%d]", i, l.path[len("scaling."):], i)) {
					return
				}
			}
		}
		a := 1.0
		if sc.HasAttentionFactor {
			a = sc.AttentionFactor
		} else if f > 1 {
			a = math.Sqrt(1 + math.Log(f)/math.Log(float64(sc.OriginalMaxPosition)))
		}
		d.attention(a, sc)
	}
}

// yarnAttention is YaRN's attention factor as gen/rope derives it (Hugging
// Face _compute_yarn_parameters): given, the mscale ratio, or
// 0.1·ln(factor)+1 for factor > 1.
func yarnAttention(sc *Scaling) float64 {
	m := func(m float64) float64 {
		if sc.Factor <= 1 {
			return 1
		}
		return 0.1*m*math.Log(sc.Factor) + 1
	}
	switch {
	case sc.HasAttentionFactor:
		return sc.AttentionFactor
	case sc.HasMscale && sc.HasMscaleAllDim:
		return m(sc.Mscale) / m(sc.MscaleAllDim)
	}
	return m(1)
}

// attention requires the attention factor a to be a normal float32, naming
// attention_factor when given, else the key it was derived from.
func (d *decoder) attention(a float64, sc *Scaling) {
	p := "scaling.factor"
	switch {
	case sc.HasAttentionFactor:
		p = "scaling.attention_factor"
	case sc.HasMscale && sc.HasMscaleAllDim:
		p = "scaling.mscale"
	}
	if !(a >= MinAttention && a <= MaxAttention) {
		d.fail(d.line(p), p, "the attention factor %.6g must be in [2^−64, 2^64]: it multiplies every output, which must stay a normal float32", a)
	}
}

// cudaConst requires the constant tables of the CUDA file to fit
// CUDAConstBytes: n entries of size bytes each, sized by the field at path.
func (d *decoder) cudaConst(n, size int, path, what string) bool {
	if n*size <= CUDAConstBytes {
		return true
	}
	d.fail(d.line(path), path, "%s (%d × %d bytes) exceeds CUDA's %d KiB of constant memory; at most %d entries",
		what, n, size, CUDAConstBytes>>10, CUDAConstBytes/size)
	return false
}
