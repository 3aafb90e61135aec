package absolute

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// addRows64 emits addRows64<ISA>(x, table, idx): for every token t and dim
// i < D = DModel, x[t·D+i] = float32(float64(x[t·D+i]) + table[idx[t]·D+i])
// with a float64 table, so the sum is rounded once (abi.AddRows64).
func (g gen) addRows64(p Params) {
	c := g.Ctx
	D := p.DModel
	g.Begin(abi.AddRows64, "addRows64"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.addRows64 for DModel "+strconv.Itoa(D)+".",
		"It trusts its arguments: the caller has checked every length and index.")
	x, tb, ip, nt := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("x").Base(), x)
	c.Load(c.Param("table").Base(), tb)
	c.Load(c.Param("idx").Base(), ip)
	c.Load(c.Param("idx").Len(), nt)

	done := g.NewLabel("rows64_done")
	loop := g.NewLabel("rows64_token")
	c.TESTQ(nt, nt)
	c.JZ(operand.LabelRef(done))
	c.Label(loop)
	row := c.GP64()
	c.MOVLQSX(amd64.Mem(ip, 0), row)
	c.IMUL3Q(operand.U32(uint32(8*D)), row, row)
	c.ADDQ(tb, row)
	g.addSpan64(x, row, D)
	c.ADDQ(operand.U32(uint32(4*D)), x)
	c.ADDQ(operand.U8(4), ip)
	c.DECQ(nt)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// wideLanes is the number of float64 lanes of one full vector of g's ISA
// (4 in a YMM register, 8 in a ZMM register): the float32 elements one
// widened operation handles.
func (g gen) wideLanes() int { return g.ISA.Lanes / 2 }

// add64 emits the widened add of n elements at element offset off, x at
// byte 4·off of dst and the table at byte 8·off of src: n = 8 (ZMM), 4 (YMM;
// both ISAs) or 1 (scalar).
func (g gen) add64(dst, src reg.Register, off, n int) {
	c := g.Ctx
	xm, tm := amd64.Mem(dst, 4*off), amd64.Mem(src, 8*off)
	switch n {
	case 8: // 8 float32 ↔ 8 float64 in a ZMM register
		w, r := c.ZMM(), c.YMM()
		c.VCVTPS2PD(xm, w)
		c.VADDPD(tm, w, w)
		c.VCVTPD2PS(w, r)
		c.VMOVUPS(r, xm)
	case 4: // 4 float32 ↔ 4 float64 in a YMM register
		w, r := c.YMM(), c.XMM()
		c.VCVTPS2PD(xm, w)
		c.VADDPD(tm, w, w)
		c.VCVTPD2PSY(w, r)
		c.VMOVUPS(r, xm)
	case 1:
		w := c.XMM()
		c.VMOVSS(xm, w)
		c.VCVTSS2SD(w, w, w)
		c.VADDSD(tm, w, w)
		c.VCVTSD2SS(w, w, w)
		c.VMOVSS(w, xm)
	default:
		panic("absolute: add64 of " + strconv.Itoa(n) + " elements")
	}
}

// tail64 emits the widened adds of the length < wideLanes elements at
// element offset off: a YMM operation of 4 on AVX-512, then scalars.
func (g gen) tail64(dst, src reg.Register, off, length int) {
	for length >= 4 {
		g.add64(dst, src, off, 4)
		off, length = off+4, length-4
	}
	for ; length > 0; off, length = off+1, length-1 {
		g.add64(dst, src, off, 1)
	}
}

// addSpan64 emits the widened x += table of length (a compile-time
// constant) elements: whole vectors unrolled when there are at most
// maxUnrolled, else a loop over blocks of amd64.Unroll vectors; then the
// tail. dst and src are preserved.
func (g gen) addSpan64(dst, src reg.GPVirtual, length int) {
	c := g.Ctx
	W := g.wideLanes()
	if length/W <= maxUnrolled {
		for v := 0; v < length/W; v++ {
			g.add64(dst, src, v*W, W)
		}
		g.tail64(dst, src, length/W*W, length%W)
		return
	}
	blk := amd64.Unroll * W
	iters := length / blk
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.MOVQ(dst, d)
	c.MOVQ(src, s)
	c.MOVQ(operand.U32(uint32(iters)), n)
	top := g.NewLabel("span64")
	c.Label(top)
	for u := 0; u < amd64.Unroll; u++ {
		g.add64(d, s, u*W, W)
	}
	c.ADDQ(operand.U32(uint32(4*blk)), d)
	c.ADDQ(operand.U32(uint32(8*blk)), s)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(top))
	rest := length - iters*blk
	for v := 0; v < rest/W; v++ {
		g.add64(d, s, v*W, W)
	}
	g.tail64(d, s, rest/W*W, rest%W)
}
