package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// This file holds what `posenc plot -kind error` needs from the reference:
// the RoPE verification bound (docs/design) as a function of position, the
// error measure that bound applies to, and a deliberately naive
// float32-angle RoPE to compare a generated kernel with.

// RoPEBound returns the relative RoPE error bound of docs/design at
// position p: 1e-6 for |p| ≤ 2^20 and 1e-5 beyond. A rotated element
// passes when |y − ref| ≤ RoPEBound(p)·(|x0|+|x1|)·A (see
// RoPERelativeError).
func RoPEBound(p int64) float64 { return ropeTol(p) }

// RoPERelativeError returns the largest error of y, a rotated copy of x
// ([token][heads][HeadDim] with len(pos) tokens), against ref (RoPEApply of
// the same x and positions) in the units of that bound: over every
// rotated pair (x0, x1) of every head and token, max(|y0 − ref0|,
// |y1 − ref1|) / ((|x0|+|x1|)·A), with A = RoPEAttentionFactor(s). Pairs
// with x0 = x1 = 0 are skipped, and so are the dims from RotaryDim on (the
// harness checks that they are copied bit for bit). A value ≤
// RoPEBound(p) at every position p is a pass.
func RoPERelativeError(s *spec.Spec, x, y []float32, ref []float64, pos []int32, heads int) float64 {
	hd := s.HeadDim
	if len(x) != len(pos)*heads*hd || len(y) != len(x) || len(ref) != len(x) {
		panic("verify: RoPERelativeError: lengths do not match tokens·heads·HeadDim")
	}
	a := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	worst := 0.0
	for t := range pos {
		for h := range heads {
			o := (t*heads + h) * hd
			for i := range pa {
				ia, ib := o+pa[i], o+pb[i]
				m := (math.Abs(float64(x[ia])) + math.Abs(float64(x[ib]))) * a
				if m == 0 {
					continue
				}
				e := math.Max(math.Abs(float64(y[ia])-ref[ia]), math.Abs(float64(y[ib])-ref[ib]))
				worst = math.Max(worst, e/m)
			}
		}
	}
	return worst
}

// RoPENaiveFP32 is the deliberately naive baseline that `posenc plot -kind
// error` draws beside a generated kernel: RoPE as most hand-written kernels
// compute it, entirely in float32. For every token and pair i it forms the
// angle as angle = float32(pos)·float32(ω_i) (a float32 product: ω_i rounded
// to float32, the position rounded to float32 above 2^24, the product
// rounded again), takes cos and sin of that float32 angle correctly rounded
// to float32 (times the attention factor A: the best a float32 sincos can
// do, so all of the error comes from the angle), and rotates in float32:
//
//	y_a = x_a·c − x_b·s,  y_b = x_b·c + x_a·s   (all float32).
//
// Frequencies and A are the reference's (RoPEFrequencies for the call's
// max(pos)+1, RoPEAttentionFactor), so the only difference from RoPEApply
// is float32 arithmetic. Its error grows with the position: at 2^31−1 the
// rounded angle is off by whole radians for the fastest pairs. It is not a
// reference and must not be used as one.
func RoPENaiveFP32(s *spec.Spec, x []float32, pos []int32, heads int) []float32 {
	hd := s.HeadDim
	if len(x) != len(pos)*heads*hd {
		panic("verify: RoPENaiveFP32: len(x) does not match tokens·heads·HeadDim")
	}
	w := RoPEFrequencies(s, CallSeqLen(pos))
	a := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	y := append([]float32(nil), x...)
	c := make([]float32, len(w))
	sn := make([]float32, len(w))
	for t, p := range pos {
		for i, omega := range w {
			angle := float32(p) * float32(omega)
			si, ci := math.Sincos(float64(angle))
			c[i], sn[i] = float32(a*ci), float32(a*si)
		}
		for h := range heads {
			row := y[(t*heads+h)*hd : (t*heads+h+1)*hd]
			for i := range w {
				x0, x1 := row[pa[i]], row[pb[i]]
				// Explicit conversions keep every product rounded to
				// float32 (no fused multiply-add).
				row[pa[i]] = float32(x0*c[i]) - float32(x1*sn[i])
				row[pb[i]] = float32(x1*c[i]) + float32(x0*sn[i])
			}
		}
	}
	return y
}
