package rope

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// hiRowNEON emits hiRowNEON(h, a, b, c) (abi.HiRow): h = (a·b)·c per pair
// as complex numbers on float64 pairs of lanes, FMUL, FSUB and FADD kept
// separate (no FMLA, as in the Go kernel), so the row is bit-identical to
// the Go kernel's. Pairs go in blocks of 4 (two D2 vectors per operand),
// then one block of 2, then a single pair, all unrolled for nFreq.
//
// R0 h cos, R1 a cos, R2 b cos, R3 c cos, R4…R7 the sines of h, a, b and
// c (nFreq float64 further); every pointer advances past what it read or
// wrote.
func hiRowNEON(e *arm64.Emitter, name string, p Params) {
	k := abi.HiRow
	nf := p.RotaryDim / 2
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("h = (a·b)·c per pair as complex numbers (unfused float64).")
	e.TextFor(name, k)
	for i, a := range []string{"h_base", "a_base", "b_base", "c_base"} {
		e.LoadArg(arm64.Reg(i), e.Arg(k, a))
		e.AddImm(arm64.Reg(4+i), arm64.Reg(i), 8*nf)
	}
	// product emits nv D2 vectors of d = x·y per lane: dc = xc·yc − xs·ys,
	// ds = xs·yc + xc·ys, with t and u for the second products.
	product := func(nv int, dc, ds, xc, xs, yc, ys, t, u arm64.VReg) {
		for j := 0; j < nv; j++ {
			v := func(r arm64.VReg) arm64.Vec { return (r + arm64.VReg(j)).D2() }
			e.FMUL(v(dc), v(xc), v(yc))
			e.FMUL(v(t), v(xs), v(ys))
			e.FSUB(v(dc), v(dc), v(t))
			e.FMUL(v(ds), v(xs), v(yc))
			e.FMUL(v(u), v(xc), v(ys))
			e.FADD(v(ds), v(ds), v(u))
		}
	}
	// ac V0.., as V2.., bc V4.., bs V6.., cc V8.., cs V10..; m in V16..,
	// V18..; h in V24.., V26..; V20.., V22.. hold the second products.
	// block combines 2·nv pairs (nv D2 vectors per operand).
	block := func(nv int) {
		for r := 0; r < 6; r++ {
			// Row r/2 (a, b, c) of R1…R3 (cos, r even) or R5…R7 (sin).
			ptr := arm64.Reg(1 + r/2 + 4*(r%2))
			e.VLD1(ptr, true, arm64.Vecs(arm64.VReg(2*r), nv, 1, arm64.S4)...)
		}
		product(nv, 16, 18, 0, 2, 4, 6, 20, 22)
		product(nv, 24, 26, 16, 18, 8, 10, 20, 22)
		e.VST1(arm64.R0, true, arm64.Vecs(24, nv, 1, arm64.S4)...)
		e.VST1(arm64.R4, true, arm64.Vecs(26, nv, 1, arm64.S4)...)
	}
	i := 0
	for ; i+4 <= nf; i += 4 {
		block(2)
	}
	if i+2 <= nf {
		block(1)
		i += 2
	}
	if i < nf {
		// One pair: FMOVD loads zero the upper lane, which stays 0.
		for r := 0; r < 6; r++ {
			e.LoadD(arm64.VReg(2*r), arm64.Reg(1+r/2+4*(r%2)), 0)
		}
		product(1, 16, 18, 0, 2, 4, 6, 20, 22)
		product(1, 24, 26, 16, 18, 8, 10, 20, 22)
		e.StoreD(24, arm64.R0, 0)
		e.StoreD(26, arm64.R4, 0)
	}
	e.RET()
	e.End()
}
