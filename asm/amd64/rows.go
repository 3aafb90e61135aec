package amd64

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of full vectors per iteration of the main loops over
// run-time and long compile-time lengths.
const unroll = 4

// addRow emits addRow<ISA>(dst, src): dst[j] += src[j] for j < len(dst).
func (g *gen) addRow() {
	c := g.ctx
	c.Function("addRow" + g.isa.suffix)
	c.Attributes(attr.NOSPLIT)
	c.Doc("addRow"+g.isa.suffix+" is the "+g.isa.name+" kernels.addRow: dst[j] += src[j].",
		"It trusts its arguments: len(src) == len(dst).")
	c.SignatureExpr("func(dst, src []float32)")
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), d)
	c.Load(c.Param("src").Base(), s)
	c.Load(c.Param("dst").Len(), n)

	L := g.isa.lanes
	g.vectorLoop(n, unroll, []reg.GPVirtual{d, s}, func(u int) {
		v := g.vec()
		c.VMOVUPS(mem(d, 4*L*u), v)
		c.VADDPS(mem(s, 4*L*u), v, v)
		c.VMOVUPS(v, mem(d, 4*L*u))
	}, func(t tail) {
		v, w := g.vec(), g.vec()
		t.load(mem(d, 0), v)
		t.load(mem(s, 0), w)
		c.VADDPS(w, v, v)
		t.store(v, mem(d, 0))
	})
	c.VZEROUPPER()
	c.RET()
}

// vectorLoop emits a loop over n (a run-time element count, clobbered):
// blocks of blk full vectors, then (when blk > 1) single full vectors, then
// a masked tail. body(u) handles the u-th vector of the current block at
// byte offset 4·lanes·u from the pointers, which then advance past the
// block; tailBody handles the final 1..lanes−1 elements at the pointers.
func (g *gen) vectorLoop(n reg.GPVirtual, blk int, ptrs []reg.GPVirtual, body func(u int), tailBody func(t tail)) {
	g.vectorLoopBlocks(n, blk, ptrs, func(u, _ int) { body(u) }, tailBody)
}

// vectorLoopBlocks is vectorLoop with body(u, b) also told the number of
// vectors b of the iteration it is emitted into (blk, then 1), so that a
// body can carry state across the vectors of one block.
func (g *gen) vectorLoopBlocks(n reg.GPVirtual, blk int, ptrs []reg.GPVirtual, body func(u, b int), tailBody func(t tail)) {
	c := g.ctx
	L := g.isa.lanes
	done := g.newLabel("loop_done")
	steps := []int{blk}
	if blk > 1 {
		steps = append(steps, 1)
	}
	for _, b := range steps {
		top := g.newLabel("loop")
		next := g.newLabel("loop_end")
		c.Label(top)
		c.CMPQ(n, operand.U32(uint32(b*L)))
		c.JB(operand.LabelRef(next))
		for u := 0; u < b; u++ {
			body(u, b)
		}
		for _, p := range ptrs {
			c.ADDQ(operand.U32(uint32(4*b*L)), p)
		}
		c.SUBQ(operand.U32(uint32(b*L)), n)
		c.JMP(operand.LabelRef(top))
		c.Label(next)
	}
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef(done))
	tailBody(g.runtimeTail(n))
	c.Label(done)
}

// addRows emits addRows<ISA>(x, table, idx): for every token t,
// x[t·D : (t+1)·D] += table[idx[t]·D : (idx[t]+1)·D] with D = DModel.
func (g *gen) addRows(p Params) {
	c := g.ctx
	D := p.DModel
	c.Function("addRows" + g.isa.suffix)
	c.Attributes(attr.NOSPLIT)
	c.Doc("addRows"+g.isa.suffix+" is the "+g.isa.name+" kernels.addRows for DModel "+itoa(D)+".",
		"It trusts its arguments: the caller has checked every length and index.")
	c.SignatureExpr("func(x []float32, table []float32, idx []int32)")
	x, tb, ip, nt := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("x").Base(), x)
	c.Load(c.Param("table").Base(), tb)
	c.Load(c.Param("idx").Base(), ip)
	c.Load(c.Param("idx").Len(), nt)
	g.setupMasks(D)

	done := g.newLabel("rows_done")
	loop := g.newLabel("rows_token")
	c.TESTQ(nt, nt)
	c.JZ(operand.LabelRef(done))
	c.Label(loop)
	row := c.GP64()
	c.MOVLQSX(mem(ip, 0), row)
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
// unrolled into; longer spans loop over blocks of unroll vectors.
const maxUnrolled = 16

// addSpan emits dst[i] += src[i] for i < length (a compile-time constant);
// dst and src are preserved.
func (g *gen) addSpan(dst, src reg.GPVirtual, length int) {
	c := g.ctx
	L := g.isa.lanes
	add := func(pc piece, d, s reg.Register) {
		v := g.regFor(pc)
		g.load(pc, mem(d, 4*pc.off), v)
		c.VADDPS(g.operandFor(pc, mem(s, 4*pc.off)), v, v)
		g.store(pc, v, mem(d, 4*pc.off))
	}
	if len(g.split(length)) <= maxUnrolled {
		for _, pc := range g.split(length) {
			add(pc, dst, src)
		}
		return
	}
	blk := unroll * L
	iters := length / blk
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.MOVQ(dst, d)
	c.MOVQ(src, s)
	c.MOVQ(operand.U32(uint32(iters)), n)
	top := g.newLabel("span")
	c.Label(top)
	for u := 0; u < unroll; u++ {
		add(piece{u * L, L}, d, s)
	}
	c.ADDQ(operand.U32(uint32(4*blk)), d)
	c.ADDQ(operand.U32(uint32(4*blk)), s)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(top))
	for _, pc := range g.split(length - iters*blk) {
		add(pc, d, s)
	}
}
