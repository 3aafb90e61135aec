// Package relative is the relative-attention family: rpe_full (Shaw et
// al. 2018, learned a^K and a^V tables) and xl (Transformer-XL, Dai et al.
// 2019, sinusoid relative encodings). It holds the derived table shapes and
// sinusoid divisors, the Go emitter, the CUDA template data, and the
// explain and list text.
package relative

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// Consts are the derived constants of one rpe_full or xl spec.
type Consts struct {
	Spec *spec.Spec

	// rpe_full: NumBuckets rows per table, BucketSpan = r_max−1 the largest
	// |rel| with its own row, BucketMap the identity over [0, NumBuckets).
	NumBuckets, BucketSpan int
	BucketMap              []int

	// xl: AbsDivisors[i] = base^(2i/HeadDim), AbsFreqs[i] = 1/AbsDivisors[i].
	AbsDivisors, AbsFreqs []float64
}

// derive computes the constants of an rpe_full or xl spec.
func derive(s *spec.Spec) (*Consts, error) {
	c := &Consts{Spec: s}
	var err error
	if isXL(s) {
		err = c.deriveXL()
	} else {
		err = c.deriveRPEFull()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// deriveRPEFull fills the relative-table shape of an rpe_full spec (Shaw,
// Uszkoreit and Vaswani, "Self-Attention with Relative Position
// Representations", 2018): the learned tables a^K and a^V hold one HeadDim
// row per clipped distance, 2·r_max−1 rows, and distance rel = query
// position − key position selects row clamp(rel, −(r_max−1), r_max−1) +
// r_max−1 (the rpe_bias clamp rule). It reuses the rpe_bias fields:
// NumBuckets is the row count, BucketSpan = r_max−1 the largest |rel| with
// its own row, and BucketMap the identity over [0, NumBuckets).
func (c *Consts) deriveRPEFull() error {
	s := c.Spec
	if s.HeadDim < 1 {
		return fmt.Errorf("head_dim = %d, want ≥ 1", s.HeadDim)
	}
	if s.RMax < 1 {
		return fmt.Errorf("r_max = %d, want ≥ 1", s.RMax)
	}
	c.NumBuckets = 2*s.RMax - 1
	c.BucketSpan = s.RMax - 1
	c.BucketMap = make([]int, c.NumBuckets)
	for i := range c.BucketMap {
		c.BucketMap[i] = i
	}
	return nil
}
