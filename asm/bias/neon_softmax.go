package arm64

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/spec"
)

// maxUnroll is the largest number of 16-lane blocks a compile-time loop is
// unrolled into straight-line code; longer trip counts get a counted loop.
const maxUnroll = 4

// General registers shared by the kernels (see Reg for the reserved ones).
const (
	r0  Reg = 0
	r1  Reg = 1
	r2  Reg = 2
	r3  Reg = 3
	r4  Reg = 4
	r5  Reg = 5
	r6  Reg = 6
	r7  Reg = 7
	r8  Reg = 8
	r9  Reg = 9
	r10 Reg = 10
	r11 Reg = 11
	r12 Reg = 12
	r13 Reg = 13
	r14 Reg = 14
	r15 Reg = 15
	r16 Reg = 16
	r17 Reg = 17
)

// vecs returns the n registers first, first+step, … with arrangement a.
func vecs(first VReg, n, step int, a Arrangement) []Vec {
	out := make([]Vec, n)
	for i := range out {
		out[i] = Vec{first + VReg(i*step), a}
	}
	return out
}

// ---- rope: rotate ----

// Argument frame of
// rotate(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32).
const rotateArgs = 116

// ropeGen emits one rotate kernel for fixed HeadDim, RotaryDim and layout.
//
// Registers: R0 q cursor, R1 qHeads, R2 k cursor, R3 kHeads, R4 table,
// R5 idx cursor, R6 tokens left, R7 row, R8 heads left, R9 row stride in
// bytes, R10 x load cursor (interleaved), R11 x1 cursor (half), R12 cos
// cursor, R13 sin cursor, R14 block counter, R15 sign bits.
type ropeGen struct {
	e            *Emitter
	headDim, rot int // HeadDim, RotaryDim
	interleaved  bool
}

// rowLen is RowLen of internals.md: floats per table row.
func (g *ropeGen) rowLen() int {
	if g.interleaved {
		return 2 * g.rot
	}
	return g.rot
}

// text emits the whole TEXT block of the rotate kernel called name.
func (g *ropeGen) text(name string) {
	e := g.e
	e.Comment("func %s(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)", name)
	layout := "half (pairs i, i+n)"
	if g.interleaved {
		layout = "interleaved (pairs 2i, 2i+1)"
	}
	e.Comment("HeadDim %d, RotaryDim %d, layout %s, row %d floats.", g.headDim, g.rot, layout, g.rowLen())
	e.Text(name, rotateArgs)
	e.LoadArg(r0, Arg{"q_base", 0})
	e.LoadArg(r1, Arg{"qHeads", 24})
	e.LoadArg(r2, Arg{"k_base", 32})
	e.LoadArg(r3, Arg{"kHeads", 56})
	e.LoadArg(r4, Arg{"table_base", 64})
	e.LoadArg(r5, Arg{"idx_base", 88})
	e.LoadArg(r6, Arg{"idx_len", 96})
	e.LoadArgW(r15, Arg{"sign", 112})
	e.MovImm(r9, int64(g.rowLen()*4))
	done := e.NewLabel("done")
	neg := e.NewLabel("inverse")
	e.CBZ(r6, done)
	e.Comment("sign < 0 (Inverse): the same loops with FMLA and FMLS swapped.")
	e.TBNZ(31, r15, neg)
	g.tokens(false)
	e.Label(neg)
	g.tokens(true)
	e.Label(done)
	e.RET()
	e.End()
}

// tokens emits the loop over tokens for one sign.
func (g *ropeGen) tokens(neg bool) {
	e := g.e
	tok := e.NewLabel("token")
	e.Label(tok)
	e.Comment("row = table + idx[t]·RowLen")
	e.LoadW32Post(r7, r5)
	e.Mul(r7, r7, r9)
	e.Add(r7, r7, r4)
	if g.resident() {
		g.loadRowAll()
	}
	g.heads("q", r0, r1, neg)
	g.heads("k", r2, r3, neg)
	e.SubsImm(r6, r6, 1)
	e.BNE(tok)
	e.RET()
}

// heads emits the loop over the n heads (register cnt) at cursor x.
func (g *ropeGen) heads(which string, x, cnt Reg, neg bool) {
	e := g.e
	skip := e.NewLabel(which + "skip")
	loop := e.NewLabel(which + "head")
	e.Mov(r8, cnt)
	e.CBZ(r8, skip)
	e.Label(loop)
	g.head(x, neg)
	e.SubsImm(r8, r8, 1)
	e.BNE(loop)
	e.Label(skip)
}

// maxResident is the most pairs whose cos and sin stay in registers for all
// heads of a token (one step of at most four vectors plus tails).
const maxResident = 16

// resident reports whether the row is loaded once per token instead of once
// per head.
func (g *ropeGen) resident() bool { return g.rot/2 <= maxResident }

// steps lists the steps rotating n pairs: 4 for a 16-pair block (repeated
// blocks times), then one step of 1..3 vectors, −2 (two pairs) and −1 (one
// pair) for the tail.
func (g *ropeGen) steps() (blocks int, tail []int) {
	n := g.rot / 2
	rem := n % 16
	if rem >= 4 {
		tail = append(tail, rem/4)
	}
	if rem%4 >= 2 {
		tail = append(tail, -2)
	}
	if rem%2 == 1 {
		tail = append(tail, -1)
	}
	return n / 16, tail
}

// rowCursors points R12 at the cos half and R13 at the sin half of the row.
func (g *ropeGen) rowCursors() {
	g.e.Mov(r12, r7)
	g.e.AddImm(r13, r7, g.rowLen()*2)
}

// loadRowAll loads the whole row into the step registers (resident mode).
func (g *ropeGen) loadRowAll() {
	g.e.Comment("cos and sin stay in registers for every head of this token")
	g.rowCursors()
	blocks, tail := g.steps()
	for i := 0; i < blocks; i++ {
		g.loadRow(4)
	}
	for _, v := range tail {
		g.loadRow(v)
	}
}

// head rotates one head at x and advances x by HeadDim floats.
func (g *ropeGen) head(x Reg, neg bool) {
	e := g.e
	n := g.rot / 2
	if g.interleaved {
		e.Mov(r10, x)
	} else {
		e.AddImm(r11, x, n*4)
	}
	if !g.resident() {
		g.rowCursors()
	}
	blocks, tail := g.steps()
	step := func(v int) {
		if !g.resident() {
			g.loadRow(v)
		}
		g.rotateStep(x, v, neg)
	}
	switch {
	case blocks > maxUnroll:
		blk := e.NewLabel("blk")
		e.MovImm(r14, int64(blocks))
		e.Label(blk)
		step(4)
		e.SubsImm(r14, r14, 1)
		e.BNE(blk)
	default:
		for i := 0; i < blocks; i++ {
			step(4)
		}
	}
	for _, v := range tail {
		step(v)
	}
	gap := (g.headDim - g.rot) * 4
	switch {
	case g.interleaved && gap > 0:
		e.AddImm(x, x, gap)
	case !g.interleaved && gap > 0:
		e.AddImm(x, r11, gap)
	case !g.interleaved:
		e.Mov(x, r11)
	}
}

// stepRegs returns the registers of a step: v = 1..4 vectors of 4 pairs, or
// v = −2, −1 for two pairs and one pair. The tails get their own cos/sin
// registers so that a resident row never overlaps.
//
//	half:        c V0.., s V4.., x0 V8.., x1 V12.., y0 V16.., y1 V20..;
//	             tails c/s V24/V25 (−2), V26/V27 (−1)
//	interleaved: c V0.. (+1 scratch), s V5.. (+1 scratch), x0/x1 V10,V11…,
//	             y0/y1 V18,V19…; tails c V26 (+V27), s V28 (+V29) (−2),
//	             c/s V30/V31 (−1)
func (g *ropeGen) stepRegs(v int) (a Arrangement, nv int, c, s, x0, x1, y0, y1 []Vec) {
	a, nv = S4, v
	if v < 0 {
		a, nv = S2, 1
	}
	if g.interleaved {
		c, s = vecs(0, nv, 1, a), vecs(5, nv, 1, a)
		x0, x1 = vecs(10, nv, 2, a), vecs(11, nv, 2, a)
		y0, y1 = vecs(18, nv, 2, a), vecs(19, nv, 2, a)
		switch v {
		case -2:
			c, s = vecs(26, 1, 1, a), vecs(28, 1, 1, a)
		case -1:
			c, s = vecs(30, 1, 1, a), vecs(31, 1, 1, a)
		}
	} else {
		c, s = vecs(0, nv, 1, a), vecs(4, nv, 1, a)
		x0, x1 = vecs(8, nv, 1, a), vecs(12, nv, 1, a)
		y0, y1 = vecs(16, nv, 1, a), vecs(20, nv, 1, a)
		switch v {
		case -2:
			c, s = vecs(24, 1, 1, a), vecs(25, 1, 1, a)
		case -1:
			c, s = vecs(26, 1, 1, a), vecs(27, 1, 1, a)
		}
	}
	return
}

// loadRow loads the cos and sin of one step from R12 and R13, advancing both.
func (g *ropeGen) loadRow(v int) {
	e := g.e
	a, nv, c, s, _, _, _, _ := g.stepRegs(v)
	switch {
	case v == -1:
		w := 4
		if g.interleaved {
			w = 8 // skip the duplicate
		}
		e.LoadS(c[0].R, r12, w)
		e.LoadS(s[0].R, r13, w)
	case g.interleaved:
		// Row entries come in equal pairs; a VLD2 keeps one copy in its
		// first register. The second (discarded) register is the first of
		// the next load, so nv loads fill nv+1 registers.
		for i := 0; i < nv; i++ {
			e.VLD2(r12, true, c[i], Vec{c[i].R + 1, a})
		}
		for i := 0; i < nv; i++ {
			e.VLD2(r13, true, s[i], Vec{s[i].R + 1, a})
		}
	case v == -2:
		e.LoadD(c[0].R, r12, 8)
		e.LoadD(s[0].R, r13, 8)
	default:
		e.VLD1(r12, true, c...)
		e.VLD1(r13, true, s...)
	}
}

// rotateStep rotates the pairs of one step (see stepRegs) whose cos and sin
// are loaded, advancing the x cursors.
func (g *ropeGen) rotateStep(x Reg, v int, neg bool) {
	e := g.e
	_, nv, c, s, x0, x1, y0, y1 := g.stepRegs(v)
	switch {
	case g.interleaved && v == -1:
		e.LoadS(x0[0].R, r10, 4)
		e.LoadS(x1[0].R, r10, 4)
	case g.interleaved:
		for i := 0; i < nv; i++ {
			e.VLD2(r10, true, x0[i], x1[i])
		}
	case v == -1:
		e.LoadS(x0[0].R, x, 0)
		e.LoadS(x1[0].R, r11, 0)
	case v == -2:
		e.LoadD(x0[0].R, x, 0)
		e.LoadD(x1[0].R, r11, 0)
	default:
		e.VLD1(x, false, x0...)
		e.VLD1(r11, false, x1...)
	}
	for i := 0; i < nv; i++ {
		e.FMUL(y0[i], x0[i], c[i])
		e.FMUL(y1[i], x1[i], c[i])
	}
	sub, add := e.VFMLS, e.VFMLA
	if neg {
		sub, add = add, sub
	}
	for i := 0; i < nv; i++ {
		sub(y0[i], x1[i], s[i])
		add(y1[i], x0[i], s[i])
	}
	switch {
	case g.interleaved && v == -1:
		e.StoreS(y0[0].R, x, 4)
		e.StoreS(y1[0].R, x, 4)
	case g.interleaved:
		for i := 0; i < nv; i++ {
			e.VST2(x, true, y0[i], y1[i])
		}
	case v == -1:
		e.StoreS(y0[0].R, x, 4)
		e.StoreS(y1[0].R, r11, 4)
	case v == -2:
		e.StoreD(y0[0].R, x, 8)
		e.StoreD(y1[0].R, r11, 8)
	default:
		e.VST1(x, true, y0...)
		e.VST1(r11, true, y1...)
	}
}

// ---- runtime-length loops ----

// forEach emits the loops over the n elements counted by register rn, using
// rc as the trip counter: a 16-element loop (when body16 is set), a
// 4-element loop and a 1-element loop. Bodies advance their own cursors.
func forEach(e *Emitter, hint string, rn, rc Reg, body16, body4, body1 func()) {
	l4 := e.NewLabel(hint + "_from4_")
	l1 := e.NewLabel(hint + "_from1_")
	end := e.NewLabel(hint + "_end")
	if body16 != nil {
		loop := e.NewLabel(hint + "_x16_")
		e.LsrImm(rc, rn, 4)
		e.CBZ(rc, l4)
		e.Label(loop)
		body16()
		e.SubsImm(rc, rc, 1)
		e.BNE(loop)
		e.Label(l4)
		e.LsrImm(rc, rn, 2)
		e.AndImm(rc, rc, 3)
	} else {
		e.Label(l4)
		e.LsrImm(rc, rn, 2)
	}
	loop4 := e.NewLabel(hint + "_x4_")
	e.CBZ(rc, l1)
	e.Label(loop4)
	body4()
	e.SubsImm(rc, rc, 1)
	e.BNE(loop4)
	e.Label(l1)
	loop1 := e.NewLabel(hint + "_x1_")
	e.AndImm(rc, rn, 3)
	e.CBZ(rc, end)
	e.Label(loop1)
	body1()
	e.SubsImm(rc, rc, 1)
	e.BNE(loop1)
	e.Label(end)
}

// ---- alibi / rpe_bias: addRow ----

// addRow emits addRow(dst, src []float32): dst[j] += src[j].
// R0 dst cursor, R1 src cursor, R2 length, R3 trip counter.
func addRow(e *Emitter, name string) {
	e.Comment("func %s(dst, src []float32)", name)
	e.Comment("dst[j] += src[j] for j < len(dst) (len(src) == len(dst)).")
	e.Text(name, 48)
	e.LoadArg(r0, Arg{"dst_base", 0})
	e.LoadArg(r2, Arg{"dst_len", 8})
	e.LoadArg(r1, Arg{"src_base", 24})
	addLoops(e, func(nv int) {
		d, s := vecs(0, nv, 1, S4), vecs(4, nv, 1, S4)
		e.VLD1(r0, false, d...)
		e.VLD1(r1, true, s...)
		for i := range d {
			e.FADD(d[i], d[i], s[i])
		}
		e.VST1(r0, true, d...)
	}, func() {
		e.LoadS(0, r0, 0)
		e.LoadS(4, r1, 4)
		e.FADDS(0, 0, 4)
		e.StoreS(0, r0, 4)
	})
	e.RET()
	e.End()
}

// addLoops wraps forEach for element-wise kernels whose vector body is
// parameterized by the vector count.
func addLoops(e *Emitter, vec func(nv int), one func()) {
	forEach(e, "add", r2, r3, func() { vec(4) }, func() { vec(1) }, one)
}

// ---- absolute: addRows ----

// addRows emits addRows(x, table []float32, idx []int32) for a fixed DModel:
// x[t·D+i] += table[idx[t]·D+i].
// R0 x cursor, R4 table, R5 idx cursor, R6 tokens left, R7 row cursor,
// R9 row stride in bytes, R14 block counter.
func addRows(e *Emitter, name string, d int) {
	e.Comment("func %s(x []float32, table []float32, idx []int32)", name)
	e.Comment("x[t·%d+i] += table[idx[t]·%d+i].", d, d)
	e.Text(name, 72)
	e.LoadArg(r0, Arg{"x_base", 0})
	e.LoadArg(r4, Arg{"table_base", 24})
	e.LoadArg(r5, Arg{"idx_base", 48})
	e.LoadArg(r6, Arg{"idx_len", 56})
	e.MovImm(r9, int64(d*4))
	done := e.NewLabel("done")
	tok := e.NewLabel("token")
	e.CBZ(r6, done)
	e.Label(tok)
	e.LoadW32Post(r7, r5)
	e.Mul(r7, r7, r9)
	e.Add(r7, r7, r4)
	step := func(nv int) {
		a, n := S4, nv
		if nv < 0 {
			a, n = S2, 1
		}
		xv, tv := vecs(0, n, 1, a), vecs(4, n, 1, a)
		switch nv {
		case -1:
			e.LoadS(0, r0, 0)
			e.LoadS(4, r7, 4)
		case -2:
			e.LoadD(0, r0, 0)
			e.LoadD(4, r7, 8)
		default:
			e.VLD1(r0, false, xv...)
			e.VLD1(r7, true, tv...)
		}
		for i := range xv {
			e.FADD(xv[i], xv[i], tv[i])
		}
		switch nv {
		case -1:
			e.StoreS(0, r0, 4)
		case -2:
			e.StoreD(0, r0, 8)
		default:
			e.VST1(r0, true, xv...)
		}
	}
	blocks := d / 16
	if blocks > maxUnroll {
		blk := e.NewLabel("blk")
		e.MovImm(r14, int64(blocks))
		e.Label(blk)
		step(4)
		e.SubsImm(r14, r14, 1)
		e.BNE(blk)
	} else {
		for i := 0; i < blocks; i++ {
			step(4)
		}
	}
	rem := d % 16
	if rem >= 4 {
		step(rem / 4)
	}
	if rem%4 >= 2 {
		step(-2)
	}
	if rem%2 == 1 {
		step(-1)
	}
	e.SubsImm(r6, r6, 1)
	e.BNE(tok)
	e.Label(done)
	e.RET()
	e.End()
}

// ---- expf ----

// Vectorized expf, the one softmaxRow uses. It performs the operations of
// asm/amd64's AVX2 exp (see its doc comment) in NEON instructions:
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
// c2…c6 the minimax fit of asm/amd64's expPoly (the relative error of exp on
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
// the exact result; TestKernelsQEMU measures every expStride-th float32 bit
// pattern (go test ./asm/arm64 -run TestKernelsQEMU -timeout 1h -args
// -expstride=1 for all 2^32).

// Registers holding the expf constants (broadcast to every lane).
const (
	vLo    VReg = 20 // −88: n + 127 ≥ 0 (also maps −Inf)
	vHi    VReg = 21 // 88: n + 127 ≤ 254
	vLog2e VReg = 22 // log2(e)
	vMagic VReg = 23 // 1.5·2^23 + 127
	vC1    VReg = 24 // ln 2 high part (9 significant bits: n·C1 is exact)
	vC2    VReg = 25 // ln 2 − C1
	vP6    VReg = 26 // c6, the r⁶ coefficient of exp(r)
	vP5    VReg = 27 // c5
	vP4    VReg = 28 // c4
	vP3    VReg = 29 // c3
	vP2    VReg = 30 // c2
	vOne   VReg = 31 // 1.0 = c1 (= c0)
)

// expMaxULP bounds the error of the vector expf in float32 ulps of the exact
// result for normal results (x ≤ 88): the exhaustive maximum, 0.8942 at
// x = 5.201929 over all 2^32 inputs under qemu, rounded up.
const expMaxULP = 0.9

// expConsts lists the constants in register order, V20..V31. c6…c2 are
// asm/amd64's expPoly[0:5].
var expConsts = []struct {
	reg VReg
	val float32
}{
	{vLo, -88},
	{vHi, 88},
	{vLog2e, math.Log2E},
	{vMagic, 0x1.8p23 + 127},
	{vC1, 0.693359375},
	{vC2, -2.12194440e-4},
	{vP6, 0.0013814599},
	{vP5, 0.008368717},
	{vP4, 0.04166839},
	{vP3, 0.16666521},
	{vP2, 0.49999994},
	{vOne, 1},
}

// loadExpConsts broadcasts the expf constants into V20..V31 via R9.
func loadExpConsts(e *Emitter) {
	for _, k := range expConsts {
		e.MovBits(r9, k.val)
		e.VDUPR(k.reg.S4(), r9)
	}
}

// expVecs emits t[i] = e^x[i] for every lane of the len(x) vectors with
// arrangement a, as described above, clobbering x, p and q (V20..V31 hold
// the constants). The vectors are interleaved instruction by instruction,
// so that independent operations follow each other: 20 instructions per
// vector.
func expVecs(e *Emitter, a Arrangement, x, t, p, q []VReg) {
	each := func(f func(i int)) {
		for i := range x {
			f(i)
		}
	}
	k := func(r VReg) Vec { return r.As(a) }
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
	for _, c := range []VReg{vP4, vP3, vP2, vOne} {
		each(func(i int) { e.VMOV(next[i].B16(), c.B16()) })
		each(func(i int) { e.VFMLA(k(next[i]), k(acc[i]), k(x[i])) })
		acc, next = next, acc
	}
	// After four steps acc is p again: p = q(r).
	each(func(i int) { e.VSHL(k(t[i]), k(t[i]), 23) })       // s = 2^n: bits (n + 127)<<23
	each(func(i int) { e.FMUL(k(x[i]), k(x[i]), k(t[i])) })  // s·r, exact
	each(func(i int) { e.VFMLA(k(t[i]), k(x[i]), k(p[i])) }) // s + (s·r)·q, one rounding
}

// ---- alibi / rpe_bias: softmaxRow ----

// softmaxPrefetch is how far ahead of the exp pass softmaxRow prefetches, in
// bytes: asm/amd64's softmaxPrefetch, measured there (8 KiB best of 2–16
// KiB on the [32][512][512] causal ALiBi benchmark, AMD EPYC). Not measured
// on arm64 hardware. A prefetch is a hint: it never faults and is not an
// access of the Go memory model, so reading ahead of the row is harmless.
const softmaxPrefetch = 8192

// softmaxRow emits softmaxRow(row, bias []float32, scale float32):
// row[j] = softmax_j(scale·row[j] + bias[j]) in three passes: the max; exp,
// store and sum; a multiply by 1/Σ. The sum is kept in float64: blocks of
// four vectors (16 exps) are summed in float32 (a tree of depth 2: error
// ≤ 2 ulp of the block's sum) and widened to float64 once per block; 1/Σ is
// computed in float64 and rounded once to float32.
//
// General registers: R0 row cursor, R1 bias cursor, R2 length, R3 trip
// counter, R8 row base, R10 bias base. Vector registers in pass 2: V0..V3
// exponents (x), V4..V7 row loads and results (t), V8..V15 Horner (p, q),
// V16 scale (then 1/Σ), V17 and V18 float64 sums, V19 max, V20..V31 the
// expf constants.
func softmaxRow(e *Emitter, name string) {
	e.Comment("func %s(row, bias []float32, scale float32)", name)
	e.Comment("row[j] = softmax_j(scale·row[j] + bias[j]); len(bias) == len(row) ≥ 1.")
	e.Text(name, 52)
	e.LoadArg(r0, Arg{"row_base", 0})
	e.LoadArg(r2, Arg{"row_len", 8})
	e.LoadArg(r1, Arg{"bias_base", 24})
	e.LoadArgS(30, Arg{"scale", 48})
	e.Mov(r8, r0)
	e.VDUPLane(VReg(30).S4(), 30, 0)
	e.MovBits(r9, float32(math.Inf(-1)))
	for v := VReg(24); v <= 28; v++ {
		e.VDUPR(v.S4(), r9)
	}
	e.Mov(r10, r1)
	e.Comment("Pass 1: the max of v[j] = bias[j] + row[j]·scale in V24..V27, F28; row is not written.")
	forEach(e, "max", r2, r3, func() {
		x, b := vecs(0, 4, 1, S4), vecs(4, 4, 1, S4)
		e.VLD1(r0, true, x...)
		e.VLD1(r1, true, b...)
		for i := range b {
			e.VFMLA(b[i], x[i], VReg(30).S4())
		}
		for i := range b {
			m := VReg(24 + i).S4()
			e.FMAX(m, m, b[i])
		}
	}, func() {
		e.VLD1(r0, true, VReg(0).S4())
		e.VLD1(r1, true, VReg(4).S4())
		e.VFMLA(VReg(4).S4(), VReg(0).S4(), VReg(30).S4())
		e.FMAX(VReg(24).S4(), VReg(24).S4(), VReg(4).S4())
	}, func() {
		e.LoadS(0, r0, 4)
		e.LoadS(4, r1, 4)
		e.VFMLA(VReg(4).S2(), VReg(0).S2(), VReg(30).S2())
		e.FMAXS(28, 28, 4)
	})
	e.FMAX(VReg(24).S4(), VReg(24).S4(), VReg(25).S4())
	e.FMAX(VReg(26).S4(), VReg(26).S4(), VReg(27).S4())
	e.FMAX(VReg(24).S4(), VReg(24).S4(), VReg(26).S4())
	e.FMAXP(VReg(24).S4(), VReg(24).S4(), VReg(24).S4())
	e.FMAXP(VReg(24).S4(), VReg(24).S4(), VReg(24).S4())
	e.FMAXS(19, 24, 28)
	e.VDUPLane(VReg(19).S4(), 19, 0)

	e.Comment("Pass 2: row[j] = e^(exponent), summed in float64 (V17, V18: two lanes each). While")
	e.Comment("|max| < 2^24 the exponent is (bias[j] − max) + row[j]·scale: bias[j] − max is exact for")
	e.Comment("the biases that matter (Sterbenz: within a factor 2 of max) and the fused multiply-add")
	e.Comment("rounds once, so a large bias shared by competing keys costs no precision; max's own")
	e.Comment("rounding, ≤ ulp(max)/2, is a constant shift softmax cancels. Beyond 2^24 that shift")
	e.Comment("could reach e^x's range, so the exponent is fl(bias[j] + row[j]·scale) − max, exactly 0")
	e.Comment("for the maximum. Blocks of 16 exps are summed in float32, then widened to float64.")
	e.VMOV(VReg(16).B16(), VReg(30).B16()) // scale: V30 becomes an exp constant
	loadExpConsts(e)
	e.VEOR(VReg(17).B16(), VReg(17).B16(), VReg(17).B16())
	e.VEOR(VReg(18).B16(), VReg(18).B16(), VReg(18).B16())
	// exponent turns the bias loaded in x[i] and the row loaded in t[i] into
	// the exponent in x[i].
	exponent := func(precise bool, a Arrangement, x, t []VReg) {
		scale, mx := VReg(16).As(a), VReg(19).As(a)
		if precise {
			for i := range x {
				e.FSUB(x[i].As(a), x[i].As(a), mx)
			}
		}
		for i := range x {
			e.VFMLA(x[i].As(a), t[i].As(a), scale)
		}
		if !precise {
			for i := range x {
				e.FSUB(x[i].As(a), x[i].As(a), mx)
			}
		}
	}
	regs := func(n int) (x, t, p, q []VReg) {
		for i := 0; i < n; i++ {
			x, t = append(x, VReg(i)), append(t, VReg(4+i))
			p, q = append(p, VReg(8+i)), append(q, VReg(12+i))
		}
		return
	}
	sum0, sum1 := VReg(17).D2(), VReg(18).D2()
	pass2 := func(precise bool, hint string) {
		e.Mov(r0, r8)
		e.Mov(r1, r10)
		forEach(e, hint, r2, r3, func() {
			x, t, p, q := regs(4)
			xs, ts := vecs(0, 4, 1, S4), vecs(4, 4, 1, S4)
			e.VLD1(r1, true, xs...)
			e.VLD1(r0, false, ts...)
			// One cache line (64 bytes) per iteration, softmaxPrefetch
			// bytes ahead: score rows are consecutive in memory
			// ([heads][lq][lk]), so this brings the rows of the coming
			// calls into cache while this row's exps keep the vector
			// units busy.
			e.PRFM(r0, softmaxPrefetch)
			exponent(precise, S4, x, t)
			expVecs(e, S4, x, t, p, q)
			e.VST1(r0, true, ts...)
			e.FADD(VReg(0).S4(), VReg(4).S4(), VReg(5).S4())
			e.FADD(VReg(2).S4(), VReg(6).S4(), VReg(7).S4())
			e.FADD(VReg(0).S4(), VReg(0).S4(), VReg(2).S4())
			e.FCVTL(VReg(1).D2(), VReg(0).S2())
			e.FCVTL(VReg(2).D2(), VReg(0).S4())
			e.FADD(sum0, sum0, VReg(1).D2())
			e.FADD(sum1, sum1, VReg(2).D2())
		}, func() {
			x, t, p, q := regs(1)
			e.VLD1(r1, true, VReg(0).S4())
			e.VLD1(r0, false, VReg(4).S4())
			exponent(precise, S4, x, t)
			expVecs(e, S4, x, t, p, q)
			e.VST1(r0, true, VReg(4).S4())
			e.FCVTL(VReg(1).D2(), VReg(4).S2())
			e.FCVTL(VReg(2).D2(), VReg(4).S4())
			e.FADD(sum0, sum0, VReg(1).D2())
			e.FADD(sum1, sum1, VReg(2).D2())
		}, func() {
			x, t, p, q := regs(1)
			e.LoadS(0, r1, 4)
			e.LoadS(4, r0, 0)
			exponent(precise, S2, x, t)
			expVecs(e, S2, x, t, p, q)
			e.StoreS(4, r0, 4)
			e.FCVTSD(1, 4) // zeroes the upper lane of V1.D2
			e.FADD(sum0, sum0, VReg(1).D2())
		})
	}
	precise, summed := e.NewLabel("precise"), e.NewLabel("summed")
	e.VMOVToReg(r9, VReg(19), 0)
	e.AndImm(r9, r9, 0x7fffffff)
	e.LsrImm(r9, r9, 23)
	e.SubsImm(r9, r9, 127+24)
	e.TBNZ(63, r9, precise) // biased exponent of |max| below 151: |max| < 2^24
	pass2(false, "exphuge")
	e.B(summed)
	e.Label(precise)
	pass2(true, "exp")
	e.Label(summed)
	e.FADD(sum0, sum0, sum1)
	e.FADDP(sum0, sum0, sum0) // lane 0: the total
	e.FMOVDOne(16)
	e.FDIVD(16, 16, 17)
	e.FCVTDS(16, 16) // 1/Σ rounded once to float32
	e.VDUPLane(VReg(16).S4(), 16, 0)

	e.Comment("Pass 3: row[j] ·= 1/sum.")
	e.Mov(r0, r8)
	forEach(e, "scale", r2, r3, func() {
		x := vecs(0, 4, 1, S4)
		e.VLD1(r0, false, x...)
		for i := range x {
			e.FMUL(x[i], x[i], VReg(16).S4())
		}
		e.VST1(r0, true, x...)
	}, func() {
		e.VLD1(r0, false, VReg(0).S4())
		e.FMUL(VReg(0).S4(), VReg(0).S4(), VReg(16).S4())
		e.VST1(r0, true, VReg(0).S4())
	}, func() {
		e.LoadS(0, r0, 0)
		e.FMULS(0, 0, 16)
		e.StoreS(0, r0, 4)
	})
	e.RET()
	e.End()
}

// expKernel emits the test-only expNEON(dst, src []float32): dst[i] = e^src[i]
// through the same expVecs as softmaxRow, in the same loops (four vectors
// interleaved, one vector, one lane); len(src) == len(dst).
func expKernel(e *Emitter, name string) {
	e.Comment("func %s(dst, src []float32)", name)
	e.Comment("Test-only: dst[i] = e^src[i] with softmaxRow's vector expf.")
	e.Text(name, 48)
	e.LoadArg(r0, Arg{"dst_base", 0})
	e.LoadArg(r2, Arg{"dst_len", 8})
	e.LoadArg(r1, Arg{"src_base", 24})
	loadExpConsts(e)
	body := func(n int) {
		var x, t, p, q []VReg
		for i := 0; i < n; i++ {
			x, t = append(x, VReg(i)), append(t, VReg(4+i))
			p, q = append(p, VReg(8+i)), append(q, VReg(12+i))
		}
		e.VLD1(r1, true, vecs(0, n, 1, S4)...)
		expVecs(e, S4, x, t, p, q)
		e.VST1(r0, true, vecs(4, n, 1, S4)...)
	}
	forEach(e, "exp", r2, r3, func() { body(4) }, func() { body(1) }, func() {
		e.LoadS(0, r1, 4)
		expVecs(e, S2, []VReg{0}, []VReg{4}, []VReg{8}, []VReg{12})
		e.StoreS(4, r0, 4)
	})
	e.RET()
	e.End()
}

// checkDims validates the compile-time shape a kernel is generated for.
func checkDims(p Params) error {
	switch p.Encoding {
	case spec.RoPE:
		if p.HeadDim <= 0 || p.HeadDim%2 != 0 {
			return fmt.Errorf("arm64: head_dim %d must be even and positive", p.HeadDim)
		}
		if p.RotaryDim < 2 || p.RotaryDim%2 != 0 || p.RotaryDim > p.HeadDim {
			return fmt.Errorf("arm64: rotary_dim %d must be even, in [2, head_dim %d]", p.RotaryDim, p.HeadDim)
		}
		if p.Layout != spec.LayoutHalf && p.Layout != spec.LayoutInterleaved {
			return fmt.Errorf("arm64: unknown rope layout %q", p.Layout)
		}
		// Head strides and row offsets are ADD immediates.
		if p.HeadDim*4 >= 1<<24 {
			return fmt.Errorf("arm64: head_dim %d too large", p.HeadDim)
		}
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned:
		if p.DModel <= 0 || p.DModel*4 >= 1<<31 {
			return fmt.Errorf("arm64: d_model %d out of range", p.DModel)
		}
	case spec.RPEFull, spec.XL:
		return checkRelDims(p)
	}
	return nil
}
