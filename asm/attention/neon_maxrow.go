package attention

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// maxRowNEON emits maxRow(row, m): m[0] = max(m[0], row...). NEON's FMAX
// (vector, pairwise and scalar) returns NaN when either operand is NaN, so
// the result is NaN when any value is, as Go's max. Blocks of four vectors
// fold into V0–V3 (each starting as m[0] in every lane), single vectors into
// V0; V0–V3 are then folded to lane 0 of V0 (FMAX, then FMAXP twice), and
// the last 1–3 floats join one at a time with the scalar FMAXS, so no
// zero-filled lane ever enters the maximum.
func maxRowNEON(e *arm64.Emitter, name string) {
	k := abi.MaxRow
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("m[0] = max(m[0], row[0], …, row[len(row)−1]), NaN if any is NaN; len(m) ≥ 1.")
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "row_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "row_len"))
	e.LoadArg(arm64.R1, e.Arg(k, "m_base"))
	e.LoadS(4, arm64.R1, 0)
	for i := 0; i < 4; i++ {
		e.VDUPLane(arm64.VReg(i).S4(), 4, 0)
	}
	v := func(i int) arm64.Vec { return arm64.VReg(i).S4() }
	from4, fold, end := e.NewLabel("maxrow_from4_"), e.NewLabel("maxrow_fold"), e.NewLabel("maxrow_end")
	loop16, loop4, loop1 := e.NewLabel("maxrow_x16_"), e.NewLabel("maxrow_x4_"), e.NewLabel("maxrow_x1_")
	e.LsrImm(arm64.R3, arm64.R2, 4)
	e.CBZ(arm64.R3, from4)
	e.Label(loop16)
	e.VLD1(arm64.R0, true, arm64.Vecs(4, 4, 1, arm64.S4)...)
	for i := 0; i < 4; i++ {
		e.FMAX(v(i), v(i), v(4+i))
	}
	e.SubsImm(arm64.R3, arm64.R3, 1)
	e.BNE(loop16)
	e.Label(from4)
	e.LsrImm(arm64.R3, arm64.R2, 2)
	e.AndImm(arm64.R3, arm64.R3, 3)
	e.CBZ(arm64.R3, fold)
	e.Label(loop4)
	e.VLD1(arm64.R0, true, v(4))
	e.FMAX(v(0), v(0), v(4))
	e.SubsImm(arm64.R3, arm64.R3, 1)
	e.BNE(loop4)
	e.Label(fold)
	e.FMAX(v(0), v(0), v(1))
	e.FMAX(v(2), v(2), v(3))
	e.FMAX(v(0), v(0), v(2))
	e.FMAXP(v(0), v(0), v(0))
	e.FMAXP(v(0), v(0), v(0)) // lane 0: the maximum so far
	e.AndImm(arm64.R3, arm64.R2, 3)
	e.CBZ(arm64.R3, end)
	e.Label(loop1)
	e.LoadS(4, arm64.R0, 4)
	e.FMAXS(0, 0, 4)
	e.SubsImm(arm64.R3, arm64.R3, 1)
	e.BNE(loop1)
	e.Label(end)
	e.StoreS(0, arm64.R1, 0)
	e.RET()
	e.End()
}
