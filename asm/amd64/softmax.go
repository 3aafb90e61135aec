package amd64

import (
	"math"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Vectorized expf.
//
// exp(x) = 2^n · exp(r), n = round(x·log2 e), r = x − n·ln 2, |r| ≤ ln2/2.
//
// The reduction is Cody–Waite's (W. J. Cody and W. Waite, Software Manual for
// the Elementary Functions, 1980): ln 2 = C1 + C2 with C1 = 0.693359375
// (= 355/512, 9 significant bits, so n·C1 is exact for |n| < 2^15) and
// C2 = −2.12194440e−4, each product subtracted with one fused multiply-add.
// exp(r) = 1 + r + r²·P(r) with the degree-5 P of the Cephes library's expf
// (S. L. Moshier, Cephes Math Library, expf.c, netlib.org/cephes), whose
// stated relative error on [−ln2/2, ln2/2] is below 1 float32 ulp.
//
// The scaling 2^n is applied as 2^n1 · 2^n2 with n1 = n>>1 and n2 = n − n1,
// each built by adding the float32 bias 127 to the integer and shifting it
// into the exponent field (AVX2), or by VSCALEFPS (AVX-512). Splitting keeps
// both factors normal for n ∈ [−150, 128], so results between FLT_MIN and
// the smallest subnormal come out as correctly scaled subnormals (one
// rounding) and results past FLT_MAX overflow to +Inf. Inputs are first
// clamped to [expLo, expHi] with VMAXPS/VMINPS ordered so that a NaN input is
// passed through: exp(NaN) = NaN, exp(−Inf) = 0 (any x < −103.98 rounds to
// 0), exp(+Inf) = +Inf (any x > 88.7228 overflows).
//
// Accuracy: the largest error is 1.0103 ulp of the exact result (at
// x = −5.8778844, both variants; subnormal results counted in units of the
// smallest subnormal), measured against float64 math.Exp over all 2^32
// float32 inputs (go test ./asm/amd64 -run TestKernels -args -expstride=1).
// TestKernels checks every 97th bit pattern and the special values against
// expMaxULP by default.
const (
	expLo    = -104.0 // exp(−104) < 2^−150: rounds to 0
	expHi    = 89.0   // exp(89) > FLT_MAX: overflows to +Inf
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
)

// expMaxULP bounds the error of the generated expf in float32 ulps of the
// exact result: the exhaustive maximum, 1.0103, rounded up.
const expMaxULP = 1.02

// expPoly are the Cephes expf coefficients of P, highest degree first.
var expPoly = [6]float32{
	1.9875691500e-4,
	1.3981999507e-3,
	8.3334519073e-3,
	4.1665795894e-2,
	1.6666665459e-1,
	5.0000001201e-1,
}

func f32bits(f float32) uint32 { return math.Float32bits(f) }

// expConsts holds the operands the exp sequence needs: registers on AVX-512
// (broadcast once per call), 32-byte memory vectors on AVX2 except for the
// clamp bounds, which VMAXPS/VMINPS need in registers to keep NaN.
type expConsts struct {
	lo, hi                   reg.Register // upper clamp: expHi, or 0 in softmax
	log2e, c1, c2, one, bias operand.Op
	poly                     [6]operand.Op
}

// newExpConsts prepares the exp operands with the upper clamp hi.
func (g *gen) newExpConsts(hi float32) expConsts {
	var e expConsts
	e.lo = g.broadcast(f32bits(expLo))
	e.hi = g.broadcast(f32bits(hi))
	k := func(bits uint32) operand.Op {
		if g.isa.lanes == 16 {
			return g.broadcast(bits)
		}
		return g.pool.vec8(bits)
	}
	e.log2e = k(f32bits(expLog2e))
	e.c1 = k(f32bits(expC1))
	e.c2 = k(f32bits(expC2))
	e.one = k(f32bits(1))
	for i, p := range expPoly {
		e.poly[i] = k(f32bits(p))
	}
	if g.isa.lanes == 8 {
		e.bias = g.pool.vec8(127)
	}
	return e
}

// exp replaces every lane of x by exp(x), as described above.
func (g *gen) exp(x reg.VecVirtual, e expConsts) {
	c := g.ctx
	// Clamp. Intel's MAXPS/MINPS return the second source when either
	// operand is NaN; in Go operand order that is the first operand, x.
	c.VMAXPS(x, e.lo, x)
	c.VMINPS(x, e.hi, x)
	n := g.vec()
	c.VMULPS(e.log2e, x, n)
	if g.isa.lanes == 16 {
		c.VRNDSCALEPS(operand.U8(0), n, n) // round to nearest even
	} else {
		c.VROUNDPS(operand.U8(0), n, n)
	}
	c.VFNMADD231PS(e.c1, n, x) // x = x − n·C1 (exact: Sterbenz, n·C1 exact)
	c.VFNMADD231PS(e.c2, n, x) // x = r = x − n·C2
	p := g.vec()
	c.VMOVUPS(e.poly[0], p)
	for _, k := range e.poly[1:] {
		c.VFMADD213PS(k, x, p) // p = p·r + k
	}
	r2 := g.vec()
	c.VMULPS(x, x, r2)
	c.VFMADD213PS(x, r2, p) // p = r²·P(r) + r
	c.VADDPS(e.one, p, p)   // p = exp(r)
	if g.isa.lanes == 16 {
		c.VSCALEFPS(n, p, x) // x = p·2^n, IEEE overflow/underflow
		return
	}
	n1 := g.vec()
	c.VCVTPS2DQ(n, n) // n is integral: exact
	c.VPSRAD(operand.U8(1), n, n1)
	c.VPSUBD(n1, n, n) // n2 = n − n1
	c.VPADDD(e.bias, n1, n1)
	c.VPSLLD(operand.U8(23), n1, n1) // 2^n1
	c.VPADDD(e.bias, n, n)
	c.VPSLLD(operand.U8(23), n, n) // 2^n2
	c.VMULPS(n1, p, p)             // exact
	c.VMULPS(n, p, x)              // the one rounding
}

// expRow emits expRow<ISA>(dst, src): dst[j] = exp(src[j]). It is not a
// kernel of the ABI; Params.ExpTest asks for it so that tests can measure the
// exp used by softmaxRow.
func (g *gen) expRow() {
	c := g.ctx
	c.Function("expRow" + g.isa.suffix)
	c.Attributes(attr.NOSPLIT)
	c.Doc("expRow"+g.isa.suffix+" sets dst[j] = exp(src[j]) with the "+g.isa.name+" expf of softmaxRow"+g.isa.suffix+".",
		"It exists for tests; len(src) == len(dst).")
	c.SignatureExpr("func(dst, src []float32)")
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), d)
	c.Load(c.Param("src").Base(), s)
	c.Load(c.Param("dst").Len(), n)
	e := g.newExpConsts(expHi)
	g.vectorLoop(n, 1, []reg.GPVirtual{d, s}, func(int) {
		v := g.vec()
		c.VMOVUPS(mem(s, 0), v)
		g.exp(v, e)
		c.VMOVUPS(v, mem(d, 0))
	}, func(t tail) {
		v := g.vec()
		t.load(mem(s, 0), v)
		g.exp(v, e)
		t.store(v, mem(d, 0))
	})
	c.VZEROUPPER()
	c.RET()
}

// softmaxRow emits softmaxRow<ISA>(row, bias, scale): with
// v_j = scale·row[j] + bias[j] (one fused multiply-add) and m = max_j v_j,
// row[j] = exp(v_j − m) / Σ_k exp(v_k − m), the exponent formed as
// (bias[j] − m) + scale·row[j]. Three passes: the max; exp,
// store and sum (the sum is accumulated in float64); a multiply by the
// reciprocal of the sum (computed in float64, rounded once to float32).
func (g *gen) softmaxRow() {
	c := g.ctx
	L := g.isa.lanes
	c.Function("softmaxRow" + g.isa.suffix)
	c.Attributes(attr.NOSPLIT)
	c.Doc("softmaxRow"+g.isa.suffix+" is the "+g.isa.name+" kernels.softmaxRow.",
		"It trusts its arguments: len(bias) == len(row) >= 1.")
	c.SignatureExpr("func(row, bias []float32, scale float32)")
	rowBase, biasBase, length := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("row").Base(), rowBase)
	c.Load(c.Param("bias").Base(), biasBase)
	c.Load(c.Param("row").Len(), length)
	sx := c.XMM()
	c.Load(c.Param("scale"), sx)
	scale := g.vec()
	c.VBROADCASTSS(sx, scale)
	negInf := f32bits(float32(math.Inf(-1)))

	// pass restarts the row pointer and count for one pass over the row.
	pass := func() (r, n reg.GPVirtual) {
		r, n = c.GP64(), c.GP64()
		c.MOVQ(rowBase, r)
		c.MOVQ(length, n)
		return
	}
	// passBias restarts them together with the bias pointer.
	passBias := func() (r, b, n reg.GPVirtual) {
		b = c.GP64()
		c.MOVQ(biasBase, b)
		r, n = pass()
		return
	}
	// value loads v = scale·row + bias for the vector at r, b.
	value := func(r, b reg.Register, off int) reg.VecVirtual {
		v := g.vec()
		c.VMOVUPS(mem(b, off), v)
		c.VFMADD231PS(mem(r, off), scale, v)
		return v
	}

	// Pass 1: the maximum.
	var acc [unroll]reg.VecVirtual
	for i := range acc {
		acc[i] = g.broadcast(negInf)
	}
	r, b, n := passBias()
	g.vectorLoop(n, unroll, []reg.GPVirtual{r, b}, func(u int) {
		v := value(r, b, 4*L*u)
		c.VMAXPS(v, acc[u], acc[u])
	}, func(t tail) {
		v, w := g.vec(), g.vec()
		t.load(mem(b, 0), v)
		t.load(mem(r, 0), w)
		c.VFMADD231PS(w, scale, v)
		if t.k != nil {
			c.VMAXPS(v, acc[0], t.k, acc[0]) // merge-masked: other lanes keep acc
			return
		}
		ninf := g.broadcast(negInf)
		c.VBLENDVPS(t.ymsk, v, ninf, v) // lanes outside the tail become −Inf
		c.VMAXPS(v, acc[0], acc[0])
	})
	c.VMAXPS(acc[1], acc[0], acc[0])
	c.VMAXPS(acc[3], acc[2], acc[2])
	c.VMAXPS(acc[2], acc[0], acc[0])
	mx := g.horizontal(acc[0], false)
	m := g.vec()
	c.VBROADCASTSS(mx, m)

	// Pass 2: exp(v − m), stored, summed in float64.
	e := g.newExpConsts(expHi)
	sum := [2]reg.VecVirtual{g.vec(), g.vec()}
	for _, s := range sum {
		c.VXORPD(s, s, s)
	}
	accumulate := func(v reg.VecVirtual) {
		lo, hi := g.vec(), g.vec()
		if L == 16 {
			c.VCVTPS2PD(v.AsY(), lo)
			h := c.YMM()
			c.VEXTRACTF32X8(operand.U8(1), v, h)
			c.VCVTPS2PD(h, hi)
		} else {
			c.VCVTPS2PD(v.AsX(), lo)
			h := c.XMM()
			c.VEXTRACTF128(operand.U8(1), v, h)
			c.VCVTPS2PD(h, hi)
		}
		c.VADDPD(lo, sum[0], sum[0])
		c.VADDPD(hi, sum[1], sum[1])
	}
	// exponent sets v to the exponent of the row vector in v (bias) and w
	// (row, or nil to read it from r). Precise: (bias − m) + scale·row. bias − m
	// is exact for every bias that matters (Sterbenz: within a factor 2 of m)
	// and the fused multiply-add rounds once, so a large bias shared by the
	// competing keys costs no precision; m's own rounding is a constant shift
	// the normalization cancels — as long as that shift, up to ulp(m)/2, is
	// small. Robust, for |m| ≥ 2^24 where it is not: fl(scale·row + bias) − m,
	// exactly 0 for the maximum, so exp neither overflows nor underflows
	// for the whole row.
	exponent := func(precise bool, v reg.VecVirtual, row operand.Op) {
		if precise {
			c.VSUBPS(m, v, v)
			c.VFMADD231PS(row, scale, v)
		} else {
			c.VFMADD231PS(row, scale, v)
			c.VSUBPS(m, v, v)
		}
	}
	pass2 := func(precise bool) {
		r, b, n := passBias()
		g.vectorLoop(n, 1, []reg.GPVirtual{r, b}, func(int) {
			v := g.vec()
			c.VMOVUPS(mem(b, 0), v)
			exponent(precise, v, mem(r, 0))
			g.exp(v, e)
			c.VMOVUPS(v, mem(r, 0))
			accumulate(v)
		}, func(t tail) {
			v, w := g.vec(), g.vec()
			t.load(mem(b, 0), v)
			t.load(mem(r, 0), w)
			exponent(precise, v, w)
			g.exp(v, e)
			t.store(v, mem(r, 0))
			t.zeroOutside(v)
			accumulate(v)
		})
	}
	huge, summed := g.newLabel("softmax_huge"), g.newLabel("softmax_summed")
	bits := c.GP32()
	c.VMOVD(mx, bits)
	c.ANDL(operand.U32(0x7fffffff), bits)
	c.CMPL(bits, operand.U32(f32bits(1<<24)))
	c.JAE(operand.LabelRef(huge)) // |m| ≥ 2^24 (or NaN)
	pass2(true)
	c.JMP(operand.LabelRef(summed))
	c.Label(huge)
	pass2(false)
	c.Label(summed)
	c.VADDPD(sum[1], sum[0], sum[0])
	total := g.horizontal(sum[0], true)
	inv := c.XMM()
	c.VMOVSD(g.pool.add("f64_3ff0000000000000", []operand.Constant{operand.U64(math.Float64bits(1))}), inv)
	c.VDIVSD(total, inv, inv)  // 1/Σ in float64
	c.VCVTSD2SS(inv, inv, inv) // one rounding to float32
	f := g.vec()
	c.VBROADCASTSS(inv, f)

	// Pass 3: scale by 1/Σ.
	r, n = pass()
	g.vectorLoop(n, unroll, []reg.GPVirtual{r}, func(u int) {
		v := g.vec()
		c.VMULPS(mem(r, 4*L*u), f, v)
		c.VMOVUPS(v, mem(r, 4*L*u))
	}, func(t tail) {
		v := g.vec()
		t.load(mem(r, 0), v)
		c.VMULPS(f, v, v)
		t.store(v, mem(r, 0))
	})
	c.VZEROUPPER()
	c.RET()
}

// horizontal reduces the lanes of v (float32 max, or float64 sum when pd)
// into lane 0 of the returned XMM register.
func (g *gen) horizontal(v reg.VecVirtual, pd bool) reg.Register {
	c := g.ctx
	op := c.VMAXPS
	if pd {
		op = c.VADDPD
	}
	y := v.AsY()
	if g.isa.lanes == 16 {
		h := c.YMM()
		if pd {
			c.VEXTRACTF64X4(operand.U8(1), v, h)
		} else {
			c.VEXTRACTF32X8(operand.U8(1), v, h)
		}
		op(h, v.AsY(), h)
		y = h
	}
	x := c.XMM()
	c.VEXTRACTF128(operand.U8(1), y, x)
	op(x, y.(reg.VecVirtual).AsX(), x)
	t := c.XMM()
	if pd {
		c.VPERMILPD(operand.U8(1), x, t) // swap the two doubles
		c.VADDSD(t, x, x)
		return x
	}
	c.VPERMILPS(operand.U8(0x4e), x, t) // swap 64-bit halves
	c.VMAXPS(t, x, x)
	c.VPERMILPS(operand.U8(0xb1), x, t) // swap neighbours
	c.VMAXPS(t, x, x)
	return x
}
