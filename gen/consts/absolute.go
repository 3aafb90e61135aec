package consts

import (
	"fmt"

	"github.com/posenc/posenc/gen/exactmath"
	"github.com/posenc/posenc/spec"
)

// MixtureBase is the base of the sinusoidal half of the mixture encoding:
// seed 001's MixturePositionalEncoding uses the standard 10000.
const MixtureBase = 10000

// deriveAbsolute fills the parameters of the absolute encodings:
//
//   - sinusoidal (Vaswani et al. 2017, seed 001) and mixture's sinusoidal
//     half: PE(p, 2i) = sin(p/base^(2i/d)), PE(p, 2i+1) = cos(p/base^(2i/d));
//     AbsDivisors[i] = base^(2i/d) and AbsFreqs[i] = 1/AbsDivisors[i], one per
//     pair (⌈d/2⌉ pairs; an odd d ends with a lone sine);
//   - algebraic (seed 001): PE(p, i) = p / (max_len−1)^(i/(d−1));
//     AbsDivisors[i] = (max_len−1)^(i/(d−1)) (exponent 0 when d = 1);
//   - binary (seed 001): PE(p, i) = (p >> i) & 1 for i < BinBits =
//     min(d_model, bitlen(max_len)), 0 for the other dims;
//   - learned: the table is the caller's; nothing to derive.
func deriveAbsolute(c *Set) error {
	s := c.Spec
	d := s.DModel
	if d < 1 {
		return fmt.Errorf("d_model = %d, want ≥ 1", d)
	}
	if s.MaxLen < 1 {
		return fmt.Errorf("max_len = %d, want ≥ 1", s.MaxLen)
	}
	switch s.Encoding {
	case spec.Sinusoidal, spec.Mixture:
		base := s.Base
		if s.Encoding == spec.Mixture || base == 0 {
			base = MixtureBase
		}
		if !(base > 1) {
			return fmt.Errorf("base = %v, want > 1", base)
		}
		n := (d + 1) / 2
		c.AbsFreqs = make([]float64, n)
		c.AbsDivisors = make([]float64, n)
		for i := range n {
			div := exactmath.Pow(base, float64(2*i)/float64(d))
			c.AbsDivisors[i] = div
			c.AbsFreqs[i] = 1 / div
		}
	case spec.Algebraic:
		if s.MaxLen < 2 {
			return fmt.Errorf("algebraic: max_len = %d, want ≥ 2 (the formula divides by powers of max_len−1)", s.MaxLen)
		}
		c.AbsDivisors = make([]float64, d)
		for i := range d {
			e := 0.0
			if d > 1 {
				e = float64(i) / float64(d-1)
			}
			c.AbsDivisors[i] = exactmath.Pow(float64(s.MaxLen-1), e)
		}
	case spec.Binary:
		c.BinBits = min(d, bitLen(s.MaxLen))
	case spec.Learned:
	default:
		return fmt.Errorf("deriveAbsolute: encoding %q is not an absolute encoding", s.Encoding)
	}
	return nil
}
