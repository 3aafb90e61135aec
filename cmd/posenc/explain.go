package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/spec"
)

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explain", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: explain takes one spec file or zoo name", errUsage)
	}
	s, err := loadOne(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := consts.Derive(s)
	if err != nil {
		return err
	}
	explain(stdout, c)
	return nil
}

// explain prints what a user porting the encoding needs to compare against
// another implementation: every derived constant.
func explain(w io.Writer, c *consts.Set) {
	s := c.Spec
	fmt.Fprintf(w, "%s (%s), encoding %s, targets %s, dtype %s\n", s.Name, s.File, s.Encoding, strings.Join(s.Targets, ","), s.DType)
	switch s.Encoding {
	case spec.RoPE:
		fmt.Fprintf(w, "head_dim %d, rotary_dim %d, layout %s, base %g, max_position %d (table: %d rows × %d floats)\n",
			s.HeadDim, s.RotaryDim, s.Layout, s.Base, s.MaxPosition, c.TableRows, c.RowLen)
		if sc := s.Scaling; sc != nil {
			fmt.Fprintf(w, "scaling %s: factor %g, original_max_position %d\n", sc.Type, sc.Factor, sc.OriginalMaxPosition)
		}
		fmt.Fprintf(w, "attention factor A = %.17g (cos and sin are multiplied by it)\n", c.AttentionFactor)
		printFreqs(w, "frequencies ω_i", c.Freqs)
		if c.LongFreqs != nil {
			printFreqs(w, "long frequencies ω_i (max(pos)+1 > original_max_position)", c.LongFreqs)
		}
		if s.Scaling != nil && s.Scaling.Type == spec.ScaleDynamic {
			fmt.Fprintf(w, "dynamic: a call with max(pos)+1 = L > %d uses base·((factor·L/%d) − (factor−1))^(R/(R−2))\n",
				s.Scaling.OriginalMaxPosition, s.Scaling.OriginalMaxPosition)
		}
	case spec.ALiBi:
		fmt.Fprintf(w, "heads %d, causal %v; bias(p, q) = −slope·|p−q|\n", s.Heads, s.Causal)
		for h, sl := range c.Slopes {
			fmt.Fprintf(w, "  head %3d  slope %.17g  (2^%.6g)\n", h, sl, math.Log2(sl))
		}
	case spec.RPEBias:
		fmt.Fprintf(w, "heads %d, buckets %d; Bucket(rel), rel = query − key, constant beyond ±%d:\n", s.Heads, c.NumBuckets, c.BucketSpan)
		printBuckets(w, c)
	case spec.RPEFull:
		fmt.Fprintf(w, "head_dim %d, r_max %d: tables a^K, a^V of %d rows × %d; row(rel) = clip(rel, ±%d) + %d, rel = query − key\n",
			s.HeadDim, s.RMax, c.NumBuckets, s.HeadDim, c.BucketSpan, c.BucketSpan)
		fmt.Fprintf(w, "scores scaled by 1/√head_dim = %.9g\n", 1/math.Sqrt(float64(s.HeadDim)))
	case spec.XL:
		fmt.Fprintf(w, "head_dim %d, base %g; R_rel[2i] = sin(rel/base^(2i/d)), R_rel[2i+1] = cos(rel/base^(2i/d)), rel = query − key\n", s.HeadDim, s.Base)
		if c.AbsFreqs != nil {
			printFreqs(w, "inverse frequencies 1/base^(2i/d)", c.AbsFreqs)
		}
	default:
		fmt.Fprintf(w, "d_model %d, max_len %d\n", s.DModel, s.MaxLen)
		if c.AbsFreqs != nil {
			printFreqs(w, "inverse frequencies 1/base^(2i/d)", c.AbsFreqs)
		}
		if s.Encoding == spec.Binary {
			fmt.Fprintf(w, "binary: %d bits (PE(p,i) = (p>>i)&1 for i < %d, else 0)\n", c.BinBits, c.BinBits)
		}
	}
}

func printFreqs(w io.Writer, title string, f []float64) {
	fmt.Fprintf(w, "%s (%d):\n", title, len(f))
	for i, x := range f {
		fmt.Fprintf(w, "  %3d  %.17g  wavelength %.6g\n", i, x, 2*math.Pi/x)
	}
}

// printBuckets prints the bucket map as runs of equal buckets.
func printBuckets(w io.Writer, c *consts.Set) {
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
