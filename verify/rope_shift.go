package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// RoPEShift returns, in float64, x ([token][head][HeadDim], tokens =
// len(x)/(heads·HeadDim)) rotated by the angle delta·ω_i for every pair,
// ω from RoPEFrequencies(s, seqLen), without the attention factor: the
// rotation that moves a cached key by delta positions (RoFormer's
// R(a)·R(b) = R(a+b); ggml's context shift). Dims ≥ RotaryDim are copied.
func RoPEShift(s *spec.Spec, x []float32, delta int32, heads, seqLen int) []float64 {
	hd := s.HeadDim
	if heads < 1 || len(x)%(heads*hd) != 0 {
		panic("verify: RoPEShift: len(x) is not a multiple of heads·HeadDim")
	}
	w := RoPEFrequencies(s, seqLen)
	pa, pb := RoPEPairs(s)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	for o := 0; o < len(y); o += hd {
		for i, omega := range w {
			sn, cs := math.Sincos(float64(delta) * omega)
			x0, x1 := y[o+pa[i]], y[o+pb[i]]
			y[o+pa[i]] = x0*cs - x1*sn
			y[o+pb[i]] = x1*cs + x0*sn
		}
	}
	return y
}
