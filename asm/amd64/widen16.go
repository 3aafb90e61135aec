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

// VecConst is a full-width memory operand holding bits in every 4-byte
// lane (ConstPool.Vec8 or Vec16 by the ISA).
func (g *Gen) VecConst(bits uint32) operand.Mem {
	if g.ISA.Lanes == 16 {
		return g.Pool.Vec16(bits)
	}
	return g.Pool.Vec8(bits)
}

// Round16 rounds the float32 lanes of v, in place, to the nearest value of
// the storage type ("f16" or "bf16"), ties to even, kept as float32: what
// narrowing to 16 bits and widening back gives. f16 goes through
// VCVTPS2PH $0 (round to nearest even, MXCSR not consulted) and VCVTPH2PS;
// bf16 adds 0x7FFF plus bit 16 to the bits and clears the low 16 (the
// integer rounding of the 16-bit rotate kernels: a NaN that arithmetic
// produced from widened bf16 values or from invalid operations has zero
// low bits, so the addition cannot carry it into an infinity).
func (g *Gen) Round16(storage string, v reg.VecVirtual) {
	c := g.Ctx
	if storage == "f16" {
		var h reg.VecVirtual = c.XMM()
		if g.ISA.Lanes == 16 {
			h = c.YMM()
		}
		c.VCVTPS2PH(operand.U8(0), v, h)
		c.VCVTPH2PS(h, v)
		return
	}
	t := g.Vec()
	c.VPSRLD(operand.U8(16), v, t)
	if g.ISA.Lanes == 16 {
		c.VPANDD(g.VecConst(1), t, t)
		c.VPADDD(v, t, t)
		c.VPADDD(g.VecConst(0x7fff), t, t)
		c.VPANDD(g.VecConst(0xffff0000), t, v)
		return
	}
	c.VPAND(g.VecConst(1), t, t)
	c.VPADDD(v, t, t)
	c.VPADDD(g.VecConst(0x7fff), t, t)
	c.VPAND(g.VecConst(0xffff0000), t, v)
}
