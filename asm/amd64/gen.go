package amd64

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// isa describes one vector instruction set the generator targets.
type isa struct {
	suffix string // appended to kernel names: "AVX2" or "AVX512"
	name   string // in documentation comments
	lanes  int    // float32 lanes per full vector register
	regs   int    // architectural vector registers
}

var (
	isaAVX2   = isa{suffix: "AVX2", name: "AVX2+FMA", lanes: 8, regs: 16}
	isaAVX512 = isa{suffix: "AVX512", name: "AVX-512", lanes: 16, regs: 32}
)

// piece is a contiguous run of float32 elements handled by one vector
// operation: off is the element offset, n the element count. n equals the
// lane count for a full vector; a smaller n is a tail. On AVX2 a tail is 4, 2
// or 1 elements (XMM register, loaded with VMOVUPS, VMOVSD or VMOVSS); on
// AVX-512 any n < 16 is one ZMM operation under an opmask.
type piece struct{ off, n int }

// gen emits the kernels of one variant into the shared build context of the
// output file.
type gen struct {
	ctx   *build.Context
	isa   isa
	pool  *constPool
	label *int                      // file-wide label counter
	masks map[int]reg.OpmaskVirtual // AVX-512 tail masks of the current function, by element count
}

// full reports whether p covers a whole vector register.
func (g *gen) full(p piece) bool { return p.n == g.isa.lanes }

// vec allocates a full-width virtual vector register.
func (g *gen) vec() reg.VecVirtual {
	if g.isa.lanes == 16 {
		return g.ctx.ZMM()
	}
	return g.ctx.YMM()
}

// regFor allocates a register suited to p.
func (g *gen) regFor(p piece) reg.Register {
	if g.isa.lanes == 8 && p.n < 8 {
		return g.ctx.XMM()
	}
	return g.vec()
}

// split cuts [0, length) into full vectors followed by tail pieces.
func (g *gen) split(length int) []piece {
	var ps []piece
	off := 0
	for ; off+g.isa.lanes <= length; off += g.isa.lanes {
		ps = append(ps, piece{off, g.isa.lanes})
	}
	rem := length - off
	if rem == 0 {
		return ps
	}
	if g.isa.lanes == 16 {
		return append(ps, piece{off, rem})
	}
	for _, w := range []int{4, 2, 1} {
		if rem >= w {
			ps = append(ps, piece{off, w})
			off += w
			rem -= w
		}
	}
	return ps
}

// setupMasks loads, at the current point of the function (before any
// branch), the AVX-512 opmask of every tail that split produces for the given
// lengths. It is a no-op for AVX2.
func (g *gen) setupMasks(lengths ...int) {
	g.masks = map[int]reg.OpmaskVirtual{}
	if g.isa.lanes != 16 {
		return
	}
	for _, l := range lengths {
		r := l % 16
		if r == 0 || g.masks[r] != nil {
			continue
		}
		k := g.ctx.K()
		t := g.ctx.GP32()
		g.ctx.MOVL(operand.U32(uint32(1)<<r-1), t)
		g.ctx.KMOVW(t, k)
		g.masks[r] = k
	}
}

func (g *gen) mask(p piece) reg.OpmaskVirtual {
	k := g.masks[p.n]
	if k == nil {
		panic(fmt.Sprintf("amd64: no opmask prepared for a %d-element tail", p.n))
	}
	return k
}

// load moves the elements of p from m into dst (lanes past p.n are zeroed).
func (g *gen) load(p piece, m operand.Mem, dst reg.Register) {
	switch {
	case g.full(p) || (g.isa.lanes == 8 && p.n == 4):
		g.ctx.VMOVUPS(m, dst)
	case g.isa.lanes == 16:
		g.ctx.VMOVUPS_Z(m, g.mask(p), dst)
	case p.n == 2:
		g.ctx.VMOVSD(m, dst)
	default:
		g.ctx.VMOVSS(m, dst)
	}
}

// store writes the elements of p from src to m and nothing beyond them.
func (g *gen) store(p piece, src reg.Register, m operand.Mem) {
	switch {
	case g.full(p) || (g.isa.lanes == 8 && p.n == 4):
		g.ctx.VMOVUPS(src, m)
	case g.isa.lanes == 16:
		g.ctx.VMOVUPS(src, g.mask(p), m)
	case p.n == 2:
		g.ctx.VMOVSD(src, m)
	default:
		g.ctx.VMOVSS(src, m)
	}
}

// operandFor returns m itself when p is a full vector (so it can be an
// instruction's memory operand) and otherwise loads the tail into a register.
// The 4-element AVX2 tail also stays a memory operand: VEX instructions on
// XMM registers read exactly 16 bytes.
func (g *gen) operandFor(p piece, m operand.Mem) operand.Op {
	if g.full(p) || (g.isa.lanes == 8 && p.n == 4) {
		return m
	}
	r := g.regFor(p)
	g.load(p, m, r)
	return r
}

// newLabel returns a label name unique within the file.
func (g *gen) newLabel(stem string) string {
	*g.label++
	return fmt.Sprintf("%s%d", stem, *g.label)
}

// mem is base+disp.
func mem(base reg.Register, disp int) operand.Mem { return operand.Mem{Base: base, Disp: disp} }

// broadcast loads the float32 with the given bits into every lane of a new
// full-width register.
func (g *gen) broadcast(bits uint32) reg.VecVirtual {
	r := g.vec()
	g.ctx.VBROADCASTSS(g.pool.scalar(bits), r)
	return r
}

// constPool collects the read-only data of one output file and emits it
// after the functions, in first-use order (so output is deterministic).
type constPool struct {
	order []string
	data  map[string][]operand.Constant
}

func newConstPool() *constPool { return &constPool{data: map[string][]operand.Constant{}} }

func (c *constPool) add(name string, vals []operand.Constant) operand.Mem {
	if _, ok := c.data[name]; !ok {
		c.order = append(c.order, name)
		c.data[name] = vals
	}
	return operand.NewDataAddr(operand.NewStaticSymbol(name), 0)
}

// scalar is a 4-byte constant (a VBROADCASTSS source), named by its bits.
func (c *constPool) scalar(bits uint32) operand.Mem {
	return c.add(fmt.Sprintf("c32_%08x", bits), []operand.Constant{operand.U32(bits)})
}

// vec8 is a 32-byte vector of eight copies of a 4-byte constant (float32
// bits or an int32), an AVX2 memory operand.
func (c *constPool) vec8(bits uint32) operand.Mem {
	vals := make([]operand.Constant, 8)
	for i := range vals {
		vals[i] = operand.U32(bits)
	}
	return c.add(fmt.Sprintf("c32x8_%08x", bits), vals)
}

// tailMask8 is sixteen int32: eight −1 then eight 0. The eight words at
// byte offset 4·(8−n) are an AVX2 VMASKMOVPS mask selecting n lanes.
func (c *constPool) tailMask8() operand.Mem {
	vals := make([]operand.Constant, 16)
	for i := range vals {
		vals[i] = operand.U32(0)
		if i < 8 {
			vals[i] = operand.U32(0xffffffff)
		}
	}
	return c.add("tailmask8", vals)
}

// tailMask16 is sixteen uint16 where entry n is (1<<n)−1, an AVX-512
// opmask selecting n lanes.
func (c *constPool) tailMask16() operand.Mem {
	vals := make([]operand.Constant, 16)
	for i := range vals {
		vals[i] = operand.U16(uint16(1)<<i - 1)
	}
	return c.add("tailmask16", vals)
}

// emit writes every collected constant as a static RODATA|NOPTR global.
func (c *constPool) emit(ctx *build.Context) {
	for _, name := range c.order {
		ctx.StaticGlobal(name)
		ctx.DataAttributes(attr.RODATA | attr.NOPTR)
		for _, v := range c.data[name] {
			ctx.AppendDatum(v)
		}
	}
}

// tail is the masked access to the 1..lanes−1 elements left when a loop over
// full vectors of a run-time length ends: a VMASKMOVPS mask on AVX2, an
// opmask on AVX-512. Masked-off lanes are neither read nor written, so they
// cannot fault.
type tail struct {
	g    *gen
	k    reg.OpmaskVirtual // AVX-512
	ymsk reg.VecVirtual    // AVX2
}

// runtimeTail builds the tail mask for n (1 ≤ n < lanes) remaining
// elements; n is clobbered.
func (g *gen) runtimeTail(n reg.GPVirtual) tail {
	t := tail{g: g}
	if g.isa.lanes == 16 {
		base := g.ctx.GP64()
		g.ctx.LEAQ(g.pool.tailMask16(), base)
		t.k = g.ctx.K()
		g.ctx.KMOVW(operand.Mem{Base: base, Index: n, Scale: 2}, t.k)
		return t
	}
	base := g.ctx.GP64()
	g.ctx.LEAQ(g.pool.tailMask8(), base)
	g.ctx.NEGQ(n)
	t.ymsk = g.ctx.YMM()
	g.ctx.VMOVDQU(operand.Mem{Base: base, Index: n, Scale: 4, Disp: 32}, t.ymsk)
	return t
}

// load reads the tail's elements from m into dst, zeroing the other lanes.
func (t tail) load(m operand.Mem, dst reg.VecVirtual) {
	if t.k != nil {
		t.g.ctx.VMOVUPS_Z(m, t.k, dst)
		return
	}
	t.g.ctx.VMASKMOVPS(m, t.ymsk, dst)
}

// store writes the tail's elements of src to m and nothing else.
func (t tail) store(src reg.VecVirtual, m operand.Mem) {
	if t.k != nil {
		t.g.ctx.VMOVUPS(src, t.k, m)
		return
	}
	t.g.ctx.VMASKMOVPS(src, t.ymsk, m)
}

// zeroOutside clears the lanes of v that are not in the tail.
func (t tail) zeroOutside(v reg.VecVirtual) {
	if t.k != nil {
		t.g.ctx.VMOVAPS_Z(v, t.k, v)
		return
	}
	t.g.ctx.VANDPS(t.ymsk, v, v)
}
