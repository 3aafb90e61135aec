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

// RoundConsts are the constants of Round16's bf16 rounding, loaded into
// registers once (Round16Consts) for the several roundings of a kernel's
// loop body, instead of a memory operand per rounding: on AMD Zen 4 the
// rotated keys of scoresKVRope16 (eight roundings a head) took 0.49× copy()'s
// time per byte with the memory operands and 0.52–0.58× with the constants
// in registers (one process, alternating runs). f16 needs none.
type RoundConsts struct {
	bit16, one, half, high reg.VecVirtual
}

// Round16Consts loads the constants Round16 needs for storage (none for
// f16 or float32; for bf16 0x7FFF and 0xFFFF0000, and 0x10000 (AVX-512: the bit whose
// test masks the tie's extra 1) or 1 (AVX2: bit 16 shifted down)).
func (g *Gen) Round16Consts(storage string) RoundConsts {
	var rc RoundConsts
	if storage != "bf16" {
		return rc
	}
	load := func(bits uint32) reg.VecVirtual {
		v := g.Vec()
		g.Load(Piece{Off: 0, N: g.ISA.Lanes}, g.VecConst(bits), v)
		return v
	}
	if g.ISA.Lanes == 16 {
		rc.bit16 = load(0x10000)
	}
	rc.one, rc.half, rc.high = load(1), load(0x7fff), load(0xffff0000)
	return rc
}

// Round16 rounds the float32 lanes of v, in place, to the nearest value of
// the storage type ("f16" or "bf16"), ties to even, kept as float32: what
// narrowing to 16 bits and widening back gives. f16 goes through
// VCVTPS2PH $0 (round to nearest even, MXCSR not consulted) and VCVTPH2PS;
// bf16 adds 0x7FFF plus bit 16 to the bits and clears the low 16 (the
// integer rounding of the 16-bit rotate kernels: a NaN that arithmetic
// produced from widened bf16 values or from invalid operations has zero
// low bits, so the addition cannot carry it into an infinity), with the
// constants rc holds (Round16Consts). AVX-512 adds the 1 of an odd bit 16
// under a mask (VPTESTMD, then a merge-masked VPADDD): four operations where
// the shift, mask and add of AVX2 take five.
func (g *Gen) Round16(storage string, v reg.VecVirtual, rc RoundConsts) {
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
	if g.ISA.Lanes == 16 {
		odd := c.K()
		c.VPTESTMD(rc.bit16, v, odd)
		c.VPADDD(rc.half, v, t)
		c.VPADDD(rc.one, t, odd, t)
		c.VPANDD(rc.high, t, v)
		return
	}
	c.VPSRLD(operand.U8(16), v, t)
	c.VPAND(rc.one, t, t)
	c.VPADDD(v, t, t)
	c.VPADDD(rc.half, t, t)
	c.VPAND(rc.high, t, v)
}
