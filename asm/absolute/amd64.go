package absolute

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// gen emits the addRows kernel of one AVX variant.
type gen struct{ *amd64.Gen }

// addRows emits addRows<ISA>(x, table, idx): for every token t,
// x[t·D : (t+1)·D] += table[idx[t]·D : (idx[t]+1)·D] with D = DModel.
func (g gen) addRows(p Params) {
	c := g.Ctx
	D := p.DModel
	g.Begin(abi.AddRows, "addRows"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.addRows for DModel "+strconv.Itoa(D)+".",
		"It trusts its arguments: the caller has checked every length and index.")
	x, tb, ip, nt := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("x").Base(), x)
	c.Load(c.Param("table").Base(), tb)
	c.Load(c.Param("idx").Base(), ip)
	c.Load(c.Param("idx").Len(), nt)
	g.SetupMasks(D)

	done := g.NewLabel("rows_done")
	loop := g.NewLabel("rows_token")
	c.TESTQ(nt, nt)
	c.JZ(operand.LabelRef(done))
	c.Label(loop)
	row := c.GP64()
	c.MOVLQSX(amd64.Mem(ip, 0), row)
	c.IMUL3Q(operand.U32(uint32(4*D)), row, row)
	c.ADDQ(tb, row)
	g.addSpan(x, row, D)
	c.ADDQ(operand.U32(uint32(4*D)), x)
	c.ADDQ(operand.U8(4), ip)
	c.DECQ(nt)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// maxUnrolled is the most vector operations a compile-time span is fully
// unrolled into; longer spans loop over blocks of amd64.Unroll vectors.
const maxUnrolled = 16

// addSpan emits dst[i] += src[i] for i < length (a compile-time constant);
// dst and src are preserved.
func (g gen) addSpan(dst, src reg.GPVirtual, length int) {
	c := g.Ctx
	L := g.ISA.Lanes
	add := func(pc amd64.Piece, d, s reg.Register) {
		v := g.RegFor(pc)
		g.Load(pc, amd64.Mem(d, 4*pc.Off), v)
		c.VADDPS(g.OperandFor(pc, amd64.Mem(s, 4*pc.Off)), v, v)
		g.Store(pc, v, amd64.Mem(d, 4*pc.Off))
	}
	if len(g.Split(length)) <= maxUnrolled {
		for _, pc := range g.Split(length) {
			add(pc, dst, src)
		}
		return
	}
	blk := amd64.Unroll * L
	iters := length / blk
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.MOVQ(dst, d)
	c.MOVQ(src, s)
	c.MOVQ(operand.U32(uint32(iters)), n)
	top := g.NewLabel("span")
	c.Label(top)
	for u := 0; u < amd64.Unroll; u++ {
		add(amd64.Piece{Off: u * L, N: L}, d, s)
	}
	c.ADDQ(operand.U32(uint32(4*blk)), d)
	c.ADDQ(operand.U32(uint32(4*blk)), s)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(top))
	for _, pc := range g.Split(length - iters*blk) {
		add(pc, d, s)
	}
}
