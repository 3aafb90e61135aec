package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// LoadWiden16 loads the p.N 16-bit elements at m, encodings of the storage
// type ("f16": IEEE 754 binary16, "bf16": bfloat16), into the float32 lanes
// of dst, exactly, lanes past p.N zero; no byte beyond the p.N elements is
// read. f16 widens with VCVTPH2PS (F16C on AVX2), bf16 with VPMOVZXWD and
// VPSLLD $16 (a bfloat16 is the upper half of a float32). A full piece (and
// an AVX2 piece of 4) is read by the converting instruction itself; AVX-512
// tails go through VMOVDQU16 under the piece's opmask, AVX2 tails of 2 and 1
// through VMOVD and MOVWLZX. dst is an XMM register for AVX2 pieces under 8.
func (g *Gen) LoadWiden16(storage string, p Piece, m operand.Mem, dst reg.Register) {
	c := g.Ctx
	f16 := storage == "f16"
	var raw reg.Register // the 16-bit values in the low words of a register
	switch {
	case g.Full(p) || (g.ISA.Lanes == 8 && p.N == 4):
		if f16 {
			c.VCVTPH2PS(m, dst)
		} else {
			c.VPMOVZXWD(m, dst)
			c.VPSLLD(operand.U8(16), dst, dst)
		}
		return
	case g.ISA.Lanes == 16:
		t := c.YMM()
		c.VMOVDQU16_Z(m, g.Mask(p), t)
		raw = t
	case p.N == 2:
		t := c.XMM()
		c.VMOVD(m, t)
		raw = t
	default: // one element
		w := c.GP32()
		c.MOVWLZX(m, w)
		if !f16 {
			c.SHLL(operand.U8(16), w)
			c.VMOVD(w, dst)
			return
		}
		t := c.XMM()
		c.VMOVD(w, t)
		raw = t
	}
	if f16 {
		c.VCVTPH2PS(raw, dst)
		return
	}
	c.VPMOVZXWD(raw, dst)
	c.VPSLLD(operand.U8(16), dst, dst)
}
