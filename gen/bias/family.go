// Package bias is the attention-bias family: alibi (Press et al., "Train
// Short, Test Long", 2022) and rpe_bias (learned per-bucket biases, the
// clamp rule or T5's buckets). It holds the derived slopes and bucket maps,
// the Go emitter, the CUDA template data, and the explain and list text.
package bias

import (
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// Family is the bias family (members alibi and rpe_bias).
var Family = family.Family{
	Name:     "bias",
	Backends: func(string) family.Backends { return Backends },
	Summary:  summary,
	Derive:   func(s *spec.Spec) (family.Derived, error) { return derive(s) },
}

// Input is the spec c was derived from.
func (c *Consts) Input() *spec.Spec { return c.Spec }
