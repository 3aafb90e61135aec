package rope

import (
	"github.com/mmcloughlin/avo/operand"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// The scaleRows kernel over 16-bit storage (abi.ScaleRows16, Llama 4's
// ScaleQ of a spec with dtype f16 or bf16): each value is widened to
// float32, multiplied by the token's factor (one correctly rounded float32
// product, as abi.ScaleRows) and narrowed back to nearest, ties to even,
// with the loadX and storeX conversions of the 16-bit rotate kernel
// (amd64_16.go): F16C VCVTPH2PS/VCVTPS2PH $0 for f16, shifts and the
// integer round-to-nearest-even for bf16. A NaN input needs no special
// case in the bf16 narrowing: x86 multiplication propagates a widened
// bf16 NaN with its (zero) low 16 bits, so the rounding carry cannot reach
// the exponent. A NaN factor does (its payload may fill the low half): the
// bf16 kernel quiets it and clears its low 16 bits once per token, as the
// NEON kernel does, which is the generic kernel's truncation.
//
// Per token the row is walked in blocks of amd64.Unroll full vectors, then
// single full vectors, then a tail of fewer than Lanes elements taken as
// pieces of 8 (AVX-512 only), 4, 2 and 1 by the bits of the count left; a
// piece moves exactly its own bytes (AVX-512: under the piece's opmask), so
// nothing outside the row is read or written. (ScaleQ's rowLen,
// heads·HeadDim, is even, so it never takes the 1-element piece; the
// kernel serves any rowLen of the ABI.)

// scaleRows16 emits scaleRows<ISA>(x []uint16, scales []float32, rowLen int)
// for the storage type of sh.
func (g gen) scaleRows16(sh ropeShape) {
	c := g.Ctx
	g.Begin(abi.ScaleRows16, "scaleRows"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.scaleRows over "+sh.storage+" storage:",
		"x[t·rowLen+j] = narrow(widen(x[t·rowLen+j])·scales[t]), round to nearest even.",
		"It trusts its arguments: len(x) ≥ len(scales)·rowLen.")
	L := g.ISA.Lanes
	var tails []int // the tail pieces, largest first
	for _, w := range []int{8, 4, 2, 1} {
		if w < L {
			tails = append(tails, w)
		}
	}
	g.SetupMasks(tails...) // AVX-512 opmasks of the tail pieces (no-op on AVX2)

	row, sc, tokens, rowLen := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("x").Base(), row)
	c.Load(c.Param("scales").Base(), sc)
	c.Load(c.Param("scales").Len(), tokens)
	c.Load(c.Param("rowLen"), rowLen)
	done := g.NewLabel("scale16_done")
	c.TESTQ(tokens, tokens)
	c.JZ(operand.LabelRef(done))
	c.TESTQ(rowLen, rowLen)
	c.JZ(operand.LabelRef(done))
	step := c.GP64() // bytes per row
	c.MOVQ(rowLen, step)
	c.SHLQ(operand.U8(1), step)

	loop := g.NewLabel("scale16_token")
	c.Label(loop)
	f := g.Vec()
	c.VBROADCASTSS(amd64.Mem(sc, 0), f)
	if sh.storage == "bf16" {
		// A NaN factor becomes itself quieted with its low 16 bits cleared:
		// the product of a non-NaN value and a NaN factor is that NaN, and the
		// rounding carry of the bf16 narrowing would otherwise turn a payload in
		// the low half into another NaN (0x7FC18000 → 0x7FC2) or, from
		// 0x7FFFFFFF, past the sign into −0, where the generic kernel truncates.
		clean := g.Broadcast(0x00400000)
		c.VORPS(f, clean, clean)
		c.VANDPS(g.Broadcast(0xffff0000), clean, clean)
		const unord = 3 // unordered: f is NaN
		if L == 16 {
			k := c.K()
			c.VCMPPS(operand.U8(unord), f, f, k)
			c.VMOVAPS(clean, k, f)
		} else {
			nan := g.Vec()
			c.VCMPPS(operand.U8(unord), f, f, nan)
			c.VBLENDVPS(nan, clean, f, f)
		}
	}
	p, n := c.GP64(), c.GP64()
	c.MOVQ(row, p)
	c.MOVQ(rowLen, n)
	// piece scales the elements of pc at p+off in place.
	piece := func(pc amd64.Piece, off int) {
		v := g.RegFor(pc)
		g.loadX(sh, pc, amd64.Mem(p, off), v)
		if L == 8 && pc.N < 8 {
			c.VMULPS(f.AsX(), v, v) // an AVX2 tail piece lives in an XMM register
		} else {
			c.VMULPS(f, v, v)
		}
		g.storeX(sh, pc, v, amd64.Mem(p, off))
	}
	for _, b := range []int{amd64.Unroll, 1} {
		top, next := g.NewLabel("scale16_loop"), g.NewLabel("scale16_loop_end")
		c.Label(top)
		c.CMPQ(n, operand.U32(uint32(b*L)))
		c.JB(operand.LabelRef(next))
		for u := range b {
			piece(amd64.Piece{Off: 0, N: L}, 2*L*u)
		}
		c.ADDQ(operand.U32(uint32(2*b*L)), p)
		c.SUBQ(operand.U32(uint32(b*L)), n)
		c.JMP(operand.LabelRef(top))
		c.Label(next)
	}
	// n < L: one piece per set bit of n.
	for _, w := range tails {
		skip := g.NewLabel("scale16_tail")
		c.TESTQ(operand.U32(uint32(w)), n)
		c.JZ(operand.LabelRef(skip))
		piece(amd64.Piece{Off: 0, N: w}, 0)
		c.ADDQ(operand.U32(uint32(2*w)), p)
		c.Label(skip)
	}
	c.ADDQ(step, row)
	c.ADDQ(operand.U8(4), sc)
	c.DECQ(tokens)
	c.JNZ(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}
