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

// Registers holding the expf constants (broadcast to every lane).
const (
	vLo    VReg = 20 // −104: below it e^x rounds to 0 (also maps −Inf)
	vHi    VReg = 21 // 89: above ln(MaxFloat32) ≈ 88.72, e^x overflows to +Inf
	vLog2e VReg = 22 // log2(e)
	vLn2Hi VReg = 23 // ln 2 high part (9 significant bits: n·ln2Hi is exact)
	vLn2Lo VReg = 24 // ln 2 − ln2Hi
	vC2    VReg = 25 // 1/2!
	vC3    VReg = 26 // 1/3!
	vC4    VReg = 27 // 1/4!
	vC5    VReg = 28 // 1/5!
	vC6    VReg = 29 // 1/6!
	vC7    VReg = 30 // 1/7!
	vOne   VReg = 31 // 1.0, whose bits 0x3f800000 are also 127<<23
)

// expConsts lists the constants in register order, V20..V31.
var expConsts = []struct {
	reg VReg
	val float32
}{
	{vLo, -104},
	{vHi, 89},
	{vLog2e, math.Log2E},
	{vLn2Hi, 0.693359375},
	{vLn2Lo, -2.12194440e-4},
	{vC2, 1.0 / 2},
	{vC3, 1.0 / 6},
	{vC4, 1.0 / 24},
	{vC5, 1.0 / 120},
	{vC6, 1.0 / 720},
	{vC7, 1.0 / 5040},
	{vOne, 1},
}

// loadExpConsts broadcasts the expf constants into V20..V31 via R9.
func loadExpConsts(e *Emitter) {
	for _, k := range expConsts {
		e.MovBits(r9, k.val)
		e.VDUPR(k.reg.S4(), r9)
	}
}

// expVec emits t3 = e^x for every lane of arrangement a, clobbering x, t1
// and t2. Method: clamp x to [−104, 89] (NaN passes through FMAX/FMIN);
// n = rint(x·log2 e); r = x − n·ln2Hi − n·ln2Lo (Cody–Waite, fused);
// p = Σ_{k≤7} r^k/k! by Horner; e^x = p·2^(n>>1)·2^(n−n>>1), each power
// of two built by adding its exponent into the bits of 1.0. Splitting the
// scale keeps both factors normal, so results underflow to subnormals and
// 0 and overflow to +Inf with a single rounding. 31 instructions.
func expVec(e *Emitter, a Arrangement, x, t1, t2, t3 VReg) {
	X, T1, T2, T3 := x.As(a), t1.As(a), t2.As(a), t3.As(a)
	e.FMAX(X, X, vLo.As(a))
	e.FMIN(X, X, vHi.As(a))
	e.FMUL(T1, X, vLog2e.As(a))
	e.FRINTN(T1, T1)
	e.VMOV(t2.B16(), x.B16())
	e.VFMLS(T2, T1, vLn2Hi.As(a))
	e.VFMLS(T2, T1, vLn2Lo.As(a))
	// Horner, alternating accumulators t3 and x: acc' = c + acc·r.
	e.VMOV(t3.B16(), vC6.B16())
	e.VFMLA(T3, vC7.As(a), T2)
	acc, next := T3, X
	for _, c := range []VReg{vC5, vC4, vC3, vC2, vOne, vOne} {
		e.VMOV(next.R.B16(), c.B16())
		e.VFMLA(next, acc, T2)
		acc, next = next, acc
	}
	// acc is t3 after the six steps.
	e.FCVTZS(T1, T1)
	e.SSHR(X, T1, 1)
	e.VSUB(T1, T1, X)
	e.VSHL(X, X, 23)
	e.VADD(X, X, vOne.As(a))
	e.VSHL(T1, T1, 23)
	e.VADD(T1, T1, vOne.As(a))
	e.FMUL(T3, T3, X)
	e.FMUL(T3, T3, T1)
}

// ---- alibi / rpe_bias: softmaxRow ----

// softmaxRow emits softmaxRow(row, bias []float32, scale float32):
// row[j] = softmax_j(scale·row[j] + bias[j]) in three passes.
// R0 cursor, R1 bias cursor, R2 length, R3 trip counter, R8 row base.
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

	e.Comment("Pass 2: row[j] = e^(exponent); sum in V18 (lanes) and F17. While |max| < 2^24 the")
	e.Comment("exponent is (bias[j] − max) + row[j]·scale: bias[j] − max is exact for the biases")
	e.Comment("that matter (Sterbenz: within a factor 2 of max) and the fused multiply-add")
	e.Comment("rounds once, so a large bias shared by competing keys costs no precision; max's")
	e.Comment("own rounding, ≤ ulp(max)/2, is a constant shift softmax cancels. Beyond 2^24 that")
	e.Comment("shift could reach e^x's range, so the exponent is fl(bias[j] + row[j]·scale) − max,")
	e.Comment("exactly 0 for the maximum.")
	e.VMOV(VReg(16).B16(), VReg(30).B16()) // scale: V30 becomes an exp constant
	loadExpConsts(e)
	e.VEOR(VReg(18).B16(), VReg(18).B16(), VReg(18).B16())
	e.VEOR(VReg(17).B16(), VReg(17).B16(), VReg(17).B16())
	exponent := func(precise bool, a Arrangement) {
		if precise {
			e.FSUB(VReg(0).As(a), VReg(0).As(a), VReg(19).As(a))
			e.VFMLA(VReg(0).As(a), VReg(1).As(a), VReg(16).As(a))
		} else {
			e.VFMLA(VReg(0).As(a), VReg(1).As(a), VReg(16).As(a))
			e.FSUB(VReg(0).As(a), VReg(0).As(a), VReg(19).As(a))
		}
	}
	pass2 := func(precise bool, hint string) {
		e.Mov(r0, r8)
		e.Mov(r1, r10)
		forEach(e, hint, r2, r3, nil, func() {
			e.VLD1(r1, true, VReg(0).S4())
			e.VLD1(r0, false, VReg(1).S4())
			exponent(precise, S4)
			expVec(e, S4, 0, 1, 2, 3)
			e.FADD(VReg(18).S4(), VReg(18).S4(), VReg(3).S4())
			e.VST1(r0, true, VReg(3).S4())
		}, func() {
			e.LoadS(0, r1, 4)
			e.LoadS(1, r0, 0)
			exponent(precise, S2)
			expVec(e, S2, 0, 1, 2, 3)
			e.FADDS(17, 17, 3)
			e.StoreS(3, r0, 4)
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
	e.FADDP(VReg(18).S4(), VReg(18).S4(), VReg(18).S4())
	e.FADDP(VReg(18).S4(), VReg(18).S4(), VReg(18).S4())
	e.FADDS(17, 17, 18)
	e.FMOVSOne(16)
	e.FDIVS(16, 16, 17)
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
// through the same expVec as softmaxRow (len(src) == len(dst)).
func expKernel(e *Emitter, name string) {
	e.Comment("func %s(dst, src []float32)", name)
	e.Comment("Test-only: dst[i] = e^src[i] with softmaxRow's vector expf.")
	e.Text(name, 48)
	e.LoadArg(r0, Arg{"dst_base", 0})
	e.LoadArg(r2, Arg{"dst_len", 8})
	e.LoadArg(r1, Arg{"src_base", 24})
	loadExpConsts(e)
	forEach(e, "exp", r2, r3, nil, func() {
		e.VLD1(r1, true, VReg(0).S4())
		expVec(e, S4, 0, 1, 2, 3)
		e.VST1(r0, true, VReg(3).S4())
	}, func() {
		e.LoadS(0, r1, 4)
		expVec(e, S2, 0, 1, 2, 3)
		e.StoreS(3, r0, 4)
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
