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
//     and packed to words (VPACKUSDW for AVX2 tails, VPMOVDW on AVX-512).
//     Whole AVX2 vectors take fewer shuffles: VBROADCASTI128 and VPSHUFB
//     to widen, storeBF16x8 to narrow (the same bits). NaNs
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

// loadX loads the elements of pc at m into the float32 lanes of dst:
// amd64.Gen.LoadWiden16 for 16-bit storage, except whole AVX2 vectors of
// bf16, which take fewer shuffles.
func (g gen) loadX(sh ropeShape, pc amd64.Piece, m operand.Mem, dst reg.Register) {
	c := g.Ctx
	if sh.es == 4 {
		g.Load(pc, m, dst)
		return
	}
	if sh.storage != "f16" && g.ISA.Lanes == 8 && g.Full(pc) {
		// Both 128-bit lanes get the 8 words; VPSHUFB puts words 0–3
		// (lane 0) and 4–7 (lane 1) in the upper halves of zeroed dwords.
		c.VBROADCASTI128(m, dst)
		c.VPSHUFB(g.bf16Const(bf16Widen), dst, dst)
		return
	}
	g.LoadWiden16(sh.storage, pc, m, dst)
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
	if g.ISA.Lanes == 8 && g.Full(pc) {
		g.storeBF16x8(src, m)
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
	default: // AVX2 tails of 4 and 2 elements (whole vectors took storeBF16x8)
		w := c.XMM()
		c.VPACKUSDW(b, b, w)
		g.storeLowWords(pc, w, m)
	}
}

// storeBF16x8 narrows the 8 float32 lanes of y (clobbered) to bfloat16
// and writes the 16 bytes at m: the same rounding as bf16Bits, y + 0x7FFF
// + bit 16 of y, with bit 16 tested by VPAND and VPCMPEQD (−1 where set,
// subtracted) instead of shifted down, then VPSHUFB gathers the upper
// words of each lane into its low 8 bytes and VPERMQ joins the two lanes'
// low halves. Two shuffles in all, where bf16Bits with the VPACKUSDW
// narrowing takes two shifts and two shuffles (shifts and shuffles share
// two of Zen 4's four vector pipes); measured alone this gained about 5%,
// the constants in registers (bf16Regs) the rest.
func (g gen) storeBF16x8(y reg.Register, m operand.Mem) {
	c := g.Ctx
	odd := c.YMM()
	c.VPAND(g.bf16Const(bf16Bit16), y, odd)
	c.VPCMPEQD(g.bf16Const(bf16Bit16), odd, odd)
	c.VPADDD(g.bf16Const(bf16Round), y, y)
	c.VPSUBD(odd, y, y)
	c.VPSHUFB(g.bf16Const(bf16Narrow), y, y)
	c.VPERMQ(operand.U8(0x08), y, y) // qwords 0, 2 to the low lane
	c.VMOVDQU(y.(reg.VecVirtual).AsX(), m)
}

// The constants of the AVX2 bf16 conversions, indices into bf16Regs.
const (
	bf16Widen  = iota // VPSHUFB control of loadX (bf16WidenCtl)
	bf16Bit16         // 0x10000 in every dword: the bit tested by storeBF16x8
	bf16Round         // 0x7FFF in every dword: the round-to-nearest addend
	bf16Narrow        // VPSHUFB control of storeBF16x8 (bf16NarrowCtl)
	bf16Consts
)

// bf16Regs are the AVX2 bf16 rotate kernel's conversion constants, loaded
// into registers once per call (newBF16Regs) and used by every head. As
// memory operands they were four of the six loads per vector, and the load
// ports bound the kernel: on Zen 4 (64 MiB of float32 data as bf16, Apply,
// one process, interleaved) holding them, at the cost of two pieces' cos
// and sin (read as memory operands instead; holdBudget), took bf16 from
// 1.23× to 1.50× the tokens per second of the float32 kernel.
type bf16Regs [bf16Consts]reg.Register

// newBF16Regs emits the loads of the bf16 constants into new registers.
func (g gen) newBF16Regs() *bf16Regs {
	c := g.Ctx
	var b bf16Regs
	for i := range b {
		b[i] = c.YMM()
		c.VMOVDQU(g.bf16Mem(i), b[i])
	}
	return &b
}

// bf16Const is the operand of constant i: its register when the kernel
// holds them (the rotate kernel), else its memory (scaleRows16).
func (g gen) bf16Const(i int) operand.Op {
	if g.bf != nil {
		return g.bf[i]
	}
	return g.bf16Mem(i)
}

// bf16Mem is the read-only data of constant i.
func (g gen) bf16Mem(i int) operand.Mem {
	switch i {
	case bf16Widen:
		return g.bf16WidenCtl()
	case bf16Bit16:
		return g.Pool.Vec8(0x10000)
	case bf16Round:
		return g.Pool.Vec8(0x7fff)
	default:
		return g.bf16NarrowCtl()
	}
}

// bf16WidenCtl is the VPSHUFB control that turns 8 words, broadcast to
// both 128-bit lanes, into 8 dwords word<<16: lane 0 takes words 0–3,
// lane 1 words 4–7 (0x80 zeroes a byte).
func (g gen) bf16WidenCtl() operand.Mem {
	vals := make([]operand.Constant, 32)
	for lane := 0; lane < 2; lane++ {
		for i := 0; i < 4; i++ {
			w := 4*lane + i // the word this dword receives
			b := vals[16*lane+4*i:]
			b[0], b[1] = operand.U8(0x80), operand.U8(0x80)
			b[2], b[3] = operand.U8(2*w), operand.U8(2*w+1)
		}
	}
	return g.Pool.Add("bf16widen", vals)
}

// bf16NarrowCtl is the VPSHUFB control that gathers the upper word of each
// dword of a 128-bit lane into the lane's low 8 bytes (the high 8 bytes
// are zeroed).
func (g gen) bf16NarrowCtl() operand.Mem {
	vals := make([]operand.Constant, 32)
	for lane := 0; lane < 2; lane++ {
		for i := 0; i < 16; i++ {
			v := operand.U8(0x80)
			if i < 8 {
				v = operand.U8(4*(i/2) + 2 + i%2)
			}
			vals[16*lane+i] = v
		}
	}
	return g.Pool.Add("bf16narrow", vals)
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
