package bias

import (
	"fmt"
	"io"
	"math"

	"github.com/posenc/posenc/spec"
)

// Explain prints the slopes (alibi) or the bucket map (rpe_bias).
func (c *Consts) Explain(w io.Writer) {
	s := c.Spec
	if !isRPE(s) {
		fmt.Fprintf(w, "heads %d, causal %v; bias(p, q) = −slope·|p−q|\n", s.Heads, s.Causal)
		for h, sl := range c.Slopes {
			fmt.Fprintf(w, "  head %3d  slope %.17g  (2^%.6g)\n", h, sl, math.Log2(sl))
		}
		return
	}
	fmt.Fprintf(w, "heads %d, buckets %d; Bucket(rel), rel = query − key, constant beyond ±%d:\n", s.Heads, c.NumBuckets, c.BucketSpan)
	c.printBuckets(w)
}

// printBuckets prints the bucket map as runs of equal buckets.
func (c *Consts) printBuckets(w io.Writer) {
	start := -c.BucketSpan
	for rel := -c.BucketSpan; rel <= c.BucketSpan; rel++ {
		b := c.BucketMap[rel+c.BucketSpan]
		if rel == c.BucketSpan || c.BucketMap[rel+1+c.BucketSpan] != b {
			lo, hi := fmt.Sprint(start), fmt.Sprint(rel)
			if start == -c.BucketSpan {
				lo = "…"
			}
			if rel == c.BucketSpan {
				hi = "…"
			}
			fmt.Fprintf(w, "  rel %6s .. %-6s → bucket %d\n", lo, hi, b)
			start = rel + 1
		}
	}
}

// summary is a bias spec's shape for `posenc list`.
func summary(s *spec.Spec) string {
	switch {
	case !isRPE(s):
		return fmt.Sprintf("%d heads", s.Heads)
	case s.Buckets != nil:
		return fmt.Sprintf("%d heads, T5 %d buckets to %d", s.Heads, s.Buckets.Num, s.Buckets.MaxDistance)
	}
	return fmt.Sprintf("%d heads, r_max %d", s.Heads, s.RMax)
}
