package rope

import (
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// Backends are rope's backends: assembly and CUDA.
var Backends = family.Backends{Assembly: true, CUDA: true}

// Family is the RoPE family (one member, rope).
var Family = family.Family{
	Name:     "rope",
	Backends: func(string) family.Backends { return Backends },
	Summary:  summary,
	Derive:   func(s *spec.Spec) (family.Derived, error) { return derive(s) },
}

// Input is the spec c was derived from.
func (c *Consts) Input() *spec.Spec { return c.Spec }
