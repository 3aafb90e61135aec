package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// The rpe_full reference: Shaw, Uszkoreit and Vaswani, "Self-Attention with
// Relative Position Representations" (2018), eqs. (3)–(4), per head, written
// as naive float64 loops straight from the equations (as Table D-1 of the
// online appendix D of Géron's "Hands-On Machine Learning with Scikit-Learn
// and PyTorch" writes them):
//
//	e_ij = q_i · (k_j + a^K_{b(i,j)}) / √HeadDim
//	o_i  = Σ_j α_ij (v_j + a^V_{b(i,j)})
//
// with query i at position qOffset+i, key j at position j, and the row
// b(i,j) = clamp(qOffset+i−j, −(r_max−1), r_max−1) + r_max−1 of the learned
// [2·r_max−1][HeadDim] tables a^K and a^V. Vectors are [l][HeadDim] rows.

// RPEFullRow returns the table row of rel = query position − key position
// for an rpe_full spec: clamp(rel, −(r_max−1), r_max−1) + r_max−1.
func RPEFullRow(s *spec.Spec, rel int) int {
	m := s.RMax - 1
	return min(max(rel, -m), m) + m
}

// RPEFullScores returns e [lq][lk] (Shaw et al. 2018, eq. 4 with eq. 3's
// relative key term), including the 1/√HeadDim scale.
func RPEFullScores(s *spec.Spec, q, k, aK []float32, lq, lk, qOffset int) []float64 {
	e, _ := rpeFullScores(s, q, k, aK, lq, lk, qOffset)
	return e
}

// rpeFullScores returns the scores and, per element, the magnitude sum
// Σ_d |q_d|·(|k_d| + |a_d|) / √HeadDim that bounds their rounding error.
func rpeFullScores(s *spec.Spec, q, k, aK []float32, lq, lk, qOffset int) (e, mag []float64) {
	d := s.HeadDim
	inv := 1 / math.Sqrt(float64(d))
	e = make([]float64, lq*lk)
	mag = make([]float64, lq*lk)
	for i := range lq {
		for j := range lk {
			b := RPEFullRow(s, qOffset+i-j)
			var sum, m float64
			for x := range d {
				qv := float64(q[i*d+x])
				kv, av := float64(k[j*d+x]), float64(aK[b*d+x])
				sum += qv * (kv + av)
				m += math.Abs(qv) * (math.Abs(kv) + math.Abs(av))
			}
			e[i*lk+j] = sum * inv
			mag[i*lk+j] = m * inv
		}
	}
	return e, mag
}

// RPEFullOutput returns o [lq][HeadDim] (Shaw et al. 2018, eq. 3):
// o_i = Σ_j weights_ij (v_j + a^V_{b(i,j)}), weights [lq][lk].
func RPEFullOutput(s *spec.Spec, weights, v, aV []float32, lq, lk, qOffset int) []float64 {
	o, _ := rpeFullOutput(s, weights, v, aV, lq, lk, qOffset)
	return o
}

// rpeFullOutput returns the outputs and, per element, the magnitude sum
// Σ_j |α_ij|·(|v_jd| + |a_d|).
func rpeFullOutput(s *spec.Spec, weights, v, aV []float32, lq, lk, qOffset int) (o, mag []float64) {
	d := s.HeadDim
	o = make([]float64, lq*d)
	mag = make([]float64, lq*d)
	for i := range lq {
		for x := range d {
			var sum, m float64
			for j := range lk {
				b := RPEFullRow(s, qOffset+i-j)
				w := float64(weights[i*lk+j])
				vv, av := float64(v[j*d+x]), float64(aV[b*d+x])
				sum += w * (vv + av)
				m += math.Abs(w) * (math.Abs(vv) + math.Abs(av))
			}
			o[i*d+x] = sum
			mag[i*d+x] = m
		}
	}
	return o, mag
}
