package amd64

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
)

// Piece is a contiguous run of float32 elements handled by one vector
// operation: Off is the element offset, N the element count. N equals the
// lane count for a full vector; a smaller N is a tail. On AVX2 a tail is 4, 2
// or 1 elements (XMM register, loaded with VMOVUPS, VMOVSD or VMOVSS); on
// AVX-512 any N < 16 is one ZMM operation under an opmask.
type Piece struct{ Off, N int }

// Gen emits the kernels of one variant into the shared build context of the
// output file. Family programs embed it and add their kernel methods.
type Gen struct {
	Ctx   *build.Context // the avo context of the whole output file
	ISA   ISA
	Pool  *ConstPool                // the file's read-only data
	label *int                      // file-wide label counter
	masks map[int]reg.OpmaskVirtual // AVX-512 tail masks of the current function, by element count
}

// Begin starts the assembly function of kernel k for g's ISA (named
// k.Field+ISA.Suffix, NOSPLIT) with the given doc lines and k's signature.
func (g *Gen) Begin(k abi.Kernel, doc ...string) {
	g.Ctx.Function(k.Field + g.ISA.Suffix)
	g.Ctx.Attributes(attr.NOSPLIT)
	g.Ctx.Doc(doc...)
	g.Ctx.SignatureExpr(k.FuncType())
}

// Full reports whether p covers a whole vector register.
func (g *Gen) Full(p Piece) bool { return p.N == g.ISA.Lanes }

// Vec allocates a full-width virtual vector register.
func (g *Gen) Vec() reg.VecVirtual {
	if g.ISA.Lanes == 16 {
		return g.Ctx.ZMM()
	}
	return g.Ctx.YMM()
}

// RegFor allocates a register suited to p.
func (g *Gen) RegFor(p Piece) reg.Register {
	if g.ISA.Lanes == 8 && p.N < 8 {
		return g.Ctx.XMM()
	}
	return g.Vec()
}

// Split cuts [0, length) into full vectors followed by tail pieces.
func (g *Gen) Split(length int) []Piece {
	var ps []Piece
	off := 0
	for ; off+g.ISA.Lanes <= length; off += g.ISA.Lanes {
		ps = append(ps, Piece{off, g.ISA.Lanes})
	}
	rem := length - off
	if rem == 0 {
		return ps
	}
	if g.ISA.Lanes == 16 {
		return append(ps, Piece{off, rem})
	}
	for _, w := range []int{4, 2, 1} {
		if rem >= w {
			ps = append(ps, Piece{off, w})
			off += w
			rem -= w
		}
	}
	return ps
}

// SetupMasks loads, at the current point of the function (before any
// branch), the AVX-512 opmask of every tail that Split produces for the given
// lengths. It is a no-op for AVX2.
func (g *Gen) SetupMasks(lengths ...int) {
	g.masks = map[int]reg.OpmaskVirtual{}
	if g.ISA.Lanes != 16 {
		return
	}
	for _, l := range lengths {
		r := l % 16
		if r == 0 || g.masks[r] != nil {
			continue
		}
		k := g.Ctx.K()
		t := g.Ctx.GP32()
		g.Ctx.MOVL(operand.U32(uint32(1)<<r-1), t)
		g.Ctx.KMOVW(t, k)
		g.masks[r] = k
	}
}

// Mask returns the AVX-512 opmask SetupMasks prepared for p's length: its
// low p.N bits are set, so it selects p.N lanes of any element width.
func (g *Gen) Mask(p Piece) reg.OpmaskVirtual { return g.mask(p) }

// mask returns the opmask SetupMasks prepared for p's length.
func (g *Gen) mask(p Piece) reg.OpmaskVirtual {
	k := g.masks[p.N]
	if k == nil {
		panic(fmt.Sprintf("amd64: no opmask prepared for a %d-element tail", p.N))
	}
	return k
}

// Load moves the elements of p from m into dst (lanes past p.N are zeroed).
func (g *Gen) Load(p Piece, m operand.Mem, dst reg.Register) {
	switch {
	case g.Full(p) || (g.ISA.Lanes == 8 && p.N == 4):
		g.Ctx.VMOVUPS(m, dst)
	case g.ISA.Lanes == 16:
		g.Ctx.VMOVUPS_Z(m, g.mask(p), dst)
	case p.N == 2:
		g.Ctx.VMOVSD(m, dst)
	default:
		g.Ctx.VMOVSS(m, dst)
	}
}

// Store writes the elements of p from src to m and nothing beyond them.
func (g *Gen) Store(p Piece, src reg.Register, m operand.Mem) {
	switch {
	case g.Full(p) || (g.ISA.Lanes == 8 && p.N == 4):
		g.Ctx.VMOVUPS(src, m)
	case g.ISA.Lanes == 16:
		g.Ctx.VMOVUPS(src, g.mask(p), m)
	case p.N == 2:
		g.Ctx.VMOVSD(src, m)
	default:
		g.Ctx.VMOVSS(src, m)
	}
}

// OperandFor returns m itself when p is a full vector (so it can be an
// instruction's memory operand) and otherwise loads the tail into a register.
// The 4-element AVX2 tail also stays a memory operand: VEX instructions on
// XMM registers read exactly 16 bytes.
func (g *Gen) OperandFor(p Piece, m operand.Mem) operand.Op {
	if g.Full(p) || (g.ISA.Lanes == 8 && p.N == 4) {
		return m
	}
	r := g.RegFor(p)
	g.Load(p, m, r)
	return r
}

// NewLabel returns a label name unique within the file.
func (g *Gen) NewLabel(stem string) string {
	*g.label++
	return fmt.Sprintf("%s%d", stem, *g.label)
}

// Mem is base+disp.
func Mem(base reg.Register, disp int) operand.Mem { return operand.Mem{Base: base, Disp: disp} }

// Broadcast loads the float32 with the given bits into every lane of a new
// full-width register.
func (g *Gen) Broadcast(bits uint32) reg.VecVirtual {
	r := g.Vec()
	g.Ctx.VBROADCASTSS(g.Pool.Scalar(bits), r)
	return r
}

// HSum adds the float32 lanes of v into lane 0 of the returned XMM register:
// the halves, then the 64-bit halves, then neighbours. On AVX-512 the
// extracts are EVEX (v's halves may be Y16–Y31).
func (g *Gen) HSum(v reg.VecVirtual) reg.VecVirtual {
	return g.HReduce(v, g.Ctx.VADDPS, g.Ctx.VADDSS)
}

// HReduce folds the float32 lanes of v into lane 0 of the returned XMM
// register with the packed operation op (VADDPS, VMAXPS) and, for the last
// pair, its scalar form scalar (VADDSS, VMAXSS), in HSum's order.
func (g *Gen) HReduce(v reg.VecVirtual, op, scalar func(...operand.Op)) reg.VecVirtual {
	c := g.Ctx
	y := v.AsY()
	if g.ISA.Lanes == 16 {
		h := c.YMM()
		c.VEXTRACTF32X8(operand.U8(1), v, h)
		op(h, v.AsY(), h)
		y = h
	}
	x := c.XMM()
	if g.ISA.Lanes == 16 {
		c.VEXTRACTF32X4(operand.U8(1), y, x)
	} else {
		c.VEXTRACTF128(operand.U8(1), y, x)
	}
	op(x, y.(reg.VecVirtual).AsX(), x)
	t := c.XMM()
	c.VPERMILPS(operand.U8(0x4e), x, t) // swap 64-bit halves
	op(t, x, x)
	c.VPERMILPS(operand.U8(0xb1), x, t) // swap neighbours
	scalar(t, x, x)
	return x
}
