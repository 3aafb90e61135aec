package absolute

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// addRows64 emits addRows64(x []float32, table []float64, idx []int32) for
// a fixed DModel: x[t·D+i] = float32(float64(x[t·D+i]) + table[idx[t]·D+i]),
// widening x with FCVTL/FCVTL2, adding in float64 and narrowing once with
// FCVTN/FCVTN2 (round to nearest even).
// R0 x cursor, R4 table, R5 idx cursor, R6 tokens left, R7 row cursor,
// R9 row stride in bytes, R14 block counter; V0–V3 x, V4–V11 the table,
// V12–V19 the widened sums.
func addRows64(e *arm64.Emitter, name string, d int) {
	k := abi.AddRows64
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("x[t·%d+i] = float32(float64(x[t·%d+i]) + table[idx[t]·%d+i]).", d, d, d)
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "x_base"))
	e.LoadArg(arm64.R4, e.Arg(k, "table_base"))
	e.LoadArg(arm64.R5, e.Arg(k, "idx_base"))
	e.LoadArg(arm64.R6, e.Arg(k, "idx_len"))
	e.MovImm(arm64.R9, int64(d*8))
	done := e.NewLabel("done")
	tok := e.NewLabel("token")
	e.CBZ(arm64.R6, done)
	e.Label(tok)
	e.LoadW32Post(arm64.R7, arm64.R5)
	e.Mul(arm64.R7, arm64.R7, arm64.R9)
	e.Add(arm64.R7, arm64.R7, arm64.R4)
	// step handles nv vectors of four float32 (16·nv bytes of x, 32·nv of
	// the table).
	step := func(nv int) {
		xv := arm64.Vecs(0, nv, 1, arm64.S4)
		tv := arm64.Vecs(4, 2*nv, 1, arm64.S4) // float64 pairs, loaded as bits
		e.VLD1(arm64.R0, false, xv...)
		for i := 0; i < len(tv); i += 4 {
			e.VLD1(arm64.R7, true, tv[i:min(i+4, len(tv))]...)
		}
		for j := range nv {
			lo, hi := arm64.VReg(12+2*j), arm64.VReg(13+2*j)
			e.FCVTL(lo.D2(), xv[j].R.S2())
			e.FCVTL(hi.D2(), xv[j].R.S4())
			e.FADD(lo.D2(), lo.D2(), tv[2*j].R.D2())
			e.FADD(hi.D2(), hi.D2(), tv[2*j+1].R.D2())
			e.FCVTN(xv[j].R.S2(), lo.D2())
			e.FCVTN(xv[j].R.S4(), hi.D2())
		}
		e.VST1(arm64.R0, true, xv...)
	}
	// one handles a single element in the scalar registers.
	one := func() {
		e.LoadS(0, arm64.R0, 0)
		e.LoadD(4, arm64.R7, 8)
		e.FCVTSD(1, 0)
		e.FADDD(1, 1, 4)
		e.FCVTDS(0, 1)
		e.StoreS(0, arm64.R0, 4)
	}
	blocks := d / 16
	if blocks > arm64.MaxUnroll {
		blk := e.NewLabel("blk")
		e.MovImm(arm64.R14, int64(blocks))
		e.Label(blk)
		step(4)
		e.SubsImm(arm64.R14, arm64.R14, 1)
		e.BNE(blk)
	} else {
		for range blocks {
			step(4)
		}
	}
	rem := d % 16
	if rem >= 4 {
		step(rem / 4)
	}
	for range rem % 4 {
		one()
	}
	e.SubsImm(arm64.R6, arm64.R6, 1)
	e.BNE(tok)
	e.Label(done)
	e.RET()
	e.End()
}
