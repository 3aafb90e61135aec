package bias

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// Vectorized expf, the one softmaxRow uses. It performs the operations of
// the AVX2 exp (see expconst.go) in NEON instructions:
//
// exp(x) = 2^n · exp(r), n = round(x·log2 e), r = x − n·ln 2, |r| ≤ ln2/2.
//
// n comes from the "magic number" rounding of Cephes-style SIMD exps (the
// SLEEF and "avx_mathfun" ports): t = x·log2e + M with one fused
// multiply-add, M = 1.5·2^23 + 127, leaves round-to-nearest(x·log2e) + 127
// in the low mantissa bits of t (t ∈ [2^23, 2^24), where the float32 spacing
// is 1), so n = t − M exactly and t's bits shifted left by 23 are
// (n + 127)<<23, the float32 2^n. It replaces FMUL, FRINTN and FCVTZS.
//
// The reduction is Cody–Waite's (W. J. Cody and W. Waite, Software Manual
// for the Elementary Functions, 1980): ln 2 = C1 + C2 with C1 = 0.693359375
// (9 significant bits, so n·C1 is exact for |n| < 2^15) and
// C2 = −2.12194440e−4, each product subtracted with one fused FMLS.
//
// exp(r) = 1 + r·q(r), q = 1 + c2·r + … + c6·r⁵ by Horner's rule, with
// c2…c6 the minimax fit of expPoly (the relative error of exp on
// [−ln2/2, ln2/2], Lawson's reweighted least squares; 6.2e−8 in exact
// arithmetic). FMLA accumulates into its destination, so each Horner step is
// a copy of the coefficient and an FMLA.
//
// Scaling: with s = 2^n, exp(x) ≈ s + (s·r)·q. s·r is exact unless it
// underflows (s is a power of two), so the final FMLA rounds once and
// equals s·fl(1 + r·q): AVX2's fl(fl(q·r) + 1)·2^n, bit for bit, one
// instruction shorter than forming 1 + r·q first (TestExpMatchesAVX2
// compares every 9973rd float32 bit pattern: equal wherever the result is
// above 2^−100).
//
// Range, as AVX2's: x is clamped to [−88, 88] so that n + 127 ∈ [0, 254]
// (FMAX/FMIN return NaN for a NaN operand, so exp(NaN) = NaN). exp(x) = +0
// for x < −87.68 (n = −127 makes s = +0), in particular exp(−Inf) = 0
// exactly; results below FLT_MIN (x < −87.34) are within 2^−126 of exp(x);
// inputs above 88 give exp(88) ≈ 1.65e38, never +Inf. The previous NEON
// expf kept gradual underflow and +Inf overflow over the whole float32
// range by scaling with two factors 2^(n>>1)·2^(n−n>>1); with the magic
// number that would cost four more instructions per vector (USHR, SHL, SUB
// and a second FMUL), and softmaxRow cannot see the difference: its
// exponents are v − max v (≤ 0 up to roundings), results below FLT_MIN
// are far below its 1e−6 absolute bound, and larger exponents still clamp.
//
// Accuracy (every normal result, x ≤ 88): at most expMaxULP float32 ulps of
// the exact result; TestKernelsQEMU measures every neonexpstride-th float32
// bit pattern (go test ./asm/bias -run TestKernelsQEMU -timeout 1h -args
// -neonexpstride=1 for all 2^32).

// Registers holding the expf constants (broadcast to every lane).
const (
	vLo    arm64.VReg = 20 // −88: n + 127 ≥ 0 (also maps −Inf)
	vHi    arm64.VReg = 21 // 88: n + 127 ≤ 254
	vLog2e arm64.VReg = 22 // log2(e)
	vMagic arm64.VReg = 23 // 1.5·2^23 + 127
	vC1    arm64.VReg = 24 // ln 2 high part (9 significant bits: n·C1 is exact)
	vC2    arm64.VReg = 25 // ln 2 − C1
	vP6    arm64.VReg = 26 // c6, the r⁶ coefficient of exp(r)
	vP5    arm64.VReg = 27 // c5
	vP4    arm64.VReg = 28 // c4
	vP3    arm64.VReg = 29 // c3
	vP2    arm64.VReg = 30 // c2
	vOne   arm64.VReg = 31 // 1.0 = c1 (= c0)
)

// neonExpConsts lists the constants in register order, V20..V31: the
// values of expconst.go (AVX2's clamp and magic number, c6…c2 of expPoly).
var neonExpConsts = []struct {
	reg arm64.VReg
	val float32
}{
	{vLo, expClamp[4][0]},
	{vHi, expClamp[4][1]},
	{vLog2e, expLog2e},
	{vMagic, expMagic + 127},
	{vC1, expC1},
	{vC2, expC2},
	{vP6, expPoly[0]},
	{vP5, expPoly[1]},
	{vP4, expPoly[2]},
	{vP3, expPoly[3]},
	{vP2, expPoly[4]},
	{vOne, expPoly[5]},
}

// loadExpConsts broadcasts the expf constants into V20..V31 via R9.
func loadExpConsts(e *arm64.Emitter) {
	for _, k := range neonExpConsts {
		e.MovBits(arm64.R9, k.val)
		e.VDUPR(k.reg.S4(), arm64.R9)
	}
}

// expVecs emits t[i] = e^x[i] for every lane of the len(x) vectors with
// arrangement a, as described above, clobbering x, p and q (V20..V31 hold
// the constants). The vectors are interleaved instruction by instruction,
// so that independent operations follow each other: 20 instructions per
// vector.
func expVecs(e *arm64.Emitter, a arm64.Arrangement, x, t, p, q []arm64.VReg) {
	each := func(f func(i int)) {
		for i := range x {
			f(i)
		}
	}
	k := func(r arm64.VReg) arm64.Vec { return r.As(a) }
	each(func(i int) { e.FMAX(k(x[i]), k(x[i]), k(vLo)) })
	each(func(i int) { e.FMIN(k(x[i]), k(x[i]), k(vHi)) })
	each(func(i int) { e.VMOV(t[i].B16(), vMagic.B16()) })
	each(func(i int) { e.VFMLA(k(t[i]), k(x[i]), k(vLog2e)) }) // t = x·log2e + M, rounded to an integer
	each(func(i int) { e.FSUB(k(p[i]), k(t[i]), k(vMagic)) })  // n = t − M, exact
	each(func(i int) { e.VFMLS(k(x[i]), k(p[i]), k(vC1)) })    // x − n·C1, exact
	each(func(i int) { e.VFMLS(k(x[i]), k(p[i]), k(vC2)) })    // r = x − n·C2
	// Horner, alternating accumulators p and q: acc' = c + acc·r.
	each(func(i int) { e.VMOV(p[i].B16(), vP5.B16()) })
	each(func(i int) { e.VFMLA(k(p[i]), k(vP6), k(x[i])) })
	acc, next := p, q
	for _, c := range []arm64.VReg{vP4, vP3, vP2, vOne} {
		each(func(i int) { e.VMOV(next[i].B16(), c.B16()) })
		each(func(i int) { e.VFMLA(k(next[i]), k(acc[i]), k(x[i])) })
		acc, next = next, acc
	}
	// After four steps acc is p again: p = q(r).
	each(func(i int) { e.VSHL(k(t[i]), k(t[i]), 23) })       // s = 2^n: bits (n + 127)<<23
	each(func(i int) { e.FMUL(k(x[i]), k(x[i]), k(t[i])) })  // s·r, exact
	each(func(i int) { e.VFMLA(k(t[i]), k(x[i]), k(p[i])) }) // s + (s·r)·q, one rounding
}

// expKernel emits the test-only expNEON(dst, src []float32): dst[i] = e^src[i]
// through the same expVecs as softmaxRow, in the same loops (four vectors
// interleaved, one vector, one lane); len(src) == len(dst).
func expKernel(e *arm64.Emitter, name string) {
	e.Comment("func %s%s", name, abi.Exp.Signature())
	e.Comment("Test-only: dst[i] = e^src[i] with softmaxRow's vector expf.")
	e.TextFor(name, abi.Exp)
	e.LoadArg(arm64.R0, e.Arg(abi.Exp, "dst_base"))
	e.LoadArg(arm64.R2, e.Arg(abi.Exp, "dst_len"))
	e.LoadArg(arm64.R1, e.Arg(abi.Exp, "src_base"))
	loadExpConsts(e)
	body := func(n int) {
		var x, t, p, q []arm64.VReg
		for i := 0; i < n; i++ {
			x, t = append(x, arm64.VReg(i)), append(t, arm64.VReg(4+i))
			p, q = append(p, arm64.VReg(8+i)), append(q, arm64.VReg(12+i))
		}
		e.VLD1(arm64.R1, true, arm64.Vecs(0, n, 1, arm64.S4)...)
		expVecs(e, arm64.S4, x, t, p, q)
		e.VST1(arm64.R0, true, arm64.Vecs(4, n, 1, arm64.S4)...)
	}
	e.ForEach("exp", arm64.R2, arm64.R3, func() { body(4) }, func() { body(1) }, func() {
		e.LoadS(0, arm64.R1, 4)
		expVecs(e, arm64.S2, []arm64.VReg{0}, []arm64.VReg{4}, []arm64.VReg{8}, []arm64.VReg{12})
		e.StoreS(4, arm64.R0, 4)
	})
	e.RET()
	e.End()
}
