package rope

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// farRowsNEON emits farRowsNEON(rows, digits, pos) (abi.FarRows): per token
// the complex products ((D3·D2)·D1)·D0 of the digit rows of the bytes of
// pos[t], on float32 lanes with FMUL, FSUB and FADD kept separate (no FMLA,
// as in the Go kernel), so the rows are bit-identical to the Go kernel's.
// Pairs go in blocks of 8 (two S4 vectors per operand), then one block of
// 4, one of 2 and a single pair, all unrolled for nFreq.
//
// R0 row, R1 digits, R2 pos cursor, R3 tokens left, R4 the position, R9
// the bytes of a digit row, R10…R13 the four tables, R5…R8 and R14…R17 the
// cos and sin cursors of the token's rows of tables 0…3, R19 and R20 the
// row's cos and sin cursors.
func farRowsNEON(e *arm64.Emitter, name string, p Params) {
	k := abi.FarRows
	nf := p.RotaryDim / 2
	rowBytes := 8 * nf
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("rows[t] = ((D3·D2)·D1)·D0 per pair, digit rows of the bytes of pos[t] (unfused float32).")
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "rows_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "digits_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "pos_base"))
	e.LoadArg(arm64.R3, e.Arg(k, "pos_len"))
	done := e.NewLabel("far_done")
	e.CBZ(arm64.R3, done)
	e.MovImm(arm64.R9, int64(rowBytes))
	for t := 0; t < abi.FarDigits; t++ {
		e.AddImm(arm64.R10+arm64.Reg(t), arm64.R1, t*farDigitRows*rowBytes)
	}
	sinOff := 4 * nf
	if p.Interleaved {
		sinOff = 4 * p.RotaryDim
	}
	cosPtr := [abi.FarDigits]arm64.Reg{arm64.R5, arm64.R6, arm64.R7, arm64.R8}
	sinPtr := [abi.FarDigits]arm64.Reg{arm64.R14, arm64.R15, arm64.R16, arm64.R17}

	loop := e.NewLabel("far_token")
	e.Label(loop)
	e.LoadW32Post(arm64.R4, arm64.R2)
	for t := 0; t < abi.FarDigits; t++ {
		c := cosPtr[t]
		if t == 0 {
			e.AndImm(c, arm64.R4, farDigitRows-1)
		} else {
			e.LsrImm(c, arm64.R4, abi.FarDigitBits*t)
			e.AndImm(c, c, farDigitRows-1)
		}
		e.Mul(c, c, arm64.R9)
		e.Add(c, arm64.R10+arm64.Reg(t), c)
		e.AddImm(sinPtr[t], c, 4*nf)
	}
	e.Mov(arm64.R19, arm64.R0)
	e.AddImm(arm64.R20, arm64.R0, sinOff)

	// product emits nv vectors of d = x·y per lane in arrangement a:
	// dc = xc·yc − xs·ys, ds = xs·yc + xc·ys, with V20… and V22… for the
	// second products.
	product := func(a arm64.Arrangement, nv int, dc, ds, xc, xs, yc, ys arm64.VReg) {
		for j := 0; j < nv; j++ {
			v := func(r arm64.VReg) arm64.Vec { return (r + arm64.VReg(j)).As(a) }
			e.FMUL(v(dc), v(xc), v(yc))
			e.FMUL(v(20), v(xs), v(ys))
			e.FSUB(v(dc), v(dc), v(20))
			e.FMUL(v(ds), v(xs), v(yc))
			e.FMUL(v(22), v(xc), v(ys))
			e.FADD(v(ds), v(ds), v(22))
		}
	}
	// products computes the block's rows into V28… (cos) and V30… (sin)
	// once the digit rows are loaded: D3 in V0…/V2…, D2 in V4…/V6…, D1 in
	// V8…/V10…, D0 in V12…/V14….
	products := func(a arm64.Arrangement, nv int) {
		product(a, nv, 16, 18, 0, 2, 4, 6)
		product(a, nv, 24, 26, 16, 18, 8, 10)
		product(a, nv, 28, 30, 24, 26, 12, 14)
	}
	// loadVec loads nv S4 vectors of every digit row, post-incrementing.
	loadVec := func(nv int) {
		for t := range cosPtr {
			v := arm64.VReg(4 * (3 - t))
			e.VLD1(cosPtr[t], true, arm64.Vecs(v, nv, 1, arm64.S4)...)
			e.VLD1(sinPtr[t], true, arm64.Vecs(v+2, nv, 1, arm64.S4)...)
		}
	}
	// loadScalar loads 2 (FMOVD) or 1 (FMOVS) floats of every digit row
	// into the low lanes, zeroing the others, post-incrementing.
	loadScalar := func(pairs int) {
		for t := range cosPtr {
			v := arm64.VReg(4 * (3 - t))
			for _, r := range []struct {
				v   arm64.VReg
				ptr arm64.Reg
			}{{v, cosPtr[t]}, {v + 2, sinPtr[t]}} {
				if pairs == 2 {
					e.LoadD(r.v, r.ptr, 8)
				} else {
					e.LoadS(r.v, r.ptr, 4)
				}
			}
		}
	}
	// store writes nv vectors of arrangement a from V28… to R19 and V30…
	// to R20; interleaved, each lane twice (VST2 of two copies in V20/V21).
	store := func(a arm64.Arrangement, nv int) {
		for _, o := range []struct {
			v   arm64.VReg
			ptr arm64.Reg
		}{{28, arm64.R19}, {30, arm64.R20}} {
			if !p.Interleaved {
				e.VST1(o.ptr, true, arm64.Vecs(o.v, nv, 1, a)...)
				continue
			}
			for j := 0; j < nv; j++ {
				e.VMOV(arm64.VReg(20).B16(), (o.v + arm64.VReg(j)).B16())
				e.VMOV(arm64.VReg(21).B16(), (o.v + arm64.VReg(j)).B16())
				e.VST2(o.ptr, true, arm64.VReg(20).As(a), arm64.VReg(21).As(a))
			}
		}
	}
	i := 0
	for ; i+8 <= nf; i += 8 {
		loadVec(2)
		products(arm64.S4, 2)
		store(arm64.S4, 2)
	}
	if i+4 <= nf {
		loadVec(1)
		products(arm64.S4, 1)
		store(arm64.S4, 1)
		i += 4
	}
	if i+2 <= nf {
		loadScalar(2)
		products(arm64.S2, 1)
		if p.Interleaved {
			store(arm64.S2, 1)
		} else {
			e.StoreD(28, arm64.R19, 8)
			e.StoreD(30, arm64.R20, 8)
		}
		i += 2
	}
	if i < nf {
		loadScalar(1)
		products(arm64.S2, 1)
		for _, o := range []struct {
			v   arm64.VReg
			ptr arm64.Reg
		}{{28, arm64.R19}, {30, arm64.R20}} {
			if p.Interleaved {
				e.VDUPLane(o.v.S2(), o.v, 0)
				e.StoreD(o.v, o.ptr, 0)
			} else {
				e.StoreS(o.v, o.ptr, 0)
			}
		}
	}
	e.AddImm(arm64.R0, arm64.R0, 4*p.RowLen)
	e.SubsImm(arm64.R3, arm64.R3, 1)
	e.BNE(loop)
	e.Label(done)
	e.RET()
	e.End()
}
