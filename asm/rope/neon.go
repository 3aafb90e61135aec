package rope

import "github.com/posenc/posenc/asm/arm64"

// ropeGen emits one rotate kernel for fixed HeadDim, RotaryDim and layout.
//
// Registers: R0 q (destination) of the token, R19 qSrc of the token, R1
// qHeads, R20 qStride in bytes, R21 the bytes from where a head's x_i
// cursors stop to the next head (qHeadStride·4 less what the rotation
// consumed); R2, R3, R23, R24 the same for k (k is
// rotated in place only: kSrc is not read); R4 table, R5 idx cursor,
// R6 tokens left, R7 row, R8 heads left, R9 row stride in bytes, R25 and
// R10 the destination and source cursors of x_i (or of the interleaved
// pairs), R11 and R16 those of x_{i+n} (half), R12 cos cursor, R13 sin
// cursor, R14 block counter and scratch, R15 sign bits.
//
// With 16-bit storage (abi.Rotate16, neon16.go) the same loops move 2-byte
// elements: strides, cursors and the copied dims count bytes of those, each
// load is widened to float32 lanes before the rotation and each result
// narrowed before the store; the table stays float32.
type ropeGen struct {
	e            *arm64.Emitter
	headDim, rot int // HeadDim, RotaryDim
	interleaved  bool
	row          int    // RowLen: floats per table row
	storage      string // "" (float32), "f16" or "bf16" (Params.Storage)
}

// rowLen is the number of floats per table row (Params.RowLen).
func (g *ropeGen) rowLen() int { return g.row }

// text emits the whole TEXT block of the rotate kernel called name.
func (g *ropeGen) text(name string) {
	e := g.e
	k := g.kernel()
	e.Comment("func %s%s", name, k.Signature())
	layout := "half (pairs i, i+n)"
	if g.interleaved {
		layout = "interleaved (pairs 2i, 2i+1)"
	}
	e.Comment("HeadDim %d, RotaryDim %d, layout %s, row %d floats.", g.headDim, g.rot, layout, g.rowLen())
	if g.storage != "" {
		e.Comment("Storage %s: 16-bit elements widened to float32, narrowed to nearest even.", g.storage)
	}
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "q_base"))
	e.LoadArg(arm64.R19, e.Arg(k, "qSrc_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "qHeads"))
	e.LoadArg(arm64.R20, e.Arg(k, "qStride"))
	e.LoadArg(arm64.R21, e.Arg(k, "qHeadStride"))
	e.LoadArg(arm64.R2, e.Arg(k, "k_base"))
	e.LoadArg(arm64.R3, e.Arg(k, "kHeads"))
	e.LoadArg(arm64.R23, e.Arg(k, "kStride"))
	e.LoadArg(arm64.R24, e.Arg(k, "kHeadStride"))
	e.Comment("strides in bytes; head strides less the bytes a head's rotation consumes")
	for _, r := range []arm64.Reg{arm64.R20, arm64.R21, arm64.R23, arm64.R24} {
		e.LslImm(r, r, g.shift())
	}
	e.MovImm(arm64.R14, int64(g.consumed()))
	e.Sub(arm64.R21, arm64.R21, arm64.R14)
	e.Sub(arm64.R24, arm64.R24, arm64.R14)
	e.LoadArg(arm64.R4, e.Arg(k, "table_base"))
	e.LoadArg(arm64.R5, e.Arg(k, "idx_base"))
	e.LoadArg(arm64.R6, e.Arg(k, "idx_len"))
	e.LoadArgW(arm64.R15, e.Arg(k, "sign"))
	e.MovImm(arm64.R9, int64(g.rowLen()*4))
	done := e.NewLabel("done")
	neg := e.NewLabel("inverse")
	e.CBZ(arm64.R6, done)
	e.Comment("sign < 0 (Inverse): the same loops with FMLA and FMLS swapped.")
	e.TBNZ(31, arm64.R15, neg)
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
	e.LoadW32Post(arm64.R7, arm64.R5)
	e.Mul(arm64.R7, arm64.R7, arm64.R9)
	e.Add(arm64.R7, arm64.R7, arm64.R4)
	if g.resident() {
		g.loadRowAll()
	}
	// Only the loops a public function reaches (abi.Rotate): forward, q in
	// place or from a separate source and k in place (every caller passes
	// k = kSrc); inverse, q in place (Inverse and InverseMRoPE pass no k).
	g.heads("q", arm64.R0, arm64.R19, arm64.R1, arm64.R21, neg, !neg)
	if !neg {
		g.heads("k", arm64.R2, arm64.R2, arm64.R3, arm64.R24, false, false)
	}
	e.Comment("next token: every cursor by its tensor's stride")
	e.Add(arm64.R0, arm64.R0, arm64.R20)
	if !neg {
		e.Add(arm64.R19, arm64.R19, arm64.R20)
		e.Add(arm64.R2, arm64.R2, arm64.R23)
	}
	e.SubsImm(arm64.R6, arm64.R6, 1)
	e.BNE(tok)
	e.RET()
}

// consumed is how far a head's rotation advances the x_i cursors R25 and
// R10: n pairs' first halves (half) or all RotaryDim dims (interleaved).
func (g *ropeGen) consumed() int {
	if g.interleaved {
		return g.es() * g.rot
	}
	return g.es() * (g.rot / 2)
}

// heads emits the loop over the cnt heads of one tensor of the token,
// destination dst and source src; adj is the head stride less consumed().
// The loop comes in place and, with fromSrc, also from a separate source
// (with the copy of dims RotaryDim..HeadDim), taken when dst and src differ.
func (g *ropeGen) heads(which string, dst, src, cnt, adj arm64.Reg, neg, fromSrc bool) {
	e := g.e
	skip := e.NewLabel(which + "skip")
	e.Mov(arm64.R8, cnt)
	e.CBZ(arm64.R8, skip)
	e.Mov(arm64.R25, dst)
	loop := func(inPlace bool) {
		l := e.NewLabel(which + "head")
		e.Label(l)
		g.head(neg, inPlace)
		e.Add(arm64.R25, arm64.R25, adj)
		if !inPlace {
			e.Add(arm64.R10, arm64.R10, adj)
		}
		e.SubsImm(arm64.R8, arm64.R8, 1)
		e.BNE(l)
	}
	if fromSrc {
		inPlace := e.NewLabel(which + "inplace")
		e.Mov(arm64.R10, src)
		e.Sub(arm64.R14, dst, src)
		e.CBZ(arm64.R14, inPlace)
		loop(false)
		e.B(skip)
		e.Label(inPlace)
	}
	loop(true)
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
	g.e.Mov(arm64.R12, arm64.R7)
	g.e.AddImm(arm64.R13, arm64.R7, g.rowLen()*2)
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

// head rotates the head whose x_i cursors are R25 (destination) and R10
// (source; R25 in place), leaving them consumed() bytes further; from a
// separate source it also copies the head's dims RotaryDim..HeadDim.
func (g *ropeGen) head(neg, inPlace bool) {
	e := g.e
	n := g.rot / 2
	switch {
	case !g.interleaved:
		e.AddImm(arm64.R11, arm64.R25, n*g.es())
		if !inPlace {
			e.AddImm(arm64.R16, arm64.R10, n*g.es())
		}
	case inPlace:
		e.Mov(arm64.R10, arm64.R25) // the interleaved loads post-increment their own cursor
	}
	if !g.resident() {
		g.rowCursors()
	}
	blocks, tail := g.steps()
	step := func(v int) {
		if !g.resident() {
			g.loadRow(v)
		}
		g.rotateStep(v, neg, inPlace)
	}
	switch {
	case blocks > arm64.MaxUnroll:
		blk := e.NewLabel("blk")
		e.MovImm(arm64.R14, int64(blocks))
		e.Label(blk)
		step(4)
		e.SubsImm(arm64.R14, arm64.R14, 1)
		e.BNE(blk)
	default:
		for i := 0; i < blocks; i++ {
			step(4)
		}
	}
	for _, v := range tail {
		step(v)
	}
	if copyRest := !inPlace && g.headDim > g.rot; copyRest {
		// The cursors past the last rotated dim point at dim RotaryDim;
		// half copies through the x_{i+n} ones, leaving R25 and R10 alone.
		if g.interleaved {
			e.Mov(arm64.R11, arm64.R25)
			e.Mov(arm64.R16, arm64.R10)
		}
		g.copyBytes(arm64.R11, arm64.R16, g.es()*(g.headDim-g.rot))
	}
}

// copyBytes copies n bytes (a multiple of 4: an even number of elements)
// from cursor s to cursor d, advancing both, through V18..V21: temporaries
// of rotateStep in both layouts, never a resident cos or sin.
func (g *ropeGen) copyBytes(d, s arm64.Reg, n int) {
	e := g.e
	for ; n >= 64; n -= 64 {
		v := arm64.Vecs(18, 4, 1, arm64.S4)
		e.VLD1(s, true, v...)
		e.VST1(d, true, v...)
	}
	if n >= 16 {
		v := arm64.Vecs(18, n/16, 1, arm64.S4)
		e.VLD1(s, true, v...)
		e.VST1(d, true, v...)
		n %= 16
	}
	if n >= 8 {
		e.LoadD(18, s, 8)
		e.StoreD(18, d, 8)
		n -= 8
	}
	if n == 4 {
		e.LoadS(18, s, 4)
		e.StoreS(18, d, 4)
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
func (g *ropeGen) stepRegs(v int) (a arm64.Arrangement, nv int, c, s, x0, x1, y0, y1 []arm64.Vec) {
	a, nv = arm64.S4, v
	if v < 0 {
		a, nv = arm64.S2, 1
	}
	if g.interleaved {
		c, s = arm64.Vecs(0, nv, 1, a), arm64.Vecs(5, nv, 1, a)
		x0, x1 = arm64.Vecs(10, nv, 2, a), arm64.Vecs(11, nv, 2, a)
		y0, y1 = arm64.Vecs(18, nv, 2, a), arm64.Vecs(19, nv, 2, a)
		switch v {
		case -2:
			c, s = arm64.Vecs(26, 1, 1, a), arm64.Vecs(28, 1, 1, a)
		case -1:
			c, s = arm64.Vecs(30, 1, 1, a), arm64.Vecs(31, 1, 1, a)
		}
	} else {
		c, s = arm64.Vecs(0, nv, 1, a), arm64.Vecs(4, nv, 1, a)
		x0, x1 = arm64.Vecs(8, nv, 1, a), arm64.Vecs(12, nv, 1, a)
		y0, y1 = arm64.Vecs(16, nv, 1, a), arm64.Vecs(20, nv, 1, a)
		switch v {
		case -2:
			c, s = arm64.Vecs(24, 1, 1, a), arm64.Vecs(25, 1, 1, a)
		case -1:
			c, s = arm64.Vecs(26, 1, 1, a), arm64.Vecs(27, 1, 1, a)
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
		e.LoadS(c[0].R, arm64.R12, w)
		e.LoadS(s[0].R, arm64.R13, w)
	case g.interleaved:
		// Row entries come in equal pairs; a VLD2 keeps one copy in its
		// first register. The second (discarded) register is the first of
		// the next load, so nv loads fill nv+1 registers.
		for i := 0; i < nv; i++ {
			e.VLD2(arm64.R12, true, c[i], arm64.Vec{R: c[i].R + 1, A: a})
		}
		for i := 0; i < nv; i++ {
			e.VLD2(arm64.R13, true, s[i], arm64.Vec{R: s[i].R + 1, A: a})
		}
	case v == -2:
		e.LoadD(c[0].R, arm64.R12, 8)
		e.LoadD(s[0].R, arm64.R13, 8)
	default:
		e.VLD1(arm64.R12, true, c...)
		e.VLD1(arm64.R13, true, s...)
	}
}

// rotateStep rotates the pairs of one step (see stepRegs) whose cos and sin
// are loaded, advancing the x cursors.
func (g *ropeGen) rotateStep(v int, neg, inPlace bool) {
	e := g.e
	x := arm64.R25 // destination cursor of x_i
	_, nv, c, s, x0, x1, y0, y1 := g.stepRegs(v)
	switch {
	case g.storage != "":
		g.load16(v, inPlace, x0, x1)
	case g.interleaved && v == -1:
		e.LoadS(x0[0].R, arm64.R10, 4)
		e.LoadS(x1[0].R, arm64.R10, 4)
	case g.interleaved:
		for i := 0; i < nv; i++ {
			e.VLD2(arm64.R10, true, x0[i], x1[i])
		}
	case inPlace && v == -1:
		e.LoadS(x0[0].R, x, 0)
		e.LoadS(x1[0].R, arm64.R11, 0)
	case inPlace && v == -2:
		e.LoadD(x0[0].R, x, 0)
		e.LoadD(x1[0].R, arm64.R11, 0)
	case inPlace:
		e.VLD1(x, false, x0...)
		e.VLD1(arm64.R11, false, x1...)
	case v == -1:
		e.LoadS(x0[0].R, arm64.R10, 4)
		e.LoadS(x1[0].R, arm64.R16, 4)
	case v == -2:
		e.LoadD(x0[0].R, arm64.R10, 8)
		e.LoadD(x1[0].R, arm64.R16, 8)
	default:
		e.VLD1(arm64.R10, true, x0...)
		e.VLD1(arm64.R16, true, x1...)
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
	case g.storage != "":
		g.store16(v, x0, x1, y0, y1)
	case g.interleaved && v == -1:
		e.StoreS(y0[0].R, x, 4)
		e.StoreS(y1[0].R, x, 4)
	case g.interleaved:
		for i := 0; i < nv; i++ {
			e.VST2(x, true, y0[i], y1[i])
		}
	case v == -1:
		e.StoreS(y0[0].R, x, 4)
		e.StoreS(y1[0].R, arm64.R11, 4)
	case v == -2:
		e.StoreD(y0[0].R, x, 8)
		e.StoreD(y1[0].R, arm64.R11, 8)
	default:
		e.VST1(x, true, y0...)
		e.VST1(arm64.R11, true, y1...)
	}
}
