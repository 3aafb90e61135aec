package relative

import (
	"fmt"

	"github.com/posenc/posenc/gen/exactmath"
)

// deriveXL fills the sinusoid divisors of an xl spec (Dai et al.,
// "Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context",
// 2019, eq. for A^rel with the relative encoding R of Vaswani et al.):
// R_d[2i] = sin(d / base^(2i/HeadDim)), R_d[2i+1] = cos(d / base^(2i/HeadDim)).
// It reuses the sinusoidal fields: AbsDivisors[i] = base^(2i/HeadDim) and
// AbsFreqs[i] = 1/AbsDivisors[i], one per sin/cos pair (HeadDim/2 of them;
// head_dim is even).
func (c *Consts) deriveXL() error {
	s := c.Spec
	d := s.HeadDim
	if d < 2 || d%2 != 0 {
		return fmt.Errorf("head_dim = %d, want even and ≥ 2", d)
	}
	if !(s.Base > 1) {
		return fmt.Errorf("base = %v, want > 1", s.Base)
	}
	n := d / 2
	c.AbsDivisors = make([]float64, n)
	c.AbsFreqs = make([]float64, n)
	for i := range n {
		div := exactmath.Pow(s.Base, float64(2*i)/float64(d))
		c.AbsDivisors[i] = div
		c.AbsFreqs[i] = 1 / div
	}
	return nil
}
