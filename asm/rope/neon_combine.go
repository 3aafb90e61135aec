package rope

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// combineRowsNEON emits combineRowsNEON(rows, hi, low, pos, mask) (abi.CombineRows):
// the table rows by angle addition on float64 pairs of lanes, FMUL, FSUB
// and FADD kept separate (no FMLA: the Go kernel forbids fusion too) and
// FCVTN/FCVTN2 rounding to nearest even, so the rows are bit-identical to
// the Go kernel's. Pairs go in blocks of 4 (two D2 vectors per operand),
// then one block of 2, then a single pair, all unrolled for nFreq.
//
// R0 row, R1 hi, R2 low, R3 pos cursor, R4 tokens left, R5 mask, R6 cos
// of the low row, R7 the low row's bytes, R8 sin of the low row, R9 hi cos,
// R10 hi sin, R11 row cos cursor, R12 row sin cursor.
func combineRowsNEON(e *arm64.Emitter, name string, p Params) {
	k := abi.CombineRows
	nf := p.RotaryDim / 2
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("rows[t] = float32 of hi·low[pos[t]&mask] per pair (angle addition, unfused float64).")
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "rows_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "hi_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "low_base"))
	e.LoadArg(arm64.R3, e.Arg(k, "pos_base"))
	e.LoadArg(arm64.R4, e.Arg(k, "pos_len"))
	e.LoadArg(arm64.R5, e.Arg(k, "mask"))
	done := e.NewLabel("combine_done")
	e.CBZ(arm64.R4, done)
	e.MovImm(arm64.R7, int64(16*nf))
	sinOff := 4 * nf
	if p.Interleaved {
		sinOff = 4 * p.RotaryDim
	}
	loop := e.NewLabel("combine_token")
	e.Label(loop)
	e.LoadW32Post(arm64.R6, arm64.R3)
	e.Raw("\tAND R5, R6, R6")
	e.Mul(arm64.R6, arm64.R6, arm64.R7)
	e.Add(arm64.R6, arm64.R2, arm64.R6)
	e.AddImm(arm64.R8, arm64.R6, 8*nf)
	e.Mov(arm64.R9, arm64.R1)
	e.AddImm(arm64.R10, arm64.R1, 8*nf)
	e.Mov(arm64.R11, arm64.R0)
	e.AddImm(arm64.R12, arm64.R0, sinOff)

	// block combines nv D2 vectors (2·nv pairs): lc V0.., ls V2.., hc V4..,
	// hs V6..; cos into V16.., sin into V20...
	block := func(nv int) {
		s4 := func(first arm64.VReg) []arm64.Vec { return arm64.Vecs(first, nv, 1, arm64.S4) }
		e.VLD1(arm64.R6, true, s4(0)...)
		e.VLD1(arm64.R8, true, s4(2)...)
		e.VLD1(arm64.R9, true, s4(4)...)
		e.VLD1(arm64.R10, true, s4(6)...)
		for j := 0; j < nv; j++ {
			lc, ls, hc, hs := arm64.VReg(0+j).D2(), arm64.VReg(2+j).D2(), arm64.VReg(4+j).D2(), arm64.VReg(6+j).D2()
			cs, t, sn, u := arm64.VReg(16+j).D2(), arm64.VReg(18+j).D2(), arm64.VReg(20+j).D2(), arm64.VReg(22+j).D2()
			e.FMUL(cs, hc, lc)
			e.FMUL(t, hs, ls)
			e.FSUB(cs, cs, t) // hc·lc − hs·ls
			e.FMUL(sn, hs, lc)
			e.FMUL(u, hc, ls)
			e.FADD(sn, sn, u) // hs·lc + hc·ls
		}
	}
	// narrow packs V16/V17 (cos) into V24 and V20/V21 (sin) into V26: S4
	// for two vectors, S2 for one.
	narrow := func(nv int) arm64.Arrangement {
		e.FCVTN(arm64.VReg(24).S2(), arm64.VReg(16).D2())
		e.FCVTN(arm64.VReg(26).S2(), arm64.VReg(20).D2())
		if nv == 1 {
			return arm64.S2
		}
		e.FCVTN(arm64.VReg(24).S4(), arm64.VReg(17).D2())
		e.FCVTN(arm64.VReg(26).S4(), arm64.VReg(21).D2())
		return arm64.S4
	}
	// put stores V24 at R11 and V26 at R12 (post-increment); interleaved,
	// each lane twice (VST2 of a vector and its copy).
	put := func(a arm64.Arrangement) {
		if !p.Interleaved {
			e.VST1(arm64.R11, true, arm64.VReg(24).As(a))
			e.VST1(arm64.R12, true, arm64.VReg(26).As(a))
			return
		}
		e.VMOV(arm64.VReg(25).B16(), arm64.VReg(24).B16())
		e.VMOV(arm64.VReg(27).B16(), arm64.VReg(26).B16())
		e.VST2(arm64.R11, true, arm64.VReg(24).As(a), arm64.VReg(25).As(a))
		e.VST2(arm64.R12, true, arm64.VReg(26).As(a), arm64.VReg(27).As(a))
	}
	i := 0
	for ; i+4 <= nf; i += 4 {
		block(2)
		put(narrow(2))
	}
	if i+2 <= nf {
		block(1)
		put(narrow(1))
		i += 2
	}
	if i < nf {
		// One pair: FMOVD loads zero the upper lane, which stays 0·0.
		for _, r := range []struct {
			v   arm64.VReg
			ptr arm64.Reg
		}{{0, arm64.R6}, {2, arm64.R8}, {4, arm64.R9}, {6, arm64.R10}} {
			e.LoadD(r.v, r.ptr, 0)
		}
		lc, ls, hc, hs := arm64.VReg(0).D2(), arm64.VReg(2).D2(), arm64.VReg(4).D2(), arm64.VReg(6).D2()
		cs, t, sn, u := arm64.VReg(16).D2(), arm64.VReg(18).D2(), arm64.VReg(20).D2(), arm64.VReg(22).D2()
		e.FMUL(cs, hc, lc)
		e.FMUL(t, hs, ls)
		e.FSUB(cs, cs, t)
		e.FMUL(sn, hs, lc)
		e.FMUL(u, hc, ls)
		e.FADD(sn, sn, u)
		narrow(1)
		if p.Interleaved {
			e.VDUPLane(arm64.VReg(24).S2(), 24, 0)
			e.VDUPLane(arm64.VReg(26).S2(), 26, 0)
			e.StoreD(24, arm64.R11, 0)
			e.StoreD(26, arm64.R12, 0)
		} else {
			e.StoreS(24, arm64.R11, 0)
			e.StoreS(26, arm64.R12, 0)
		}
	}
	e.AddImm(arm64.R0, arm64.R0, 4*p.RowLen)
	e.SubsImm(arm64.R4, arm64.R4, 1)
	e.BNE(loop)
	e.Label(done)
	e.RET()
	e.End()
}
