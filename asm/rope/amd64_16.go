package rope

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/amd64"
)

// 16-bit storage on amd64 (abi.Rotate16). A piece of N elements is loaded
// as N 16-bit values and widened to float32 lanes, rotated exactly as the
// float32 kernel does, and narrowed back with round to nearest, ties to
// even:
//
//   - f16 (IEEE 754 binary16): VCVTPH2PS to widen, VCVTPS2PH with
//     immediate 0 (round to nearest even, MXCSR not consulted) to narrow;
//     F16C on AVX2, AVX-512F at 16 lanes.
//   - bf16 (bfloat16, the upper half of a float32): VPMOVZXWD and VPSLLD
//     $16 to widen; to narrow, the float32 bits plus 0x7FFF plus their bit
//     16 (round to nearest even as an integer carry), shifted right by 16
//     and packed to words (VPACKUSDW on AVX2, VPMOVDW on AVX-512). NaNs
//     need no special case here: every NaN the kernel produces has zero low
//     16 bits (an input NaN is a widened bf16, which x86 arithmetic
//     propagates with its payload, only setting the quiet bit; an invalid
//     operation such as Inf·0 gives the default NaN 0xFFC00000; the table
//     holds finite values), so the addition cannot carry it into an
//     infinity. The generic Go narrow, which may see any float32, tests for
//     NaN instead.
//
// AVX2 tails of 4, 2 and 1 elements move 8, 4 and 2 bytes (VMOVQ or the
// converting instruction's own 64-bit form, VMOVD, MOVWLZX/VPEXTRW);
// AVX-512 tails move words under the piece's opmask (VMOVDQU16, VPMOVDW),
// so no byte outside the slice is read or written.

// shift is log2 of the element size: the left shift turning an element
// stride into bytes.
func (sh ropeShape) shift() uint8 {
	if sh.es == 2 {
		return 1
	}
	return 2
}

// copyUnits is the number of 4-byte units of dims RotaryDim..HeadDim, which
// a rotation from a separate source copies bit for bit.
func (sh ropeShape) copyUnits() int {
	return (sh.headDim - sh.rotaryDim) * sh.es / 4
}

// requires lists the CPU features the kernel needs beyond the ISA's: F16C
// for f16 on AVX2 (AVX-512F has the 16-lane conversions).
func (sh ropeShape) requires(is amd64.ISA) []string {
	if sh.storage == "f16" && is.Lanes == 8 {
		return []string{"cpu.X86.HasF16C"}
	}
	return nil
}

// loadX loads the elements of pc at m into the float32 lanes of dst.
func (g gen) loadX(sh ropeShape, pc amd64.Piece, m operand.Mem, dst reg.Register) {
	c := g.Ctx
	if sh.es == 4 {
		g.Load(pc, m, dst)
		return
	}
	f16 := sh.storage == "f16"
	// raw gets the 16-bit values of pc into the low words of a register.
	var raw reg.Register
	switch {
	case g.Full(pc) || (g.ISA.Lanes == 8 && pc.N == 4):
		// The converting instructions read exactly N words from memory.
		if f16 {
			c.VCVTPH2PS(m, dst)
		} else {
			c.VPMOVZXWD(m, dst)
			c.VPSLLD(operand.U8(16), dst, dst)
		}
		return
	case g.ISA.Lanes == 16:
		t := c.YMM()
		c.VMOVDQU16_Z(m, g.Mask(pc), t)
		raw = t
	case pc.N == 2:
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

// storeX narrows the float32 lanes of src to the storage type and writes
// the elements of pc to m, nothing beyond them. src is clobbered for bf16.
func (g gen) storeX(sh ropeShape, pc amd64.Piece, src reg.Register, m operand.Mem) {
	c := g.Ctx
	if sh.es == 4 {
		g.Store(pc, src, m)
		return
	}
	if sh.storage == "f16" {
		switch {
		case g.Full(pc) || (g.ISA.Lanes == 8 && pc.N == 4):
			c.VCVTPS2PH(operand.U8(0), src, m)
		case g.ISA.Lanes == 16:
			t := c.YMM()
			c.VCVTPS2PH(operand.U8(0), src, t)
			c.VMOVDQU16(t, g.Mask(pc), m)
		default:
			t := c.XMM()
			c.VCVTPS2PH(operand.U8(0), src, t)
			g.storeLowWords(pc, t, m)
		}
		return
	}
	b := g.bf16Bits(pc, src)
	switch {
	case g.ISA.Lanes == 16 && g.Full(pc):
		c.VPMOVDW(b, m)
	case g.ISA.Lanes == 16:
		c.VPMOVDW(b, g.Mask(pc), m)
	case pc.N == 1:
		c.VPEXTRW(operand.U8(0), b, m)
	case g.Full(pc):
		hi, w := c.XMM(), c.XMM()
		c.VEXTRACTI128(operand.U8(1), b, hi)
		c.VPACKUSDW(hi, b.(reg.VecVirtual).AsX(), w)
		c.VMOVDQU(w, m)
	default:
		w := c.XMM()
		c.VPACKUSDW(b, b, w)
		g.storeLowWords(pc, w, m)
	}
}

// storeLowWords writes the low pc.N (4, 2 or 1) words of the XMM register
// w to m.
func (g gen) storeLowWords(pc amd64.Piece, w reg.Register, m operand.Mem) {
	c := g.Ctx
	switch pc.N {
	case 4:
		c.VMOVQ(w, m)
	case 2:
		c.VMOVD(w, m)
	default:
		c.VPEXTRW(operand.U8(0), w, m)
	}
}

// bf16Bits returns a new register holding, in each 32-bit lane, the
// bfloat16 nearest (ties to even) to the float32 lane of y, in the low 16
// bits: (bits + 0x7FFF + bit 16 of bits) >> 16.
func (g gen) bf16Bits(pc amd64.Piece, y reg.Register) reg.Register {
	c := g.Ctx
	p := g.Pool
	t := g.RegFor(pc)
	c.VPSRLD(operand.U8(16), y, t)
	if g.ISA.Lanes == 16 {
		c.VPANDD_BCST(p.Scalar(1), t, t)
		c.VPADDD_BCST(p.Scalar(0x7fff), t, t)
	} else {
		c.VPAND(p.Vec8(1), t, t)
		c.VPADDD(p.Vec8(0x7fff), t, t)
	}
	c.VPADDD(y, t, t)
	c.VPSRLD(operand.U8(16), t, t)
	return t
}
