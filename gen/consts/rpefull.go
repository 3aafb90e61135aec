package consts

import "fmt"

// deriveRPEFull fills the relative-table shape of an rpe_full spec (Shaw,
// Uszkoreit and Vaswani, "Self-Attention with Relative Position
// Representations", 2018): the learned tables a^K and a^V hold one HeadDim
// row per clipped distance, 2·r_max−1 rows, and distance rel = query
// position − key position selects row clamp(rel, −(r_max−1), r_max−1) +
// r_max−1 (the rpe_bias clamp rule). It reuses the rpe_bias fields:
// NumBuckets is the row count, BucketSpan = r_max−1 the largest |rel| with
// its own row, and BucketMap the identity over [0, NumBuckets).
func deriveRPEFull(c *Set) error {
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
