package bias

import (
	"fmt"
	"math"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// softmaxRow emits softmaxRow<ISA>(row, bias, scale): with
// v_j = scale·row[j] + bias[j] (one fused multiply-add) and m = max_j v_j,
// row[j] = exp(v_j − m) / Σ_k exp(v_k − m), the exponent formed as
// (bias[j] − m) + scale·row[j]. Three passes: the max; exp,
// store and sum (blocks of amd64.Unroll vectors summed in float32, the blocks in float64); a multiply by the
// reciprocal of the sum (computed in float64, rounded once to float32).
func (g gen) softmaxRow() { g.softmax(false) }

// softmaxRamp emits softmaxRamp<ISA>(row, scale, nslope, t0): softmaxRow
// with the ALiBi bias of Press et al. (2022) computed in registers instead
// of loaded, bias[j] = nslope·|t0 − j| (nslope = −slope_h, t0 the query
// position relative to key 0). t0 − j is kept as a vector of float32
// integers, decreased by the lane count per vector: exact while t0 and the
// row length stay below 2^24, which the caller guarantees. Each bias is
// rounded once (the product), as a float32 table entry would be.
func (g gen) softmaxRamp() { g.softmax(true) }

// softmax emits softmaxRow (ramp false) or softmaxRamp (ramp true).
func (g gen) softmax(ramp bool) {
	c := g.Ctx
	L := g.ISA.Lanes
	k, name := abi.SoftmaxRow, "softmaxRow"
	if ramp {
		k, name = abi.SoftmaxRamp, "softmaxRamp"
	}
	g.Begin(k, name+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels."+name+".",
		"It trusts its arguments: len(bias) == len(row) >= 1 (softmaxRamp: len(row) >= 1, t0 and len(row) < 2^24).")
	rowBase, biasBase, length := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("row").Base(), rowBase)
	c.Load(c.Param("row").Len(), length)
	if !ramp {
		c.Load(c.Param("bias").Base(), biasBase)
	}
	sx := c.XMM()
	c.Load(c.Param("scale"), sx)
	scale := g.Vec()
	c.VBROADCASTSS(sx, scale)
	negInf := f32bits(float32(math.Inf(-1)))

	// The ramp's registers: nslope broadcast and the running t0 − j of the
	// first vector of the current block; the abs mask and the lane offsets
	// u·L are memory constants.
	var nslope, tv reg.VecVirtual
	var iota operand.Mem
	abs := true // biasVec folds t0 − j to |t0 − j|
	if ramp {
		nx := c.XMM()
		c.Load(c.Param("nslope"), nx)
		nslope = g.Vec()
		c.VBROADCASTSS(nx, nslope)
		tv = g.Vec()
		lanes := make([]operand.Constant, L)
		for i := range lanes {
			lanes[i] = operand.U32(f32bits(float32(i)))
		}
		iota = g.Pool.Add(fmt.Sprintf("iota%d", L), lanes)
	}
	// full is a full-width memory vector of L copies of bits.
	full := func(bits uint32) operand.Mem {
		if L == 8 {
			return g.Pool.Vec8(bits)
		}
		vals := make([]operand.Constant, L)
		for i := range vals {
			vals[i] = operand.U32(bits)
		}
		return g.Pool.Add(fmt.Sprintf("c32x16_%08x", bits), vals)
	}
	// rampStart sets tv to t0 − lane for a new pass.
	rampStart := func() {
		if !ramp {
			return
		}
		t0, err := c.Param("t0").Resolve()
		if err != nil {
			panic(err) // abi.SoftmaxRamp has a float32 t0: cannot happen
		}
		c.VBROADCASTSS(t0.Addr, tv)
		c.VSUBPS(iota, tv, tv)
	}
	// biasVec writes the bias of vector u of a block of blk vectors into v:
	// a load at b, or nslope·|t0 − j| with t0 − j = tv − u·L (tv itself moves
	// once per block, so the vectors of a block do not wait on each other).
	biasVec := func(b reg.Register, u, blk int, v reg.VecVirtual) {
		if !ramp {
			c.VMOVUPS(amd64.Mem(b, 4*L*u), v)
			return
		}
		switch {
		case u == 0 && abs:
			c.VANDPS(full(0x7fffffff), tv, v)
		case u == 0:
			c.VMOVAPS(tv, v)
		default:
			c.VSUBPS(full(f32bits(float32(u*L))), tv, v)
			if abs {
				c.VANDPS(full(0x7fffffff), v, v)
			}
		}
		c.VMULPS(nslope, v, v)
		if u == blk-1 {
			c.VSUBPS(full(f32bits(float32(blk*L))), tv, tv)
		}
	}
	// ptrs lists the pointers a pass advances.
	ptrs := func(r, b reg.GPVirtual) []reg.GPVirtual {
		if ramp {
			return []reg.GPVirtual{r}
		}
		return []reg.GPVirtual{r, b}
	}

	// pass restarts the row pointer and count for one pass over the row.
	pass := func() (r, n reg.GPVirtual) {
		r, n = c.GP64(), c.GP64()
		c.MOVQ(rowBase, r)
		c.MOVQ(length, n)
		return
	}
	// passBias restarts them together with the bias pointer (or the ramp).
	passBias := func() (r, b, n reg.GPVirtual) {
		b = c.GP64()
		if ramp {
			rampStart()
		} else {
			c.MOVQ(biasBase, b)
		}
		r, n = pass()
		return
	}
	// value loads v = scale·row + bias for the vector at r, b.
	value := func(r, b reg.Register, u, blk int) reg.VecVirtual {
		v := g.Vec()
		biasVec(b, u, blk, v)
		c.VFMADD231PS(amd64.Mem(r, 4*L*u), scale, v)
		return v
	}

	// body emits the three passes and the return. softmaxRamp emits it twice:
	// with |t0 − j|, and for rows entirely at or before t0 (t0 ≥ len(row)−1,
	// every decode row) without the abs, the identity there.
	body := func() {
		// Pass 1: the maximum.
		var acc [amd64.Unroll]reg.VecVirtual
		for i := range acc {
			acc[i] = g.Broadcast(negInf)
		}
		r, b, n := passBias()
		g.VectorLoopBlocks(n, amd64.Unroll, ptrs(r, b), func(u, blk int) {
			v := value(r, b, u, blk)
			c.VMAXPS(v, acc[u], acc[u])
		}, func(t amd64.Tail) {
			v, w := g.Vec(), g.Vec()
			if ramp {
				biasVec(b, 0, 1, v)
			} else {
				t.Load(amd64.Mem(b, 0), v)
			}
			t.Load(amd64.Mem(r, 0), w)
			c.VFMADD231PS(w, scale, v)
			if t.K != nil {
				c.VMAXPS(v, acc[0], t.K, acc[0]) // merge-masked: other lanes keep acc
				return
			}
			ninf := g.Broadcast(negInf)
			c.VBLENDVPS(t.YMask, v, ninf, v) // lanes outside the tail become −Inf
			c.VMAXPS(v, acc[0], acc[0])
		})
		c.VMAXPS(acc[1], acc[0], acc[0])
		c.VMAXPS(acc[3], acc[2], acc[2])
		c.VMAXPS(acc[2], acc[0], acc[0])
		mx := g.horizontal(acc[0], false)
		m := g.Vec()
		c.VBROADCASTSS(mx, m)

		// Pass 2: exp(v − m), stored, summed in float64.
		e := g.newExpConsts(expRegs)
		e.noHi = true
		sum := [2]reg.VecVirtual{g.Vec(), g.Vec()}
		for _, s := range sum {
			c.VXORPD(s, s, s)
		}
		accumulate := func(v reg.VecVirtual) {
			lo, hi := g.Vec(), g.Vec()
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
		// Pass 2 works on blocks of amd64.Unroll vectors: their exps are summed in
		// float32 (a tree of depth 2: error ≤ 2 ulp of the block's sum) and
		// converted to float64 once per block, which keeps the float64 sum of
		// arbitrarily long rows while spending about one µop per vector on it.
		pass2 := func(precise bool) {
			r, b, n := passBias()
			var blockSum [2]reg.VecVirtual
			var group []reg.VecVirtual
			g.VectorLoopBlocks(n, amd64.Unroll, ptrs(r, b), func(u, blk int) {
				v := g.Vec()
				biasVec(b, u, blk, v)
				exponent(precise, v, amd64.Mem(r, 4*L*u))
				group = append(group, v)
				if len(group) < expGroup && u < blk-1 {
					return
				}
				g.expOrZero(group, e)
				u0 := u + 1 - len(group)
				for i, v := range group {
					u := u0 + i
					c.VMOVUPS(v, amd64.Mem(r, 4*L*u))
					if L == 16 || u%2 == 0 {
						// One cache line per 64 bytes, softmaxPrefetch bytes ahead:
						// score rows are consecutive in memory ([heads][lq][lk]), so
						// this brings the rows of the coming calls into cache while
						// this row's exps keep the vector units busy.
						c.PREFETCHT0(amd64.Mem(r, softmaxPrefetch+4*L*u))
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
				}
				group = group[:0]
			}, func(t amd64.Tail) {
				v, w := g.Vec(), g.Vec()
				if ramp {
					biasVec(b, 0, 1, v)
				} else {
					t.Load(amd64.Mem(b, 0), v)
				}
				t.Load(amd64.Mem(r, 0), w)
				exponent(precise, v, w)
				g.exp(v, e)
				t.Store(v, amd64.Mem(r, 0))
				t.ZeroOutside(v)
				accumulate(v)
			})
		}
		huge, summed := g.NewLabel("softmax_huge"), g.NewLabel("softmax_summed")
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
		c.VMOVSD(g.Pool.Add("f64_3ff0000000000000", []operand.Constant{operand.U64(math.Float64bits(1))}), inv)
		c.VDIVSD(total, inv, inv)  // 1/Σ in float64
		c.VCVTSD2SS(inv, inv, inv) // one rounding to float32
		f := g.Vec()
		c.VBROADCASTSS(inv, f)

		// Pass 3: scale by 1/Σ.
		r, n = pass()
		g.VectorLoop(n, amd64.Unroll, []reg.GPVirtual{r}, func(u int) {
			v := g.Vec()
			c.VMULPS(amd64.Mem(r, 4*L*u), f, v)
			c.VMOVUPS(v, amd64.Mem(r, 4*L*u))
		}, func(t amd64.Tail) {
			v := g.Vec()
			t.Load(amd64.Mem(r, 0), v)
			c.VMULPS(f, v, v)
			t.Store(v, amd64.Mem(r, 0))
		})
		c.VZEROUPPER()
		c.RET()
	}
	if !ramp {
		body()
		return
	}
	oneSided := g.NewLabel("ramp_one_sided")
	last, lastF, t0x := c.GP64(), c.XMM(), c.XMM()
	c.MOVQ(length, last)
	c.DECQ(last)
	c.CVTSQ2SS(last, lastF)
	c.Load(c.Param("t0"), t0x)
	c.UCOMISS(lastF, t0x)
	c.JAE(operand.LabelRef(oneSided)) // t0 ≥ len(row)−1
	body()
	c.Label(oneSided)
	abs = false
	body()
}

// expOrZero is g.expN(vs, e), skipped when no lane of any vector of vs is
// above the exp's lower clamp e.lo (−88 on AVX2, −104 on AVX-512): every
// such lane's exp is exactly +0 (expconst.go), so the vectors are zeroed
// instead, bit-identical to the exp. Far keys of a long ALiBi row, or keys a
// large negative bias all but masks, are whole vectors of these, and a
// softmax row skips about 20 instructions per such vector for 3. NaN lanes
// count as above the clamp (an unordered compare), so NaN still reaches the
// exp and propagates. One test serves the group (expGroup vectors), whose
// exps are then emitted interleaved.
func (g gen) expOrZero(vs []reg.VecVirtual, e expConsts) {
	c := g.Ctx
	dead, done := g.NewLabel("exp_dead"), g.NewLabel("exp_done")
	const nleUQ = 0x06 // not (v ≤ lo), true for NaN
	if g.ISA.Lanes == 16 {
		var k reg.Register
		for i, v := range vs {
			ki := c.K()
			c.VCMPPS(operand.U8(nleUQ), e.lo, v, ki)
			if i > 0 {
				c.KORW(ki, k, ki)
			}
			k = ki
		}
		c.KORTESTW(k, k)
	} else {
		var m reg.VecVirtual
		for i, v := range vs {
			mi := g.Vec()
			c.VCMPPS(operand.U8(nleUQ), e.lo, v, mi)
			if i > 0 {
				c.VORPS(mi, m, mi)
			}
			m = mi
		}
		c.VTESTPS(m, m)
	}
	c.JZ(operand.LabelRef(dead))
	g.expN(vs, e)
	c.JMP(operand.LabelRef(done))
	c.Label(dead)
	for _, v := range vs {
		c.VXORPS(v, v, v)
	}
	c.Label(done)
}

// expGroup is the number of vectors pass 2 of softmax exponentiates together
// (one skip test, interleaved exps: see expN), and expRegs the number of exp
// constants it keeps in registers on AVX2 (magic, log2e, C1). Two and three
// are what AVX2's 16 registers hold beside the loop's own (softmaxRamp has
// two more) and measured best of the combinations that fit: pairs with
// three constants in registers run the [32][512][512] ALiBi prefill about
// 6–8% faster than one vector at a time with all constants in memory,
// where neither change alone moved it (posenc bench, one process).
const (
	expGroup = 2
	expRegs  = 3
)

// horizontal reduces the lanes of v (float32 max, or float64 sum when pd)
// into lane 0 of the returned XMM register.
func (g gen) horizontal(v reg.VecVirtual, pd bool) reg.Register {
	c := g.Ctx
	op := c.VMAXPS
	if pd {
		op = c.VADDPD
	}
	y := v.AsY()
	if g.ISA.Lanes == 16 {
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
