// Package consts derives, once per spec, the numbers every posenc backend
// bakes into its kernels: RoPE frequencies after scaling and the attention
// factor, ALiBi slopes, relative-position bucket maps, absolute-encoding
// parameters. The Go, amd64, arm64 and CUDA emitters all read a Set; none of
// them re-derives a constant. This package shares no code with verify/.
package consts

import "github.com/posenc/posenc/spec"

// Set is the derived constants of one spec.
type Set struct {
	Spec *spec.Spec

	// RoPE. Freqs are ω_i (i < RotaryDim/2) used whenever no runtime switch
	// applies: the scaled frequencies for linear, ntk, yarn and llama3; the
	// unscaled base frequencies for dynamic (a call rescales only when
	// max(pos)+1 > OriginalMaxPosition); the short_factor frequencies for
	// longrope. LongFreqs are longrope's long_factor frequencies (nil
	// otherwise).
	Freqs           []float64
	LongFreqs       []float64
	AttentionFactor float64 // A: cos and sin are multiplied by it
	RowLen          int     // floats per table row, see docs/internals.md
	TableRows       int     // rows in the lazily built table (MaxPosition)

	// ALiBi: one slope per head (bias = −slope·|p−q|).
	Slopes []float64

	// rpe_bias. BucketSpan and BucketMap describe Bucket(rel), rel = query
	// position − key position: Bucket(rel) = BucketMap[clamp(rel, −BucketSpan,
	// BucketSpan) + BucketSpan]. Both the clamp rule and T5's rule are
	// constant beyond their largest distance, so a finite map is exact.
	BucketSpan int
	BucketMap  []int
	NumBuckets int

	// Absolute encodings: sinusoidal inverse frequencies 1/base^(2i/d) per
	// pair, binary bit count, algebraic exponents.
	AbsFreqs []float64 // sinusoidal, mixture: ⌈d_model/2⌉ entries
	// AbsDivisors are the formula divisors PE = f(p / AbsDivisors[i]):
	// base^(2i/d) per pair (sinusoidal, mixture), (max_len−1)^(i/(d−1)) per
	// dim (algebraic). Dividing, as the seed's formulas do, rather than
	// multiplying by AbsFreqs keeps large positions within one rounding.
	AbsDivisors []float64
	BinBits     int // binary: min(d_model, bitlen(max_len))
}
