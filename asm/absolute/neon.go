package absolute

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// addRows emits addRows(x, table []float32, idx []int32) for a fixed DModel:
// x[t·D+i] += table[idx[t]·D+i].
// R0 x cursor, R4 table, R5 idx cursor, R6 tokens left, R7 row cursor,
// R9 row stride in bytes, R14 block counter.
func addRows(e *arm64.Emitter, name string, d int) {
	e.Comment("func %s%s", name, abi.AddRows.Signature())
	e.Comment("x[t·%d+i] += table[idx[t]·%d+i].", d, d)
	e.TextFor(name, abi.AddRows)
	e.LoadArg(arm64.R0, e.Arg(abi.AddRows, "x_base"))
	e.LoadArg(arm64.R4, e.Arg(abi.AddRows, "table_base"))
	e.LoadArg(arm64.R5, e.Arg(abi.AddRows, "idx_base"))
	e.LoadArg(arm64.R6, e.Arg(abi.AddRows, "idx_len"))
	e.MovImm(arm64.R9, int64(d*4))
	done := e.NewLabel("done")
	tok := e.NewLabel("token")
	e.CBZ(arm64.R6, done)
	e.Label(tok)
	e.LoadW32Post(arm64.R7, arm64.R5)
	e.Mul(arm64.R7, arm64.R7, arm64.R9)
	e.Add(arm64.R7, arm64.R7, arm64.R4)
	step := func(nv int) {
		a, n := arm64.S4, nv
		if nv < 0 {
			a, n = arm64.S2, 1
		}
		xv, tv := arm64.Vecs(0, n, 1, a), arm64.Vecs(4, n, 1, a)
		switch nv {
		case -1:
			e.LoadS(0, arm64.R0, 0)
			e.LoadS(4, arm64.R7, 4)
		case -2:
			e.LoadD(0, arm64.R0, 0)
			e.LoadD(4, arm64.R7, 8)
		default:
			e.VLD1(arm64.R0, false, xv...)
			e.VLD1(arm64.R7, true, tv...)
		}
		for i := range xv {
			e.FADD(xv[i], xv[i], tv[i])
		}
		switch nv {
		case -1:
			e.StoreS(0, arm64.R0, 4)
		case -2:
			e.StoreD(0, arm64.R0, 8)
		default:
			e.VST1(arm64.R0, true, xv...)
		}
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
	e.SubsImm(arm64.R6, arm64.R6, 1)
	e.BNE(tok)
	e.Label(done)
	e.RET()
	e.End()
}
