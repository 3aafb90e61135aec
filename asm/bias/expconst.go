package bias

import "math"

// Vectorized expf, the one softmaxRow uses.
//
// exp(x) = 2^n · exp(r), n = round(x·log2 e), r = x − n·ln 2, |r| ≤ ln2/2.
//
// n comes from the "magic number" rounding: t = x·log2e + M with one fused
// multiply-add, M = 1.5·2^23, leaves round-to-nearest(x·log2e) in the low
// mantissa bits of t (|x·log2e| < 2^22), and n = t − M exactly. On AVX2, M
// also carries the float32 exponent bias, M = 1.5·2^23 + 127, so that t's
// bits shifted left by 23 are the float32 2^n itself (n + 127 ∈ [0, 254]).
// This is the rounding of Cephes-style SIMD exps such as the SLEEF and
// "avx_mathfun" ports; it costs an FMA and a subtraction instead of a
// multiply and a two-µop VROUNDPS/VRNDSCALEPS.
//
// The reduction is Cody–Waite's (W. J. Cody and W. Waite, Software Manual for
// the Elementary Functions, 1980): ln 2 = C1 + C2 with C1 = 0.693359375
// (= 355/512, 9 significant bits, so n·C1 is exact for |n| < 2^15) and
// C2 = −2.12194440e−4, each product subtracted with one fused multiply-add.
// exp(r) is a degree-6 polynomial evaluated by Horner's rule (six fused
// multiply-adds), 1 + r + c2·r² + … + c6·r⁶, with c2…c6 the minimax fit of
// the relative error of exp on [−ln2/2, ln2/2] (Lawson's reweighted least
// squares, in float64; posenc's own fit): 6.2e−8 relative in exact
// arithmetic, 0.71 ulp evaluated in float32.
//
// Scaling by 2^n: VSCALEFPS on AVX-512, which gives IEEE overflow, gradual
// underflow and a single rounding over the whole float32 range; inputs are
// clamped to [−104, 89] (exp(−104) < 2^−150 rounds to 0, exp(89) > FLT_MAX
// overflows). On AVX2, one multiply by the float32 2^n built from t's bits,
// for n ∈ [−127, 127]: inputs are clamped to [−88, 88], so exp(x) = 0 for
// every x < −87.68 (x·log2e < −126.5: n = −127 makes the bits 0), results
// below FLT_MIN (x < −87.34) are within 2^−126 of exp(x), and inputs above
// 88 give exp(88) (softmaxRow's exponents are never above ~1: they are
// v − max v). The
// clamps use VMAXPS/VMINPS ordered so that a NaN input is passed through:
// exp(NaN) = NaN, exp(−Inf) = 0.
//
// Accuracy (every normal result, x ≤ 88 on AVX2): at most expMaxULP float32
// ulps of the exact result, measured against float64 math.Exp over all 2^32
// float32 inputs (go test ./asm/bias -run TestKernelsAMD64 -args -expstride=1);
// TestKernelsAMD64 checks every 97th bit pattern and the special values by
// default.
const (
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expMagic = 0x1.8p23 // 1.5·2^23: adding it rounds to an integer
)

// expClamp is the input range of the exp of each instruction set (see
// above), by float32 lanes per vector: 16 for AVX-512, and 8 for AVX2, whose
// range NEON shares (4 lanes).
var expClamp = map[int][2]float32{
	16: {-104, 89}, // AVX-512: VSCALEFPS scales over the whole range
	8:  {-88, 88},  // AVX2: n + 127 must stay in [0, 254]
	4:  {-88, 88},  // NEON: as AVX2
}

// expMaxULP bounds the error of the generated expf in float32 ulps of the
// exact result for normal results: the exhaustive maximum, 0.8942 ulp at
// x = 5.201929 for AVX2 and AVX-512 (all 2^32 inputs, 135 s) and for NEON
// (all 2^32 inputs under qemu), rounded up.
const expMaxULP = 0.9

// expPoly are the coefficients c6…c0 of exp(r), highest degree first.
var expPoly = [7]float32{
	0.0013814599,
	0.008368717,
	0.04166839,
	0.16666521,
	0.49999994,
	1,
	1,
}

// f32bits returns the bits of f.
func f32bits(f float32) uint32 { return math.Float32bits(f) }
