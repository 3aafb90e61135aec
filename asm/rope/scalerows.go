package rope

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
)

// The scaleRows kernel (abi.ScaleRows): row t of x times scales[t], the
// per-token query temperature of Llama 4's NoPE layers (ScaleQ). One
// multiply per element, so the result is the correctly rounded float32
// product x·scales[t] on every ISA, bit-identical to the Go kernel.

// scaleRows emits scaleRows<ISA>(x, scales, rowLen): per token the factor
// is broadcast once and the row is walked by amd64.VectorLoop (blocks of
// Unroll vectors, single vectors, a masked tail).
func (g gen) scaleRows() {
	c := g.Ctx
	g.Begin(abi.ScaleRows, "scaleRows"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.scaleRows: x[t·rowLen+j] *= scales[t].",
		"It trusts its arguments: len(x) ≥ len(scales)·rowLen.")
	row, sc, tokens, rowLen := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("x").Base(), row)
	c.Load(c.Param("scales").Base(), sc)
	c.Load(c.Param("scales").Len(), tokens)
	c.Load(c.Param("rowLen"), rowLen)
	done := g.NewLabel("scale_done")
	c.TESTQ(tokens, tokens)
	c.JZ(operand.LabelRef(done))
	c.TESTQ(rowLen, rowLen)
	c.JZ(operand.LabelRef(done))
	step := c.GP64()
	c.MOVQ(rowLen, step)
	c.SHLQ(operand.U8(2), step)

	L := g.ISA.Lanes
	loop := g.NewLabel("scale_token")
	c.Label(loop)
	f := g.Vec()
	c.VBROADCASTSS(amd64.Mem(sc, 0), f)
	p, n := c.GP64(), c.GP64()
	c.MOVQ(row, p)
	c.MOVQ(rowLen, n)
	g.VectorLoop(n, amd64.Unroll, []reg.GPVirtual{p}, func(u int) {
		v := g.Vec()
		c.VMULPS(amd64.Mem(p, 4*L*u), f, v)
		c.VMOVUPS(v, amd64.Mem(p, 4*L*u))
	}, func(t amd64.Tail) {
		v := g.Vec()
		t.Load(amd64.Mem(p, 0), v)
		c.VMULPS(v, f, v)
		t.Store(v, amd64.Mem(p, 0))
	})
	c.ADDQ(step, row)
	c.ADDQ(operand.U8(4), sc)
	c.DECQ(tokens)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// scaleRowsNEON emits scaleRows(x, scales []float32, rowLen int) for NEON.
// R0 row start, R1 scales cursor, R2 rowLen, R3 trip counter, R4 tokens
// left, R5 element cursor, R6 row bytes; V31 holds the token's factor in
// every lane.
func scaleRowsNEON(e *arm64.Emitter, name string) {
	k := abi.ScaleRows
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("x[t·rowLen+j] *= scales[t] for t < len(scales), j < rowLen.")
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "x_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "scales_base"))
	e.LoadArg(arm64.R4, e.Arg(k, "scales_len"))
	e.LoadArg(arm64.R2, e.Arg(k, "rowLen"))
	done := e.NewLabel("scale_done")
	e.CBZ(arm64.R4, done)
	e.CBZ(arm64.R2, done)
	e.LslImm(arm64.R6, arm64.R2, 2)
	loop := e.NewLabel("scale_token")
	e.Label(loop)
	e.LoadS(31, arm64.R1, 4)
	f := arm64.Vec{R: 31, A: arm64.S4}
	e.VDUPLane(f, 31, 0)
	e.Mov(arm64.R5, arm64.R0)
	vec := func(nv int) {
		d := arm64.Vecs(0, nv, 1, arm64.S4)
		e.VLD1(arm64.R5, false, d...)
		for i := range d {
			e.FMUL(d[i], d[i], f)
		}
		e.VST1(arm64.R5, true, d...)
	}
	e.ForEach("scale", arm64.R2, arm64.R3, func() { vec(4) }, func() { vec(1) }, func() {
		e.LoadS(0, arm64.R5, 0)
		e.FMULS(0, 0, 31)
		e.StoreS(0, arm64.R5, 4)
	})
	e.Add(arm64.R0, arm64.R0, arm64.R6)
	e.SubsImm(arm64.R4, arm64.R4, 1)
	e.BNE(loop)
	e.Label(done)
	e.RET()
	e.End()
}
