package bias

import (
	"fmt"

	"github.com/posenc/posenc/gen/exactmath"
	"github.com/posenc/posenc/spec"
)

// Consts are the derived constants of one alibi or rpe_bias spec.
type Consts struct {
	Spec *spec.Spec

	// alibi: one slope per head (bias = −slope·|p−q|).
	Slopes []float64

	// rpe_bias. BucketSpan and BucketMap describe Bucket(rel), rel = query
	// position − key position: Bucket(rel) = BucketMap[clamp(rel, −BucketSpan,
	// BucketSpan) + BucketSpan]. Both the clamp rule and T5's rule are
	// constant beyond their largest distance, so a finite map is exact.
	BucketSpan int
	BucketMap  []int
	NumBuckets int
}

// derive computes the ALiBi slopes (alibi) or the bucket map (rpe_bias).
func derive(s *spec.Spec) (*Consts, error) {
	c := &Consts{Spec: s}
	if s.Heads < 1 {
		return nil, fmt.Errorf("heads = %d, want ≥ 1", s.Heads)
	}
	var err error
	if isRPE(s) {
		err = c.deriveBuckets()
	} else {
		err = c.deriveSlopes()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// deriveSlopes fills the alibi slopes: the spec's, or get_slopes.
func (c *Consts) deriveSlopes() error {
	s := c.Spec
	{
		if len(s.Slopes) > 0 {
			if len(s.Slopes) != s.Heads {
				return fmt.Errorf("%d slopes for %d heads", len(s.Slopes), s.Heads)
			}
			c.Slopes = append([]float64(nil), s.Slopes...)
			return nil
		}
		mb := s.MaxBias
		if mb == 0 {
			mb = 8
		}
		c.Slopes = ALiBiSlopes(s.Heads, mb)
		return nil
	}
}

// deriveBuckets fills the rpe_bias bucket map: T5's rule or the clamp rule.
func (c *Consts) deriveBuckets() error {
	s := c.Spec
	{
		if s.Buckets != nil {
			b := s.Buckets
			if b.Num < 2 || (b.Bidirectional && b.Num < 4) || b.MaxDistance < 1 {
				return fmt.Errorf("buckets: num = %d, max_distance = %d (bidirectional %v) cannot be bucketed", b.Num, b.MaxDistance, b.Bidirectional)
			}
			c.NumBuckets = b.Num
			c.BucketSpan = b.MaxDistance
			c.BucketMap = make([]int, 2*c.BucketSpan+1)
			for i := range c.BucketMap {
				c.BucketMap[i] = T5Bucket(-(i - c.BucketSpan), b.Bidirectional, b.Num, b.MaxDistance)
			}
			// The map is exact only if T5's rule is constant beyond the span;
			// check a few distances past each end (the rule saturates at
			// num_buckets−1 within max_distance, so this never fails).
			for d := c.BucketSpan + 1; d <= 2*c.BucketSpan+2; d++ {
				if T5Bucket(-d, b.Bidirectional, b.Num, b.MaxDistance) != c.BucketMap[len(c.BucketMap)-1] ||
					T5Bucket(d, b.Bidirectional, b.Num, b.MaxDistance) != c.BucketMap[0] {
					return fmt.Errorf("buckets: T5 bucket map is not constant beyond max_distance %d", b.MaxDistance)
				}
			}
			return nil
		}
		if s.RMax < 1 {
			return fmt.Errorf("r_max = %d, want ≥ 1", s.RMax)
		}
		// The clamp rule: index = clamp(rel, −(r_max−1), r_max−1) + r_max−1.
		c.NumBuckets = 2*s.RMax - 1
		c.BucketSpan = s.RMax - 1
		c.BucketMap = make([]int, 2*c.BucketSpan+1)
		for i := range c.BucketMap {
			c.BucketMap[i] = i
		}
		return nil
	}
}

// ALiBiSlopes returns the per-head slopes of ALiBi for n heads (Press et
// al., "Train Short, Test Long", 2022, reference get_slopes), generalized
// from the paper's 8 to any maxBias: for a power of two n the slopes are the
// geometric sequence start^(h+1), start = 2^(−maxBias/n), h = 0…n−1
// (computed as one exponent, 2^(−maxBias·(h+1)/n)); otherwise, with
// c = 2^⌊log2 n⌋, get_slopes(c) followed by get_slopes(2c)[0::2][:n−c].
// For 8 heads and maxBias 8 this is 2^−1 … 2^−8; for 6 heads it is
// 2^−2, 2^−4, 2^−6, 2^−8, 2^−1, 2^−3.
func ALiBiSlopes(n int, maxBias float64) []float64 {
	pow2 := func(n int) []float64 {
		sl := make([]float64, n)
		for h := range sl {
			sl[h] = exactmath.Pow(2, -maxBias*float64(h+1)/float64(n))
		}
		return sl
	}
	if n <= 0 {
		return nil
	}
	if n&(n-1) == 0 {
		return pow2(n)
	}
	c := 1 << (bitLen(n) - 1)
	sl := pow2(c)
	extra := pow2(2 * c) // 2c is a power of two: no further recursion
	for i := 0; len(sl) < n; i += 2 {
		sl = append(sl, extra[i])
	}
	return sl
}

// bitLen is the number of bits needed to write n ≥ 0 (Python's int.bit_length).
func bitLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// T5Bucket is Hugging Face transformers' T5Attention._relative_position_bucket
// (after Raffel et al., "Exploring the Limits of Transfer Learning", 2020)
// for one relativePosition = memory (key) position − context (query)
// position, computed in float64 (the golden data's oracle does the same):
//
//	bidirectional: half the buckets for keys after the query (offset n/2 when
//	relativePosition > 0) and n ← n/2, distance |relativePosition|;
//	otherwise distance max(−relativePosition, 0) (keys after the query → 0);
//	maxExact = n/2; a distance d < maxExact is its own bucket, a larger one
//	gets maxExact + ⌊ln(d/maxExact) / ln(maxDistance/maxExact) · (n−maxExact)⌋,
//	capped at n−1.
func T5Bucket(relativePosition int, bidirectional bool, numBuckets, maxDistance int) int {
	bucket := 0
	n := numBuckets
	var d int
	if bidirectional {
		n /= 2
		if relativePosition > 0 {
			bucket += n
		}
		d = relativePosition
		if d < 0 {
			d = -d
		}
	} else {
		d = -min(relativePosition, 0)
	}
	maxExact := n / 2
	if d < maxExact {
		return bucket + d
	}
	large := maxExact + int(exactmath.Log(float64(d)/float64(maxExact))/
		exactmath.Log(float64(maxDistance)/float64(maxExact))*float64(n-maxExact))
	return bucket + min(large, n-1)
}
