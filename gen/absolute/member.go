package absolute

import (
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// member is one encoding of the absolute family; the rest of the family
// switches on it, never on the encoding's name.
type member int

const (
	unknown    member = iota
	sinusoidal        // Vaswani et al. 2017: sin/cos pairs
	learned           // the caller's table
	algebraic         // p / (max_len−1)^(i/(d−1))
	binary            // the bits of p
	mixture           // α·sinusoidal + (1−α)·the caller's table
)

// memberOf returns s's member (unknown for an encoding outside the family).
func memberOf(s *spec.Spec) member {
	switch s.Encoding {
	case spec.Sinusoidal:
		return sinusoidal
	case spec.Learned:
		return learned
	case spec.Algebraic:
		return algebraic
	case spec.Binary:
		return binary
	case spec.Mixture:
		return mixture
	}
	return unknown
}

// backends are the member's backends: every member has CUDA kernels, all
// but mixture have assembly.
func (m member) backends() family.Backends {
	return family.Backends{Assembly: m != mixture, CUDA: true}
}

// wide reports whether the member's Add sums in float64 from a float64
// table (abi.AddRows64): algebraic, whose PE reaches 2^31 and loses up to
// half a float32 ulp of PE, more than the bound 2e-6, when x ≈ −PE
// cancels it. The others' PE is exact (binary) or at most 1 in magnitude
// (sinusoidal: half an ulp ≤ 3e-8), so a float32 table is enough.
func (m member) wide() bool { return m == algebraic }
