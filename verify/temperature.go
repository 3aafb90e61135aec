package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// TemperatureScale is the float64 reference of Llama 4's query temperature
// at position p (transformers models/llama4/modeling_llama4.py,
// Llama4TextAttention.forward, on the NoPE layers when
// attn_temperature_tuning is set):
//
//	s(p) = log1p(floor((p + 1) / floor_scale)) · attn_scale + 1
//
// with the floor taken exactly in integers (p + 1 ≤ 2^31 for an int32
// position). HF evaluates it in float32 from cache_position.float(), which
// is exact for p < 2^24 with a power-of-two floor_scale; posenc defines the
// exact value. A negative position (padding; HF's cache positions are never
// negative) gets s = 1, the value of positions 0 … floor_scale−2: the floor
// of a negative (p+1)/floor_scale would make log1p −Inf or NaN.
func TemperatureScale(a *spec.AttnTemperature, p int64) float64 {
	if p < 0 {
		return 1
	}
	n := (p + 1) / int64(a.FloorScale)
	return math.Log1p(float64(n))*a.AttnScale + 1
}

// TemperatureApply returns q, [len(pos)][heads·HeadDim], with every value
// of token t multiplied by TemperatureScale(pos[t]), in float64.
func TemperatureApply(s *spec.Spec, q []float32, pos []int32, heads int) []float64 {
	row := heads * s.HeadDim
	out := make([]float64, len(q))
	for t, p := range pos {
		f := TemperatureScale(s.AttnTemperature, int64(p))
		for j := t * row; j < (t+1)*row; j++ {
			out[j] = float64(q[j]) * f
		}
	}
	return out
}
