package rope

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// The farRows kernel (abi.FarRows): the rope rows of positions outside the
// table from the four float32 digit rows of each position (its bytes), three
// complex products per pair in float32 on 16 (AVX-512), 8 or 4 lanes and a
// scalar tail. Every product, difference and sum is a separate, correctly
// rounded float32 operation (no FMA), so the rows are bit-identical to the
// Go kernel's.

// f32Width is one width of float32 operations: the register it allocates,
// its load/store, multiply, subtract and add (packed, or scalar for one
// lane).
type f32Width struct {
	lanes         int
	vec           func() reg.VecVirtual
	mov           func(...operand.Op)
	mul, sub, add func(...operand.Op)
}

// f32Widths are the widths g's ISA has, widest first: 16 lanes (AVX-512
// only), 8, 4 and the scalar one.
func (g gen) f32Widths() []f32Width {
	c := g.Ctx
	ws := []f32Width{
		{8, func() reg.VecVirtual { return c.YMM() }, c.VMOVUPS, c.VMULPS, c.VSUBPS, c.VADDPS},
		{4, func() reg.VecVirtual { return c.XMM() }, c.VMOVUPS, c.VMULPS, c.VSUBPS, c.VADDPS},
		{1, func() reg.VecVirtual { return c.XMM() }, c.VMOVSS, c.VMULSS, c.VSUBSS, c.VADDSS},
	}
	if g.ISA.Lanes == 16 {
		ws = append([]f32Width{{16, func() reg.VecVirtual { return c.ZMM() }, c.VMOVUPS, c.VMULPS, c.VSUBPS, c.VADDPS}}, ws...)
	}
	return ws
}

// farDigitRows is the number of rows of each digit table of abi.FarRows.
const farDigitRows = 1 << abi.FarDigitBits

// farBlock is one unrolled block of farRows: w.lanes pairs from pair i.
type farBlock struct {
	w f32Width
	i int
}

// farBlocks splits nf pairs into blocks of the widest width of ws and at
// most one block of each narrower vector width, the rest one at a time.
func farBlocks(nf int, ws []f32Width) []farBlock {
	var bs []farBlock
	i := 0
	for _, w := range ws {
		for ; i+w.lanes <= nf; i += w.lanes {
			bs = append(bs, farBlock{w, i})
		}
	}
	return bs
}

// farRows emits farRows<ISA>(rows, digits, pos): per token the four digit
// rows of the bytes of pos[t], the nFreq pairs fully unrolled in blocks of
// the widest width, at most one block of each narrower vector width, and
// the last nFreq mod 4 pairs one at a time.
func (g gen) farRows(p Params) {
	c := g.Ctx
	nf := p.RotaryDim / 2
	g.Begin(abi.FarRows, "farRows"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.farRows: rope rows as the product of four",
		"digit rows per pair, unfused float32. It trusts its arguments: len(digits) ≥",
		"4·256·2·nFreq, len(rows) ≥ len(pos)·rowLen.")
	rows, tab, pos, n := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("rows").Base(), rows)
	c.Load(c.Param("digits").Base(), tab)
	c.Load(c.Param("pos").Base(), pos)
	c.Load(c.Param("pos").Len(), n)
	done := g.NewLabel("far_done")
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef(done))

	rowBytes := 8 * nf // one digit row: 2·nFreq float32
	blocks := farBlocks(nf, g.f32Widths())
	// The interleaved layout repeats each value: VPERMPS by i/2 (the low
	// half of the lanes) and lanes/2 + i/2 (the high half) for 8 and 16
	// lanes, VUNPCKLPS/VUNPCKHPS of a value with itself for 4.
	dup := map[int][2]reg.VecVirtual{}
	if p.Interleaved {
		for _, b := range blocks {
			w := b.w
			if _, ok := dup[w.lanes]; ok || w.lanes < 8 {
				continue
			}
			var pair [2]reg.VecVirtual
			for h := range pair {
				vals := make([]operand.Constant, w.lanes)
				for i := range vals {
					vals[i] = operand.U32(uint32(h*w.lanes/2 + i/2))
				}
				pair[h] = w.vec()
				c.VMOVUPS(g.Pool.Add(fmt.Sprintf("far_dup%d_%d", w.lanes, h), vals), pair[h])
			}
			dup[w.lanes] = pair
		}
	}
	sinOff := 4 * nf // bytes from a cosine to its sine in the row: half layout
	if p.Interleaved {
		sinOff = 4 * p.RotaryDim
	}

	loop := g.NewLabel("far_token")
	c.Label(loop)
	// d[k] = byte k of the position times rowBytes.
	pv := c.GP32()
	c.MOVL(operand.Mem{Base: pos}, pv)
	var d [abi.FarDigits]reg.GPVirtual
	for k := range d {
		d[k] = c.GP64()
		c.MOVL(pv, d[k].As32())
		if k > 0 {
			c.SHRL(operand.U8(abi.FarDigitBits*k), d[k].As32())
		}
		if k < len(d)-1 { // the top digit's shift leaves nothing above it
			c.ANDL(operand.U32(farDigitRows-1), d[k].As32())
		}
		c.IMUL3Q(operand.U32(uint32(rowBytes)), d[k], d[k])
	}
	// row returns the operand of the cosines (sin 0) or sines (sin 1) of
	// pairs i… in digit table k.
	row := func(k, sin, i int) operand.Mem {
		return operand.Mem{Base: tab, Index: d[k], Scale: 1, Disp: k*farDigitRows*rowBytes + 4*(sin*nf+i)}
	}
	for _, b := range blocks {
		w := b.w
		ld := func(k, sin int) reg.VecVirtual {
			v := w.vec()
			w.mov(row(k, sin, b.i), v)
			return v
		}
		// product returns x·y: xc·yc − xs·ys, xs·yc + xc·ys.
		product := func(xc, xs, yc, ys reg.VecVirtual) (reg.VecVirtual, reg.VecVirtual) {
			pc, t, ps, u := w.vec(), w.vec(), w.vec(), w.vec()
			w.mul(yc, xc, pc)
			w.mul(ys, xs, t)
			w.sub(t, pc, pc)
			w.mul(yc, xs, ps)
			w.mul(ys, xc, u)
			w.add(u, ps, ps)
			return pc, ps
		}
		mc, ms := product(ld(3, 0), ld(3, 1), ld(2, 0), ld(2, 1))
		hc, hs := product(mc, ms, ld(1, 0), ld(1, 1))
		rc, rs := product(hc, hs, ld(0, 0), ld(0, 1))
		g.farStore(p, w, dup, rows, b.i, sinOff, rc, rs)
	}
	c.ADDQ(operand.U32(uint32(4*p.RowLen)), rows)
	c.ADDQ(operand.U8(4), pos)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// farStore stores the cosines rc and sines rs of pairs i… (w.lanes of
// them) into the row at rows: in place in the half layout, each value twice
// in the interleaved one.
func (g gen) farStore(p Params, w f32Width, dup map[int][2]reg.VecVirtual, rows reg.GPVirtual, i, sinOff int, rc, rs reg.VecVirtual) {
	c := g.Ctx
	for _, v := range []struct {
		x   reg.VecVirtual
		off int
	}{{rc, 0}, {rs, sinOff}} {
		switch {
		case !p.Interleaved:
			w.mov(v.x, amd64.Mem(rows, v.off+4*i))
		case w.lanes == 1:
			w.mov(v.x, amd64.Mem(rows, v.off+8*i))
			w.mov(v.x, amd64.Mem(rows, v.off+8*i+4))
		case w.lanes == 4:
			lo, hi := c.XMM(), c.XMM()
			c.VUNPCKLPS(v.x, v.x, lo)
			c.VUNPCKHPS(v.x, v.x, hi)
			c.VMOVUPS(lo, amd64.Mem(rows, v.off+8*i))
			c.VMOVUPS(hi, amd64.Mem(rows, v.off+8*i+16))
		default:
			for h, idx := range dup[w.lanes] {
				t := w.vec()
				c.VPERMPS(v.x, idx, t)
				c.VMOVUPS(t, amd64.Mem(rows, v.off+8*i+4*w.lanes*h))
			}
		}
	}
}
