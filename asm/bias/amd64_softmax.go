package amd64

import (
	"math"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Vectorized expf, the one softmaxRow uses.
//
// exp(x) = 2^n · exp(r), n = round(x·log2 e), r = x − n·ln 2, |r| ≤ ln2/2.
//
// n comes from the "magic number" rounding: t = x·log2e + M with one fused
// multiply-add, M = 1.5·2^23, leaves round-to-nearest(x·log2e) in the low
// mantissa bits of t (|x·log2e| < 2^22), and n = t − M exactly. On AVX2, M
// also carries the float32 exponent bias, M = 1.5·2^23 + 127, so that t's
// bits shifted left by 23 are the float32 2^n itself (n + 127 ∈ [0, 254]).
// This is the rounding of Cephes-style SIMD exps such as the SLEEF and
// "avx_mathfun" ports; it costs an FMA and a subtraction instead of a
// multiply and a two-µop VROUNDPS/VRNDSCALEPS.
//
// The reduction is Cody–Waite's (W. J. Cody and W. Waite, Software Manual for
// the Elementary Functions, 1980): ln 2 = C1 + C2 with C1 = 0.693359375
// (= 355/512, 9 significant bits, so n·C1 is exact for |n| < 2^15) and
// C2 = −2.12194440e−4, each product subtracted with one fused multiply-add.
// exp(r) is a degree-6 polynomial evaluated by Horner's rule (six fused
// multiply-adds), 1 + r + c2·r² + … + c6·r⁶, with c2…c6 the minimax fit of
// the relative error of exp on [−ln2/2, ln2/2] (Lawson's reweighted least
// squares, in float64; posenc's own fit): 6.2e−8 relative in exact
// arithmetic, 0.71 ulp evaluated in float32.
//
// Scaling by 2^n: VSCALEFPS on AVX-512, which gives IEEE overflow, gradual
// underflow and a single rounding over the whole float32 range; inputs are
// clamped to [−104, 89] (exp(−104) < 2^−150 rounds to 0, exp(89) > FLT_MAX
// overflows). On AVX2, one multiply by the float32 2^n built from t's bits,
// for n ∈ [−127, 127]: inputs are clamped to [−88, 88], so exp(x) = 0 for
// every x < −87.68 (x·log2e < −126.5: n = −127 makes the bits 0), results
// below FLT_MIN (x < −87.34) are within 2^−126 of exp(x), and inputs above
// 88 give exp(88) (softmaxRow's exponents are never above ~1: they are
// v − max v). The
// clamps use VMAXPS/VMINPS ordered so that a NaN input is passed through:
// exp(NaN) = NaN, exp(−Inf) = 0.
//
// Accuracy (every normal result, x ≤ 88 on AVX2): at most expMaxULP float32
// ulps of the exact result, measured against float64 math.Exp over all 2^32
// float32 inputs (go test ./asm/amd64 -run TestKernels -args -expstride=1);
// TestKernels checks every 97th bit pattern and the special values by
// default.
const (
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expMagic = 0x1.8p23 // 1.5·2^23: adding it rounds to an integer
)

// expClamp is the input range of the exp of each instruction set (see above).
var expClamp = map[int][2]float32{
	16: {-104, 89}, // AVX-512: VSCALEFPS scales over the whole range
	8:  {-88, 88},  // AVX2: n + 127 must stay in [0, 254]
}

// expMaxULP bounds the error of the generated expf in float32 ulps of the
// exact result for normal results: the exhaustive maximum, 0.8942 ulp at
// x = 5.201929 for both AVX2 and AVX-512 (all 2^32 inputs, 135 s), rounded up.
const expMaxULP = 0.9

// expPoly are the coefficients c6…c0 of exp(r), highest degree first.
var expPoly = [7]float32{
	0.0013814599,
	0.008368717,
	0.04166839,
	0.16666521,
	0.49999994,
	1,
	1,
}

func f32bits(f float32) uint32 { return math.Float32bits(f) }

// expConsts holds the operands the exp sequence needs: registers on AVX-512
// (broadcast once per call), 32-byte memory vectors on AVX2 except for the
// clamp bounds, which VMAXPS/VMINPS need in registers to keep NaN.
type expConsts struct {
	lo, hi               reg.Register
	log2e, c1, c2, magic operand.Op
	poly                 [7]operand.Op
}

// newExpConsts prepares the exp operands.
func (g *gen) newExpConsts() expConsts {
	var e expConsts
	clamp := expClamp[g.isa.lanes]
	e.lo = g.broadcast(f32bits(clamp[0]))
	e.hi = g.broadcast(f32bits(clamp[1]))
	k := func(bits uint32) operand.Op {
		if g.isa.lanes == 16 {
			return g.broadcast(bits)
		}
		return g.pool.vec8(bits)
	}
	e.log2e = k(f32bits(expLog2e))
	e.c1 = k(f32bits(expC1))
	e.c2 = k(f32bits(expC2))
	if g.isa.lanes == 16 {
		e.magic = k(f32bits(expMagic))
	} else {
		e.magic = k(f32bits(expMagic + 127))
	}
	for i, p := range expPoly {
		e.poly[i] = k(f32bits(p))
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
	t := g.vec()
	c.VMOVUPS(e.magic, t)
	c.VFMADD231PS(e.log2e, x, t) // t = x·log2e + M, rounded to an integer
	n := g.vec()
	c.VSUBPS(e.magic, t, n)    // n = round(x·log2e), exact
	c.VFNMADD231PS(e.c1, n, x) // x = x − n·C1 (exact: Sterbenz, n·C1 exact)
	c.VFNMADD231PS(e.c2, n, x) // x = r = x − n·C2
	p := g.vec()
	c.VMOVUPS(e.poly[0], p)
	for _, k := range e.poly[1:] {
		c.VFMADD213PS(k, x, p) // p = p·r + k; last: p = exp(r)
	}
	if g.isa.lanes == 16 {
		c.VSCALEFPS(n, p, x) // x = p·2^n, IEEE overflow/underflow
		return
	}
	c.VPSLLD(operand.U8(23), t, t) // the float32 2^n (bits (n+127)<<23)
	c.VMULPS(t, p, x)              // the one rounding
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
	e := g.newExpConsts()
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

// softmaxPrefetch is how far ahead of the exp pass softmaxRow prefetches, in
// bytes. Measured on the [32][512][512] causal ALiBi benchmark (AMD EPYC,
// AVX-512): no prefetch 15.5 GB/s, 2 KiB 18.2, 4 KiB 20.0, 8 KiB 22.1,
// 16 KiB 21.3. A prefetch is a hint: it never faults and is not an access of
// the Go memory model, so reading ahead of the row's slice is harmless.
const softmaxPrefetch = 8192

// softmaxRow emits softmaxRow<ISA>(row, bias, scale): with
// v_j = scale·row[j] + bias[j] (one fused multiply-add) and m = max_j v_j,
// row[j] = exp(v_j − m) / Σ_k exp(v_k − m), the exponent formed as
// (bias[j] − m) + scale·row[j]. Three passes: the max; exp,
// store and sum (blocks of unroll vectors summed in float32, the blocks in float64); a multiply by the
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
	e := g.newExpConsts()
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
	// Pass 2 works on blocks of unroll vectors: their exps are summed in
	// float32 (a tree of depth 2: error ≤ 2 ulp of the block's sum) and
	// converted to float64 once per block, which keeps the float64 sum of
	// arbitrarily long rows while spending about one µop per vector on it.
	pass2 := func(precise bool) {
		r, b, n := passBias()
		var blockSum [2]reg.VecVirtual
		g.vectorLoopBlocks(n, unroll, []reg.GPVirtual{r, b}, func(u, blk int) {
			v := g.vec()
			c.VMOVUPS(mem(b, 4*L*u), v)
			exponent(precise, v, mem(r, 4*L*u))
			g.exp(v, e)
			c.VMOVUPS(v, mem(r, 4*L*u))
			if L == 16 || u%2 == 0 {
				// One cache line per 64 bytes, softmaxPrefetch bytes ahead:
				// score rows are consecutive in memory ([heads][lq][lk]), so
				// this brings the rows of the coming calls into cache while
				// this row's exps keep the vector units busy.
				c.PREFETCHT0(mem(r, softmaxPrefetch+4*L*u))
			}
			switch {
			case blk == 1:
				accumulate(v)
			case u < 2:
				blockSum[u] = v
			default:
				c.VADDPS(v, blockSum[u%2], blockSum[u%2])
			}
			if blk > 1 && u == blk-1 {
				c.VADDPS(blockSum[1], blockSum[0], blockSum[0])
				accumulate(blockSum[0])
			}
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
