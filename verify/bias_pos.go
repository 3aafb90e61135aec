package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// The position forms of the bias functions (SoftmaxPos, AddBiasPos,
// BiasPos): query row i sits at position qpos[i] ≥ 0, key j at kpos[j]
// (kpos[j] < 0: a padding key), and the buffers are [nh][lq][lk] for the
// model's heads h0 … h0+nh−1.

// PosBias returns the bias [nh][len(qpos)][len(kpos)] of the heads
// [h0, h0+nh): alibi −slope_h·|qpos[i]−kpos[j]| (Press et al. 2022),
// rpe_bias table[h][RPEBucket(qpos[i]−kpos[j])]; 0 for padding keys. It is
// unmasked otherwise (PosMask gives the mask), as BiasPos.
func PosBias(s *spec.Spec, table []float32, qpos, kpos []int32, h0, nh int) []float64 {
	lq, lk := len(qpos), len(kpos)
	out := make([]float64, nh*lq*lk)
	var sl []float64
	if s.Encoding == spec.ALiBi {
		sl = ALiBiSlopes(s)
	}
	nb := s.NumBuckets()
	for t := range nh {
		h := h0 + t
		for i, q := range qpos {
			for j, p := range kpos {
				if p < 0 {
					continue
				}
				rel := int64(q) - int64(p)
				x := (t*lq+i)*lk + j
				if sl != nil {
					out[x] = -sl[h] * math.Abs(float64(rel))
				} else {
					out[x] = float64(table[h*nb+RPEBucket(s, int(rel))])
				}
			}
		}
	}
	return out
}

// PosMask masks padding keys (kpos[j] < 0) and, for causal ALiBi, keys after
// their query (kpos[j] > qpos[i]).
func PosMask(s *spec.Spec, qpos, kpos []int32) Mask {
	causal := s.Encoding == spec.ALiBi && s.Causal
	return func(_, i, j int) bool {
		return kpos[j] < 0 || (causal && kpos[j] > qpos[i])
	}
}
