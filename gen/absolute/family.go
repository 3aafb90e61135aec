// Package absolute is the absolute-encoding family: sinusoidal, learned,
// algebraic, binary and mixture, each adding PE(pos) to a [tokens][d_model]
// input. It holds the derived divisors and bit counts, the Go emitter, the
// CUDA template data, and the explain and list text.
package absolute

import (
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// Family is the absolute family.
var Family = family.Family{
	Name:     "absolute",
	Backends: func(enc string) family.Backends { return memberOf(&spec.Spec{Encoding: enc}).backends() },
	Summary:  summary,
	Derive:   func(s *spec.Spec) (family.Derived, error) { return derive(s) },
}

// Input is the spec c was derived from.
func (c *Consts) Input() *spec.Spec { return c.Spec }
