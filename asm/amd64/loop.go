package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Unroll is the number of full vectors per iteration of the main loops over
// run-time and long compile-time lengths.
const Unroll = 4

// Tail is the masked access to the 1..lanes−1 elements left when a loop over
// full vectors of a run-time length ends: a VMASKMOVPS mask on AVX2, an
// opmask on AVX-512. Masked-off lanes are neither read nor written, so they
// cannot fault.
type Tail struct {
	g     *Gen
	K     reg.OpmaskVirtual // AVX-512; nil on AVX2
	YMask reg.VecVirtual    // AVX2
}

// RuntimeTail builds the tail mask for n (1 ≤ n < lanes) remaining
// elements; n is clobbered.
func (g *Gen) RuntimeTail(n reg.GPVirtual) Tail {
	t := Tail{g: g}
	if g.ISA.Lanes == 16 {
		base := g.Ctx.GP64()
		g.Ctx.LEAQ(g.Pool.TailMask16(), base)
		t.K = g.Ctx.K()
		g.Ctx.KMOVW(operand.Mem{Base: base, Index: n, Scale: 2}, t.K)
		return t
	}
	base := g.Ctx.GP64()
	g.Ctx.LEAQ(g.Pool.TailMask8(), base)
	g.Ctx.NEGQ(n)
	t.YMask = g.Ctx.YMM()
	g.Ctx.VMOVDQU(operand.Mem{Base: base, Index: n, Scale: 4, Disp: 32}, t.YMask)
	return t
}

// Load reads the tail's elements from m into dst, zeroing the other lanes.
func (t Tail) Load(m operand.Mem, dst reg.VecVirtual) {
	if t.K != nil {
		t.g.Ctx.VMOVUPS_Z(m, t.K, dst)
		return
	}
	t.g.Ctx.VMASKMOVPS(m, t.YMask, dst)
}

// Store writes the tail's elements of src to m and nothing else.
func (t Tail) Store(src reg.VecVirtual, m operand.Mem) {
	if t.K != nil {
		t.g.Ctx.VMOVUPS(src, t.K, m)
		return
	}
	t.g.Ctx.VMASKMOVPS(src, t.YMask, m)
}

// ZeroOutside clears the lanes of v that are not in the tail.
func (t Tail) ZeroOutside(v reg.VecVirtual) {
	if t.K != nil {
		t.g.Ctx.VMOVAPS_Z(v, t.K, v)
		return
	}
	t.g.Ctx.VANDPS(t.YMask, v, v)
}

// VectorLoop emits a loop over n (a run-time element count, clobbered):
// blocks of blk full vectors, then (when blk > 1) single full vectors, then
// a masked tail. body(u) handles the u-th vector of the current block at
// byte offset 4·lanes·u from the pointers, which then advance past the
// block; tailBody handles the final 1..lanes−1 elements at the pointers.
func (g *Gen) VectorLoop(n reg.GPVirtual, blk int, ptrs []reg.GPVirtual, body func(u int), tailBody func(t Tail)) {
	g.VectorLoopBlocks(n, blk, ptrs, func(u, _ int) { body(u) }, tailBody)
}

// VectorLoopBlocks is VectorLoop with body(u, b) also told the number of
// vectors b of the iteration it is emitted into (blk, then 1), so that a
// body can carry state across the vectors of one block.
func (g *Gen) VectorLoopBlocks(n reg.GPVirtual, blk int, ptrs []reg.GPVirtual, body func(u, b int), tailBody func(t Tail)) {
	c := g.Ctx
	L := g.ISA.Lanes
	done := g.NewLabel("loop_done")
	steps := []int{blk}
	if blk > 1 {
		steps = append(steps, 1)
	}
	for _, b := range steps {
		top := g.NewLabel("loop")
		next := g.NewLabel("loop_end")
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
	tailBody(g.RuntimeTail(n))
	c.Label(done)
}
