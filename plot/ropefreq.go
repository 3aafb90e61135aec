package plot

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// freqSet is one set of RoPE frequencies ω_i (θ_i in RoFormer's notation),
// i < RotaryDim/2, with the legend label that says which.
type freqSet struct {
	label string
	w     []float64
}

// ropeContext is the context length the spec's scaling targets:
// factor·original_max_position for the types that have both, else
// max_position.
func ropeContext(s *spec.Spec) int {
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 && sc.Factor > 1 {
		return int(sc.Factor * float64(sc.OriginalMaxPosition))
	}
	return s.MaxPosition
}

// ropeFreqSets returns the unscaled frequencies base^(−2i/R) (RoFormer
// §3.2.2) and, when the spec has a scaling, the frequencies after it, from
// verify.RoPEFrequencies (Hugging Face modeling_rope_utils.py). The
// run-time switches get both sides: dynamic at seq_len = ropeContext (below
// original_max_position it is unscaled), longrope with its short and its long
// factors.
func ropeFreqSets(s *spec.Spec) []freqSet {
	unscaled := *s
	unscaled.Scaling = nil
	sets := []freqSet{{fmt.Sprintf("unscaled (base %.10g)", s.Base), verify.RoPEFrequencies(&unscaled, 0)}}
	sc := s.Scaling
	if sc == nil {
		return sets
	}
	switch sc.Type {
	case spec.ScaleDynamic:
		l := ropeContext(s)
		sets = append(sets, freqSet{fmt.Sprintf("dynamic, at %d tokens", l), verify.RoPEFrequencies(s, l)})
	case spec.ScaleLongRoPE:
		sets = append(sets,
			freqSet{"longrope, short factors", verify.RoPEFrequencies(s, 0)},
			freqSet{"longrope, long factors", verify.RoPEFrequencies(s, sc.OriginalMaxPosition+1)})
	default:
		sets = append(sets, freqSet{fmt.Sprintf("%s, factor %g", sc.Type, sc.Factor), verify.RoPEFrequencies(s, 0)})
	}
	return sets
}
