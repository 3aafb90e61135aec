package bias

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// gen emits the kernels of one AVX variant.
type gen struct{ *amd64.Gen }

// expConsts holds the operands the exp sequence needs: registers on AVX-512
// (broadcast once per call), 32-byte memory vectors on AVX2 except for the
// clamp bounds, which VMAXPS/VMINPS need in registers to keep NaN.
type expConsts struct {
	lo, hi               reg.Register
	log2e, c1, c2, magic operand.Op
	poly                 [7]operand.Op
	// noHi drops the upper clamp: softmax's exponents are at most about
	// ulp(max)/2 above 0 (pass 2 subtracts the row maximum of the same
	// logits, and |max| < 2^24 on the precise path; exactly ≤ 0 on the
	// robust one), far below hi, so the VMINPS would never change a lane;
	// NaN still passes the lower clamp unchanged.
	noHi bool
}

// newExpConsts prepares the exp operands. On AVX2, the first inRegs of
// magic, log2e, C1, C2 and the polynomial's coefficients are broadcast into
// registers, the rest stay memory operands: a caller spends the registers
// its loop leaves free (each saves one load per exp'd vector).
func (g gen) newExpConsts(inRegs int) expConsts {
	var e expConsts
	clamp := expClamp[g.ISA.Lanes]
	e.lo = g.Broadcast(f32bits(clamp[0]))
	e.hi = g.Broadcast(f32bits(clamp[1]))
	used := 0
	k := func(bits uint32) operand.Op {
		if g.ISA.Lanes == 16 || used < inRegs {
			used++
			return g.Broadcast(bits)
		}
		return g.Pool.Vec8(bits)
	}
	if g.ISA.Lanes == 16 {
		e.magic = k(f32bits(expMagic))
	} else {
		e.magic = k(f32bits(expMagic + 127))
	}
	e.log2e = k(f32bits(expLog2e))
	e.c1 = k(f32bits(expC1))
	e.c2 = k(f32bits(expC2))
	// poly[5] and poly[6] are both 1: one operand serves both.
	for i, p := range expPoly {
		if i == 6 {
			e.poly[i] = e.poly[5]
			continue
		}
		e.poly[i] = k(f32bits(p))
	}
	return e
}

// exp replaces every lane of x by exp(x), as described above.
func (g gen) exp(x reg.VecVirtual, e expConsts) { g.expN([]reg.VecVirtual{x}, e) }

// expN is exp on every vector of xs, the same instructions per vector
// (so bit-identical results) emitted step by step across the vectors: the
// sequence is one dependency chain per vector (about 45 cycles of latency),
// and interleaving independent chains keeps the out-of-order scheduler full
// of ready work instead of waiting chains.
func (g gen) expN(xs []reg.VecVirtual, e expConsts) {
	c := g.Ctx
	each := func(f func(i int, x reg.VecVirtual)) {
		for i, x := range xs {
			f(i, x)
		}
	}
	// Clamp. Intel's MAXPS/MINPS return the second source when either
	// operand is NaN; in Go operand order that is the first operand, x.
	each(func(_ int, x reg.VecVirtual) { c.VMAXPS(x, e.lo, x) })
	if !e.noHi {
		each(func(_ int, x reg.VecVirtual) { c.VMINPS(x, e.hi, x) })
	}
	t := make([]reg.VecVirtual, len(xs))
	n := make([]reg.VecVirtual, len(xs))
	each(func(i int, x reg.VecVirtual) {
		t[i] = g.Vec()
		c.VMOVUPS(e.magic, t[i])        // a register or a memory constant
		c.VFMADD231PS(e.log2e, x, t[i]) // t = x·log2e + M, rounded to an integer
	})
	each(func(i int, x reg.VecVirtual) {
		n[i] = g.Vec()
		c.VSUBPS(e.magic, t[i], n[i]) // n = round(x·log2e), exact
	})
	each(func(i int, x reg.VecVirtual) { c.VFNMADD231PS(e.c1, n[i], x) }) // x = x − n·C1 (exact: Sterbenz, n·C1 exact)
	each(func(i int, x reg.VecVirtual) { c.VFNMADD231PS(e.c2, n[i], x) }) // x = r = x − n·C2
	p := make([]reg.VecVirtual, len(xs))
	if g.ISA.Lanes == 16 {
		each(func(i int, _ reg.VecVirtual) { p[i] = g.Vec() })
	} else {
		// AVX2 has 16 registers: the float32 2^n (bits (n+127)<<23) is formed
		// in t, and the polynomial reuses n's register.
		each(func(i int, _ reg.VecVirtual) {
			c.VPSLLD(operand.U8(23), t[i], t[i])
			p[i] = n[i]
		})
	}
	each(func(i int, _ reg.VecVirtual) { c.VMOVUPS(e.poly[0], p[i]) })
	for _, k := range e.poly[1:] {
		each(func(i int, x reg.VecVirtual) { c.VFMADD213PS(k, x, p[i]) }) // p = p·r + k; last: p = exp(r)
	}
	if g.ISA.Lanes == 16 {
		each(func(i int, x reg.VecVirtual) { c.VSCALEFPS(n[i], p[i], x) }) // x = p·2^n, IEEE overflow/underflow
		return
	}
	each(func(i int, x reg.VecVirtual) { c.VMULPS(t[i], p[i], x) }) // the one rounding
}

// expRow emits expRow<ISA>(dst, src): dst[j] = exp(src[j]). It is not a
// kernel of the ABI; Params.ExpTest asks for it so that tests can measure the
// exp used by softmaxRow.
func (g gen) expRow() {
	c := g.Ctx
	g.Begin(abi.Exp, "expRow"+g.ISA.Suffix+" sets dst[j] = exp(src[j]) with the "+g.ISA.Name+" expf of softmaxRow"+g.ISA.Suffix+".",
		"It exists for tests; len(src) == len(dst).")
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), d)
	c.Load(c.Param("src").Base(), s)
	c.Load(c.Param("dst").Len(), n)
	e := g.newExpConsts(0)
	g.VectorLoop(n, 1, []reg.GPVirtual{d, s}, func(int) {
		v := g.Vec()
		c.VMOVUPS(amd64.Mem(s, 0), v)
		g.exp(v, e)
		c.VMOVUPS(v, amd64.Mem(d, 0))
	}, func(t amd64.Tail) {
		v := g.Vec()
		t.Load(amd64.Mem(s, 0), v)
		g.exp(v, e)
		t.Store(v, amd64.Mem(d, 0))
	})
	c.VZEROUPPER()
	c.RET()
}
