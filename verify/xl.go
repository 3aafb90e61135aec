package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// The xl reference: Dai et al., "Transformer-XL: Attentive Language Models
// Beyond a Fixed-Length Context" (2019), section 3.3, per head, as naive
// float64 loops. With the content and position projections folded into the
// caller's inputs, terms (a)+(c) and (b)+(d) of A^rel become
//
//	A_ij = (q_i + u) · k_j + (q_i + v) · r_{qOffset+i−j}
//
// (no 1/√HeadDim scale), where r_rel is the caller's projected encoding of
// distance rel, passed as [lq+lk−1][HeadDim] rows with row m holding
// rel = qOffset+lq−1−m; R, the unprojected encoding, is the sinusoid of
// Vaswani et al. 2017 (§3.5), interleaved: R_d[2i] = sin(d/base^(2i/HeadDim)),
// R_d[2i+1] = cos(d/base^(2i/HeadDim)).

// XLRelative returns the sinusoidal R table for distances n−1 down to 0:
// [n][HeadDim], row m holding distance n−1−m, in float64.
func XLRelative(s *spec.Spec, n int) []float64 {
	d := s.HeadDim
	out := make([]float64, n*d)
	for m := range n {
		dist := float64(n - 1 - m)
		for i := 0; 2*i < d; i++ {
			a := dist / math.Pow(s.Base, float64(2*i)/float64(d))
			out[m*d+2*i] = math.Sin(a)
			if 2*i+1 < d {
				out[m*d+2*i+1] = math.Cos(a)
			}
		}
	}
	return out
}

// XLScores returns A [lq][lk]: A_ij = (q_i+u)·k_j + (q_i+v)·r_row, row =
// lq−1−i+j (the row of distance qOffset+i−j).
func XLScores(s *spec.Spec, q, k, r, u, v []float32, lq, lk, qOffset int) []float64 {
	a, _ := xlScores(s, q, k, r, u, v, lq, lk)
	return a
}

// xlScores returns the scores and, per element, the magnitude sum
// Σ_d (|q_d|+|u_d|)·|k_d| + (|q_d|+|v_d|)·|r_d| that bounds their rounding
// error. The scores do not depend on qOffset: it only names the distances
// of r's rows.
func xlScores(s *spec.Spec, q, k, r, u, v []float32, lq, lk int) (a, mag []float64) {
	d := s.HeadDim
	a = make([]float64, lq*lk)
	mag = make([]float64, lq*lk)
	for i := range lq {
		for j := range lk {
			row := lq - 1 - i + j
			var sum, m float64
			for x := range d {
				qv := float64(q[i*d+x])
				uv, vv := float64(u[x]), float64(v[x])
				kv, rv := float64(k[j*d+x]), float64(r[row*d+x])
				sum += (qv+uv)*kv + (qv+vv)*rv
				m += (math.Abs(qv)+math.Abs(uv))*math.Abs(kv) + (math.Abs(qv)+math.Abs(vv))*math.Abs(rv)
			}
			a[i*lk+j] = sum
			mag[i*lk+j] = m
		}
	}
	return a, mag
}
