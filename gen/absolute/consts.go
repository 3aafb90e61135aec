package absolute

import (
	"fmt"
	"math/bits"

	"github.com/posenc/posenc/gen/exactmath"
	"github.com/posenc/posenc/spec"
)

// Consts are the derived constants of one absolute-encoding spec.
type Consts struct {
	Spec *spec.Spec

	// AbsFreqs are the sinusoidal inverse frequencies 1/base^(2i/d), one
	// per pair (sinusoidal, mixture: ⌈d_model/2⌉ entries).
	AbsFreqs []float64
	// AbsDivisors are the formula divisors PE = f(p / AbsDivisors[i]):
	// base^(2i/d) per pair (sinusoidal, mixture), (max_len−1)^(i/(d−1)) per
	// dim (algebraic). Dividing, as the reference formulas do, rather than
	// multiplying by AbsFreqs keeps large positions within one rounding.
	AbsDivisors []float64
	BinBits     int // binary: min(d_model, bitlen(max_len))
}

// MixtureBase is the base of the sinusoidal half of the mixture encoding:
// the mixture encoding's reference implementation uses the standard 10000.
const MixtureBase = 10000

// derive computes the parameters of the absolute encodings:
//
//   - sinusoidal (Vaswani et al. 2017) and mixture's sinusoidal
//     half: PE(p, 2i) = sin(p/base^(2i/d)), PE(p, 2i+1) = cos(p/base^(2i/d));
//     AbsDivisors[i] = base^(2i/d) and AbsFreqs[i] = 1/AbsDivisors[i], one per
//     pair (⌈d/2⌉ pairs; an odd d ends with a lone sine);
//   - algebraic: PE(p, i) = p / (max_len−1)^(i/(d−1));
//     AbsDivisors[i] = (max_len−1)^(i/(d−1)) (exponent 0 when d = 1);
//   - binary: PE(p, i) = (p >> i) & 1 for i < BinBits =
//     min(d_model, bitlen(max_len)), 0 for the other dims;
//   - learned: the table is the caller's; nothing to derive.
func derive(s *spec.Spec) (*Consts, error) {
	c := &Consts{Spec: s}
	if err := c.derive(); err != nil {
		return nil, err
	}
	return c, nil
}

// derive fills c from c.Spec.
func (c *Consts) derive() error {
	s := c.Spec
	d := s.DModel
	if d < 1 {
		return fmt.Errorf("d_model = %d, want ≥ 1", d)
	}
	if s.MaxLen < 1 {
		return fmt.Errorf("max_len = %d, want ≥ 1", s.MaxLen)
	}
	switch memberOf(s) {
	case sinusoidal, mixture:
		base := s.Base
		if memberOf(s) == mixture || base == 0 {
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
	case algebraic:
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
	case binary:
		c.BinBits = min(d, bits.Len(uint(s.MaxLen)))
	case learned:
	default:
		return fmt.Errorf("deriveAbsolute: encoding %q is not an absolute encoding", s.Encoding)
	}
	return nil
}
