package rope

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// The combineRows kernel (abi.CombineRows): the table rows of positions
// outside the table by angle addition, cos((a+b)ω) = cos aω·cos bω −
// sin aω·sin bω and sin((a+b)ω) = sin aω·cos bω + cos aω·sin bω, in
// float64 on 4 (AVX2) or 8 (AVX-512) lanes. Every product, difference and
// sum is a separate, correctly rounded float64 operation (no FMA) and the
// narrowing to float32 rounds to nearest even (VCVTPD2PS under the default
// MXCSR), so the rows are bit-identical to the Go kernel, which forbids
// fusion with explicit float64 conversions.

// combineRows emits combineRows<ISA>(rows, hi, low, pos, mask): per token
// the low row (pos[t] & mask)·2·nFreq float64 of low is combined with hi,
// pair blocks of 4 or 8 lanes fully unrolled, the nFreq mod lanes last pairs
// scalar.
func (g gen) combineRows(p Params) {
	c := g.Ctx
	nf := p.RotaryDim / 2
	g.Begin(abi.CombineRows, "combineRows"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.combineRows: rope rows by angle addition,",
		"unfused float64, rounded once to float32. It trusts its arguments: len(hi) ≥ 2·nFreq,",
		"every low row pos[t]&mask in low, len(rows) ≥ len(pos)·rowLen.")
	rows, hi, low, pos, n, mask := c.GP64(), c.GP64(), c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("rows").Base(), rows)
	c.Load(c.Param("hi").Base(), hi)
	c.Load(c.Param("low").Base(), low)
	c.Load(c.Param("pos").Base(), pos)
	c.Load(c.Param("pos").Len(), n)
	c.Load(c.Param("mask"), mask)
	done := g.NewLabel("combine_done")
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef(done))

	lanes := g.ISA.Lanes / 2 // float64 lanes
	wide := g.ISA.Lanes == 16
	full := func() reg.VecVirtual { return g.Vec() } // float64 vector
	half := func() reg.VecVirtual {                  // its float32 narrowing
		if wide {
			return c.YMM()
		}
		return c.XMM()
	}
	// The interleaved layout repeats each value: VPERMPS with 0,0,1,1,….
	var dup reg.VecVirtual
	if p.Interleaved && nf >= lanes {
		vals := make([]operand.Constant, 2*lanes)
		for i := range vals {
			vals[i] = operand.U32(uint32(i / 2))
		}
		dup = full()
		c.VMOVUPS(g.Pool.Add(fmt.Sprintf("combine_dup%d", 2*lanes), vals), dup)
	}
	cvt := func(src reg.VecVirtual, dst reg.VecVirtual) {
		if wide {
			c.VCVTPD2PS(src, dst)
		} else {
			c.VCVTPD2PSY(src, dst)
		}
	}
	sinOff := 4 * nf // bytes from a cosine to its sine in the row: half layout
	if p.Interleaved {
		sinOff = 4 * p.RotaryDim
	}
	// store writes the float32 lanes v (pairs i…) of one of cos/sin.
	store := func(v reg.VecVirtual, row reg.GPVirtual, i, off int) {
		if !p.Interleaved {
			c.VMOVUPS(v, amd64.Mem(row, off+4*i))
			return
		}
		d := full()
		c.VPERMPS(fullOf(v, wide), dup, d)
		c.VMOVUPS(d, amd64.Mem(row, off+8*i))
	}

	loop := g.NewLabel("combine_token")
	c.Label(loop)
	l := c.GP64()
	c.MOVLQSX(operand.Mem{Base: pos}, l)
	c.ANDQ(mask, l)
	c.IMUL3Q(operand.U32(uint32(16*nf)), l, l)
	c.ADDQ(low, l)
	// block combines the lanes pairs from i into narrowed cos and sin.
	block := func(i int) (cf, sf reg.VecVirtual) {
		lc, ls := full(), full()
		c.VMOVUPD(amd64.Mem(l, 8*i), lc)
		c.VMOVUPD(amd64.Mem(l, 8*(nf+i)), ls)
		hc, hs := amd64.Mem(hi, 8*i), amd64.Mem(hi, 8*(nf+i))
		cs, t := full(), full()
		c.VMULPD(hc, lc, cs) // hc·lc
		c.VMULPD(hs, ls, t)  // hs·ls
		c.VSUBPD(t, cs, cs)  // hc·lc − hs·ls
		sn, u := full(), full()
		c.VMULPD(hs, lc, sn) // hs·lc
		c.VMULPD(hc, ls, u)  // hc·ls
		c.VADDPD(u, sn, sn)  // hs·lc + hc·ls
		cf, sf = half(), half()
		cvt(cs, cf)
		cvt(sn, sf)
		return cf, sf
	}
	// join puts b above a in one full-width register, so that the half
	// layout is stored in full-width pieces: the rotate kernel loads the row
	// right away in such pieces, and a load spanning two narrower stores
	// would miss store-to-load forwarding.
	join := func(a, b reg.VecVirtual) reg.VecVirtual {
		d := full()
		if wide {
			c.VINSERTF64X4(operand.U8(1), b, a.AsZ(), d)
		} else {
			c.VINSERTF128(operand.U8(1), b, a.AsY(), d)
		}
		return d
	}
	i := 0
	if !p.Interleaved {
		for ; i+2*lanes <= nf; i += 2 * lanes {
			c0, s0 := block(i)
			c1, s1 := block(i + lanes)
			c.VMOVUPS(join(c0, c1), amd64.Mem(rows, 4*i))
			c.VMOVUPS(join(s0, s1), amd64.Mem(rows, sinOff+4*i))
		}
	}
	for ; i+lanes <= nf; i += lanes {
		cf, sf := block(i)
		store(cf, rows, i, 0)
		store(sf, rows, i, sinOff)
	}
	// The last nFreq mod lanes pairs, one at a time.
	for ; i < nf; i++ {
		lc, ls := c.XMM(), c.XMM()
		c.VMOVSD(amd64.Mem(l, 8*i), lc)
		c.VMOVSD(amd64.Mem(l, 8*(nf+i)), ls)
		hc, hs := amd64.Mem(hi, 8*i), amd64.Mem(hi, 8*(nf+i))
		cs, t := c.XMM(), c.XMM()
		c.VMULSD(hc, lc, cs)
		c.VMULSD(hs, ls, t)
		c.VSUBSD(t, cs, cs)
		sn, u := c.XMM(), c.XMM()
		c.VMULSD(hs, lc, sn)
		c.VMULSD(hc, ls, u)
		c.VADDSD(u, sn, sn)
		c.VCVTSD2SS(cs, cs, cs)
		c.VCVTSD2SS(sn, sn, sn)
		if p.Interleaved {
			for _, o := range []int{0, 4} {
				c.VMOVSS(cs, amd64.Mem(rows, 8*i+o))
				c.VMOVSS(sn, amd64.Mem(rows, sinOff+8*i+o))
			}
		} else {
			c.VMOVSS(cs, amd64.Mem(rows, 4*i))
			c.VMOVSS(sn, amd64.Mem(rows, sinOff+4*i))
		}
	}
	c.ADDQ(operand.U32(uint32(4*p.RowLen)), rows)
	c.ADDQ(operand.U8(4), pos)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// fullOf is the full-width register (YMM on AVX2, ZMM on AVX-512) whose low
// half is v, the VPERMPS source of a narrowed vector.
func fullOf(v reg.VecVirtual, wide bool) reg.Register {
	if wide {
		return v.AsZ()
	}
	return v.AsY()
}
