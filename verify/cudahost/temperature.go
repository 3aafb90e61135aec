package cudahost

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// temperatureOps is the driver's op case of a spec with attn_temperature:
// posenc_<name>_scale_q (none otherwise).
func temperatureOps(s *spec.Spec) []string {
	if s.AttnTemperature == nil {
		return nil
	}
	return []string{fmt.Sprintf("case %d: return posenc_%s_scale_q(F0, P0, NP, (int)I[0], 0);", opScaleQ, s.Name)}
}

// addTemperature sets k.ScaleQ to the launcher scale_q, checking lengths
// (and panicking on a mismatch, before the launch) as the generated Go
// ScaleQ does; nothing without attn_temperature.
func (l *Lib) addTemperature(k *verify.RoPEKernels) {
	s := l.spec
	if s.AttnTemperature == nil {
		return
	}
	k.ScaleQ = func(q []float32, pos []int32, heads int) {
		if heads < 1 {
			panic(fmt.Sprintf("cudahost: ScaleQ: heads = %d, want ≥ 1", heads))
		}
		checkLen("ScaleQ", "q", len(q), len(pos)*heads*s.HeadDim)
		l.mustCall("scale_q", opScaleQ, []int64{int64(heads)}, 0, [][]float32{q}, [][]int32{pos})
	}
}
