package consts

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// Derive computes the constants of a parsed (defaulted and validated) spec.
func Derive(s *spec.Spec) (*Set, error) {
	c := &Set{Spec: s}
	var err error
	switch s.Encoding {
	case spec.RoPE:
		err = deriveRoPE(c)
	case spec.ALiBi, spec.RPEBias:
		err = deriveBias(c)
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned, spec.Mixture:
		err = deriveAbsolute(c)
	case spec.RPEFull:
		err = deriveRPEFull(c)
	case spec.XL:
		err = deriveXL(c)
	default:
		err = fmt.Errorf("encoding %q is not supported by the generator yet", s.Encoding)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	return c, nil
}
