package attention

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// pairOrder emits pairOrder16AVX512(x, inverse) (abi.PairOrder16) for
// HeadDim d: for every row of d floats of x, each whole block of 32 is
// permuted by VPERMI2PS over its two 16-float halves, into its even then
// its odd elements, or (inverse ≠ 0) back. The rows are walked while at
// least d floats are left, so the kernel never reads or writes past x.
func (g gen) pairOrder(d int) {
	c := g.Ctx
	k := abi.PairOrder16
	name := k.Field + g.ISA.Suffix
	g.Begin(k, name+" is the "+g.ISA.Name+" kernels."+k.Field+" for HeadDim "+strconv.Itoa(d)+": the pair order of its bf16 scoresKV16 and valuesKV16.",
		"It trusts its arguments: len(x) is a multiple of HeadDim.")
	blocks := d / 32
	if blocks == 0 {
		c.RET()
		return
	}
	// even, odd: lane i takes element 2i, 2i+1 of the block (a ++ b);
	// lo, hi: the inverse, lane i of the natural halves from the even and
	// odd halves (i/2 of the evens for even i, 16 + i/2 of the odds).
	idx := func(name string, f func(i int) int) operand.Mem {
		vals := make([]operand.Constant, 16)
		for i := range vals {
			vals[i] = operand.U32(uint32(f(i)))
		}
		return g.Pool.Add(name, vals)
	}
	even := idx("pair16_even", func(i int) int { return 2 * i })
	odd := idx("pair16_odd", func(i int) int { return 2*i + 1 })
	lo := idx("pair16_lo", func(i int) int { return i/2 + 16*(i%2) })
	hi := idx("pair16_hi", func(i int) int { return 8 + i/2 + 16*(i%2) })

	x, n := c.GP64(), c.GP64()
	c.Load(c.Param("x").Base(), x)
	c.Load(c.Param("x").Len(), n)
	first, second := c.ZMM(), c.ZMM()
	inverse := g.NewLabel("pair_inverse")
	done := g.NewLabel("pair_done")
	c.CMPQ(g.arg("inverse"), operand.U8(0))
	c.JNE(operand.LabelRef(inverse))
	c.VMOVDQU32(even, first)
	c.VMOVDQU32(odd, second)
	g.pairRows(x, n, d, blocks, first, second, "pair_fwd")
	c.JMP(operand.LabelRef(done))
	c.Label(inverse)
	c.VMOVDQU32(lo, first)
	c.VMOVDQU32(hi, second)
	g.pairRows(x, n, d, blocks, first, second, "pair_inv")
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// pairRows emits the row loop of pairOrder: while n ≥ d floats are left
// at x, each whole block of 32 of the row becomes perm(first) at its first
// 16 floats and perm(second) at the next 16, both taken from the block's
// 32 floats as they were.
func (g gen) pairRows(x, n reg.GPVirtual, d, blocks int, first, second reg.VecVirtual, stem string) {
	c := g.Ctx
	top, end := g.NewLabel(stem), g.NewLabel(stem+"_end")
	c.Label(top)
	c.CMPQ(n, operand.U32(uint32(d)))
	c.JB(operand.LabelRef(end))
	for b := 0; b < blocks; b++ {
		a, p, q := c.ZMM(), c.ZMM(), c.ZMM()
		c.VMOVUPS(amd64.Mem(x, 128*b), a)
		c.VMOVDQA32(first, p)
		c.VMOVDQA32(second, q)
		c.VPERMI2PS(amd64.Mem(x, 128*b+64), a, p)
		c.VPERMI2PS(amd64.Mem(x, 128*b+64), a, q)
		c.VMOVUPS(p, amd64.Mem(x, 128*b))
		c.VMOVUPS(q, amd64.Mem(x, 128*b+64))
	}
	c.ADDQ(operand.U32(uint32(4*d)), x)
	c.SUBQ(operand.U32(uint32(d)), n)
	c.JMP(operand.LabelRef(top))
	c.Label(end)
}
