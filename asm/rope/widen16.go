package rope

import (
	"github.com/mmcloughlin/avo/operand"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
)

// The attention form's widening kernel over 16-bit storage (abi.Widen16): a
// tile of keys or values stored as f16 or bf16 becomes the float32 the
// attention kernels read, with the exact conversions of the 16-bit rotate
// kernel (loadX on amd64: F16C VCVTPH2PS or AVX-512 for f16, VPMOVZXWD and
// VPSLLD $16 for bf16; widen on NEON: FCVTL, SHLL #16). Both conversions
// are exact; an f16 NaN keeps its sign and payload (the top mantissa bits)
// and comes out quiet (the instructions set the quiet bit of a signaling
// NaN, which the generic widen leaves clear: either is a NaN to the
// attention kernels).
//
// The row is walked in blocks of amd64.Unroll full vectors, single full
// vectors, then a tail of fewer than Lanes elements taken as pieces of 8
// (AVX-512 only), 4, 2 and 1 by the bits of the count left, each piece
// moving exactly its own bytes (AVX-512: under the piece's opmask); NEON
// takes blocks of 16, 4 and 1. Nothing outside src or dst[:len(src)] is
// read or written.

// widenRow emits widenRow<ISA>(dst []float32, src []uint16) for the storage
// type of sh.
func (g gen) widenRow(sh ropeShape) {
	c := g.Ctx
	g.Begin(abi.Widen16, "widenRow"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.widenRow over "+sh.storage+" storage:",
		"dst[j] = widen(src[j]), exactly.",
		"It trusts its arguments: len(dst) ≥ len(src).")
	L := g.ISA.Lanes
	var tails []int // the tail pieces, largest first
	for _, w := range []int{8, 4, 2, 1} {
		if w < L {
			tails = append(tails, w)
		}
	}
	g.SetupMasks(tails...)
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), d)
	c.Load(c.Param("src").Base(), s)
	c.Load(c.Param("src").Len(), n)
	// piece widens the elements of pc at s+2·off into d+4·off.
	piece := func(pc amd64.Piece, off int) {
		v := g.RegFor(pc)
		g.loadX(sh, pc, amd64.Mem(s, 2*off), v)
		g.Store(pc, v, amd64.Mem(d, 4*off))
	}
	for _, b := range []int{amd64.Unroll, 1} {
		top, next := g.NewLabel("widen_loop"), g.NewLabel("widen_loop_end")
		c.Label(top)
		c.CMPQ(n, operand.U32(uint32(b*L)))
		c.JB(operand.LabelRef(next))
		for u := range b {
			piece(amd64.Piece{Off: 0, N: L}, u*L)
		}
		c.ADDQ(operand.U32(uint32(2*b*L)), s)
		c.ADDQ(operand.U32(uint32(4*b*L)), d)
		c.SUBQ(operand.U32(uint32(b*L)), n)
		c.JMP(operand.LabelRef(top))
		c.Label(next)
	}
	// n < L: one piece per set bit of n.
	for _, w := range tails {
		skip := g.NewLabel("widen_tail")
		c.TESTQ(operand.U32(uint32(w)), n)
		c.JZ(operand.LabelRef(skip))
		piece(amd64.Piece{Off: 0, N: w}, 0)
		c.ADDQ(operand.U32(uint32(2*w)), s)
		c.ADDQ(operand.U32(uint32(4*w)), d)
		c.Label(skip)
	}
	c.VZEROUPPER()
	c.RET()
}

// widenRowNEON emits widenRow(dst []float32, src []uint16) for storage "f16"
// or "bf16": R0 dst cursor, R1 src cursor, R2 count, R3 trip counter,
// V0..V3 the values.
func widenRowNEON(e *arm64.Emitter, name, storage string) {
	k := abi.Widen16
	g := &ropeGen{e: e, storage: storage}
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("dst[j] = widen(src[j]) over %s, exactly.", storage)
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "dst_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "src_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "src_len"))
	vec := func(nv int) {
		e.VLD1(arm64.R1, true, h4(arm64.Vecs(0, nv, 1, arm64.S4))...)
		for i := range nv {
			g.widen(arm64.VReg(i))
		}
		e.VST1(arm64.R0, true, arm64.Vecs(0, nv, 1, arm64.S4)...)
	}
	e.ForEach("widen", arm64.R2, arm64.R3, func() { vec(4) }, func() { vec(1) }, func() {
		e.LoadH(0, arm64.R1, 2)
		g.widen(0)
		e.StoreS(0, arm64.R0, 4)
	})
	e.RET()
	e.End()
}
