package rope

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// The hiRow kernel (abi.HiRow): the hi row of positions beyond the table as
// the product of its three digit rows, (a·b)·c per pair, in float64 on 8
// (AVX-512) or 4 (AVX2) lanes. Like combineRows it keeps every product,
// difference and sum a separate, correctly rounded float64 operation (no
// FMA), so the row is bit-identical to the Go kernel's.

// f64Width is one width of float64 operations: the register it allocates
// and its load/store, multiply, subtract and add (packed, or scalar for one
// lane).
type f64Width struct {
	lanes         int
	vec           func() reg.VecVirtual
	mov           func(...operand.Op)
	mul, sub, add func(...operand.Op)
}

// f64Widths are the widths g's ISA has, widest first: 8 lanes (AVX-512
// only), 4, 2 and the scalar one.
func (g gen) f64Widths() []f64Width {
	c := g.Ctx
	ws := []f64Width{
		{4, func() reg.VecVirtual { return c.YMM() }, c.VMOVUPD, c.VMULPD, c.VSUBPD, c.VADDPD},
		{2, func() reg.VecVirtual { return c.XMM() }, c.VMOVUPD, c.VMULPD, c.VSUBPD, c.VADDPD},
		{1, func() reg.VecVirtual { return c.XMM() }, c.VMOVSD, c.VMULSD, c.VSUBSD, c.VADDSD},
	}
	if g.ISA.Lanes == 16 {
		ws = append([]f64Width{{8, func() reg.VecVirtual { return c.ZMM() }, c.VMOVUPD, c.VMULPD, c.VSUBPD, c.VADDPD}}, ws...)
	}
	return ws
}

// hiRow emits hiRow<ISA>(h, a, b, c): the nFreq pairs fully unrolled in
// blocks of the widest width, the nFreq mod lanes last pairs in at most one
// block of each narrower width.
func (g gen) hiRow(p Params) {
	c := g.Ctx
	nf := p.RotaryDim / 2
	g.Begin(abi.HiRow, "hiRow"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.hiRow: h = (a·b)·c per pair as complex numbers,",
		"unfused float64. It trusts its arguments: each slice holds ≥ 2·nFreq float64.")
	h, a, b, cr := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("h").Base(), h)
	c.Load(c.Param("a").Base(), a)
	c.Load(c.Param("b").Base(), b)
	c.Load(c.Param("c").Base(), cr)
	i := 0
	for _, w := range g.f64Widths() {
		for ; i+w.lanes <= nf; i += w.lanes {
			// ld loads the cosines (at i) or sines (at nFreq+i) of row r.
			ld := func(r reg.GPVirtual, sin int) reg.VecVirtual {
				v := w.vec()
				w.mov(amd64.Mem(r, 8*(sin*nf+i)), v)
				return v
			}
			ac, as, bc, bs := ld(a, 0), ld(a, 1), ld(b, 0), ld(b, 1)
			// m = a·b: mc = ac·bc − as·bs, ms = as·bc + ac·bs.
			mc, t := w.vec(), w.vec()
			w.mul(bc, ac, mc)
			w.mul(bs, as, t)
			w.sub(t, mc, mc)
			ms, u := w.vec(), w.vec()
			w.mul(bc, as, ms)
			w.mul(bs, ac, u)
			w.add(u, ms, ms)
			// h = m·c: hc = mc·cc − ms·cs, hs = ms·cc + mc·cs.
			cc, cs := ld(cr, 0), ld(cr, 1)
			hc, t2 := w.vec(), w.vec()
			w.mul(cc, mc, hc)
			w.mul(cs, ms, t2)
			w.sub(t2, hc, hc)
			hs, u2 := w.vec(), w.vec()
			w.mul(cc, ms, hs)
			w.mul(cs, mc, u2)
			w.add(u2, hs, hs)
			w.mov(hc, amd64.Mem(h, 8*i))
			w.mov(hs, amd64.Mem(h, 8*(nf+i)))
		}
	}
	c.VZEROUPPER()
	c.RET()
}
