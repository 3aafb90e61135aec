package bias

import (
	"math"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// softmaxRow emits softmaxRow(row, bias []float32, scale float32):
// row[j] = softmax_j(scale·row[j] + bias[j]) in three passes: the max; exp,
// store and sum; a multiply by 1/Σ. The sum is kept in float64: blocks of
// four vectors (16 exps) are summed in float32 (a tree of depth 2: error
// ≤ 2 ulp of the block's sum) and widened to float64 once per block; 1/Σ is
// computed in float64 and rounded once to float32.
//
// General registers: R0 row cursor, R1 bias cursor, R2 length, R3 trip
// counter, R8 row base, R10 bias base. Vector registers in pass 2: V0..V3
// exponents (x), V4..V7 row loads and results (t), V8..V15 Horner (p, q),
// V16 scale (then 1/Σ), V17 and V18 float64 sums, V19 max, V20..V31 the
// expf constants.
func softmaxRow(e *arm64.Emitter, name string) { softmax(e, name, false) }

// expOrZero is expVecs on the four S4 vectors x (results in t), skipped
// when no lane of them is above the exp's lower clamp vLo (−88): every such
// lane's exp is exactly +0 (n + 127 = 0 makes the scale 2^n zero), so t is
// zeroed instead, bit-identical to the exp, as the AVX kernels' expOrZero
// does per vector. Far keys of a long ALiBi row, or keys a large negative
// bias all but masks, are whole blocks of these, and such a block costs about 18
// instructions instead of 80. The test: the NaN-propagating maximum of the
// 16 lanes (FMAX, FMAXP), moved to R9, is dead when its bits lie in
// [bits(vLo), bits(−Inf)] (negative floats order by magnitude), decided by
// the sign of two subtractions in R11; a NaN lane (0x7fc…, or a negative NaN
// above −Inf's bits) keeps the exp, so NaN still propagates. p[0] and p[1]
// are scratch before expVecs overwrites them.
func expOrZero(e *arm64.Emitter, x, t, p, q []arm64.VReg) {
	dead, done, live := e.NewLabel("exp_dead"), e.NewLabel("exp_done"), e.NewLabel("exp_live")
	m0, m1 := p[0].S4(), p[1].S4()
	e.FMAX(m0, x[0].S4(), x[1].S4())
	e.FMAX(m1, x[2].S4(), x[3].S4())
	e.FMAX(m0, m0, m1)
	e.FMAXP(m0, m0, m0)
	e.FMAXP(m0, m0, m0)
	e.VMOVToReg(arm64.R9, p[0], 0)
	lo := uint64(math.Float32bits(expClamp[4][0]))
	e.MovImm(arm64.R11, int64(lo))
	e.Sub(arm64.R9, arm64.R9, arm64.R11)
	e.TBNZ(63, arm64.R9, live) // bits below vLo's: above the clamp, or a positive NaN
	e.MovImm(arm64.R11, int64(uint64(math.Float32bits(float32(math.Inf(-1))))-lo+1))
	e.Sub(arm64.R9, arm64.R9, arm64.R11)
	e.TBNZ(63, arm64.R9, dead) // bits in [vLo, −Inf]: at or below the clamp
	e.Label(live)
	expVecs(e, arm64.S4, x, t, p, q)
	e.B(done)
	e.Label(dead)
	for _, r := range t {
		e.VEOR(r.B16(), r.B16(), r.B16())
	}
	e.Label(done)
}

// softmaxRamp emits softmaxRamp(row []float32, scale, nslope, t0 float32):
// softmaxRow with the ALiBi bias (Press et al. 2022) computed in registers,
// bias[j] = nslope·|t0 − j|. V18 holds t0 − j for the lanes of the current
// vector as float32 integers (exact below 2^24), decreased by 4 per vector
// (by 1 in the one-lane loop); |x| is max(x, 0 − x). Pass 2 sums into V17
// alone, which frees V18; the step and nslope are broadcast from R4 and R5
// into V8 and V9 and V10 is zeroed at the top of every loop body, before the Horner
// registers are needed.
func softmaxRamp(e *arm64.Emitter, name string) { softmax(e, name, true) }

// softmax emits softmaxRow (ramp false) or softmaxRamp (ramp true).
func softmax(e *arm64.Emitter, name string, ramp bool) {
	k := abi.SoftmaxRow
	if ramp {
		k = abi.SoftmaxRamp
	}
	e.Comment("func %s%s", name, k.Signature())
	if ramp {
		e.Comment("row[j] = softmax_j(scale·row[j] + nslope·|t0 − j|); len(row) ≥ 1, t0 and len(row) < 2^24.")
	} else {
		e.Comment("row[j] = softmax_j(scale·row[j] + bias[j]); len(bias) == len(row) ≥ 1.")
	}
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "row_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "row_len"))
	if ramp {
		e.LoadArgW(arm64.R5, e.Arg(k, "nslope"))
	} else {
		e.LoadArg(arm64.R1, e.Arg(k, "bias_base"))
	}
	e.LoadArgS(30, e.Arg(k, "scale"))
	// rampStart sets V18 to t0 − lane (lanes 0..3) for a new pass.
	rampStart := func() {
		if !ramp {
			return
		}
		e.VEOR(arm64.VReg(11).B16(), arm64.VReg(11).B16(), arm64.VReg(11).B16())
		for lane := 1; lane < 4; lane++ {
			e.MovBits(arm64.R9, float32(lane))
			e.VMOVFromReg(11, lane, arm64.R9)
		}
		e.LoadArgS(18, e.Arg(k, "t0"))
		e.VDUPLane(arm64.VReg(18).S4(), 18, 0)
		e.FSUB(arm64.VReg(18).S4(), arm64.VReg(18).S4(), arm64.VReg(11).S4())
	}
	// rampConsts broadcasts the step (4 lanes, or 1 in the one-lane loop),
	// nslope and zero into V8, V9, V10.
	rampConsts := func(step float32) {
		e.MovBits(arm64.R4, step)
		e.VDUPR(arm64.VReg(8).S4(), arm64.R4)
		e.VDUPR(arm64.VReg(9).S4(), arm64.R5)
		e.VEOR(arm64.VReg(10).B16(), arm64.VReg(10).B16(), arm64.VReg(10).B16())
	}
	// rampBias writes nslope·|t0 − j| of the next vector into b (V11 is
	// scratch) and advances V18.
	rampBias := func(a arm64.Arrangement, b arm64.VReg) {
		tv, t := arm64.VReg(18).As(a), arm64.VReg(11).As(a)
		e.FSUB(t, arm64.VReg(10).As(a), tv)
		e.FMAX(b.As(a), tv, t)
		e.FMUL(b.As(a), b.As(a), arm64.VReg(9).As(a))
		e.FSUB(tv, tv, arm64.VReg(8).As(a))
	}
	e.Mov(arm64.R8, arm64.R0)
	e.VDUPLane(arm64.VReg(30).S4(), 30, 0)
	e.MovBits(arm64.R9, float32(math.Inf(-1)))
	for v := arm64.VReg(24); v <= 28; v++ {
		e.VDUPR(v.S4(), arm64.R9)
	}
	if !ramp {
		e.Mov(arm64.R10, arm64.R1)
	}
	rampStart()
	e.Comment("Pass 1: the max of v[j] = bias[j] + row[j]·scale in V24..V27, F28; row is not written.")
	e.ForEach("max", arm64.R2, arm64.R3, func() {
		x, b := arm64.Vecs(0, 4, 1, arm64.S4), arm64.Vecs(4, 4, 1, arm64.S4)
		e.VLD1(arm64.R0, true, x...)
		if ramp {
			rampConsts(4)
			for i := range b {
				rampBias(arm64.S4, b[i].R)
			}
		} else {
			e.VLD1(arm64.R1, true, b...)
		}
		for i := range b {
			e.VFMLA(b[i], x[i], arm64.VReg(30).S4())
		}
		for i := range b {
			m := arm64.VReg(24 + i).S4()
			e.FMAX(m, m, b[i])
		}
	}, func() {
		e.VLD1(arm64.R0, true, arm64.VReg(0).S4())
		if ramp {
			rampConsts(4)
			rampBias(arm64.S4, 4)
		} else {
			e.VLD1(arm64.R1, true, arm64.VReg(4).S4())
		}
		e.VFMLA(arm64.VReg(4).S4(), arm64.VReg(0).S4(), arm64.VReg(30).S4())
		e.FMAX(arm64.VReg(24).S4(), arm64.VReg(24).S4(), arm64.VReg(4).S4())
	}, func() {
		e.LoadS(0, arm64.R0, 4)
		if ramp {
			rampConsts(1)
			rampBias(arm64.S2, 4)
		} else {
			e.LoadS(4, arm64.R1, 4)
		}
		e.VFMLA(arm64.VReg(4).S2(), arm64.VReg(0).S2(), arm64.VReg(30).S2())
		e.FMAXS(28, 28, 4)
	})
	e.FMAX(arm64.VReg(24).S4(), arm64.VReg(24).S4(), arm64.VReg(25).S4())
	e.FMAX(arm64.VReg(26).S4(), arm64.VReg(26).S4(), arm64.VReg(27).S4())
	e.FMAX(arm64.VReg(24).S4(), arm64.VReg(24).S4(), arm64.VReg(26).S4())
	e.FMAXP(arm64.VReg(24).S4(), arm64.VReg(24).S4(), arm64.VReg(24).S4())
	e.FMAXP(arm64.VReg(24).S4(), arm64.VReg(24).S4(), arm64.VReg(24).S4())
	e.FMAXS(19, 24, 28)
	e.VDUPLane(arm64.VReg(19).S4(), 19, 0)

	e.Comment("Pass 2: row[j] = e^(exponent), summed in float64 (V17, V18: two lanes each). While")
	e.Comment("|max| < 2^24 the exponent is (bias[j] − max) + row[j]·scale: bias[j] − max is exact for")
	e.Comment("the biases that matter (Sterbenz: within a factor 2 of max) and the fused multiply-add")
	e.Comment("rounds once, so a large bias shared by competing keys costs no precision; max's own")
	e.Comment("rounding, ≤ ulp(max)/2, is a constant shift softmax cancels. Beyond 2^24 that shift")
	e.Comment("could reach e^x's range, so the exponent is fl(bias[j] + row[j]·scale) − max, exactly 0")
	e.Comment("for the maximum. Blocks of 16 exps are summed in float32, then widened to float64.")
	e.VMOV(arm64.VReg(16).B16(), arm64.VReg(30).B16()) // scale: V30 becomes an exp constant
	loadExpConsts(e)
	e.VEOR(arm64.VReg(17).B16(), arm64.VReg(17).B16(), arm64.VReg(17).B16())
	e.VEOR(arm64.VReg(18).B16(), arm64.VReg(18).B16(), arm64.VReg(18).B16())
	// exponent turns the bias loaded in x[i] and the row loaded in t[i] into
	// the exponent in x[i].
	exponent := func(precise bool, a arm64.Arrangement, x, t []arm64.VReg) {
		scale, mx := arm64.VReg(16).As(a), arm64.VReg(19).As(a)
		if precise {
			for i := range x {
				e.FSUB(x[i].As(a), x[i].As(a), mx)
			}
		}
		for i := range x {
			e.VFMLA(x[i].As(a), t[i].As(a), scale)
		}
		if !precise {
			for i := range x {
				e.FSUB(x[i].As(a), x[i].As(a), mx)
			}
		}
	}
	regs := func(n int) (x, t, p, q []arm64.VReg) {
		for i := 0; i < n; i++ {
			x, t = append(x, arm64.VReg(i)), append(t, arm64.VReg(4+i))
			p, q = append(p, arm64.VReg(8+i)), append(q, arm64.VReg(12+i))
		}
		return
	}
	sum0, sum1 := arm64.VReg(17).D2(), arm64.VReg(18).D2()
	// addSums adds the float64 pairs in V1 and V2 to the sums: V17 and V18,
	// or V17 alone for the ramp (V18 is its running t0 − j).
	addSums := func() {
		if ramp {
			e.FADD(arm64.VReg(1).D2(), arm64.VReg(1).D2(), arm64.VReg(2).D2())
			e.FADD(sum0, sum0, arm64.VReg(1).D2())
			return
		}
		e.FADD(sum0, sum0, arm64.VReg(1).D2())
		e.FADD(sum1, sum1, arm64.VReg(2).D2())
	}
	pass2 := func(precise bool, hint string) {
		e.Mov(arm64.R0, arm64.R8)
		if ramp {
			rampStart()
		} else {
			e.Mov(arm64.R1, arm64.R10)
		}
		e.ForEach(hint, arm64.R2, arm64.R3, func() {
			x, t, p, q := regs(4)
			xs, ts := arm64.Vecs(0, 4, 1, arm64.S4), arm64.Vecs(4, 4, 1, arm64.S4)
			if ramp {
				rampConsts(4)
				for i := range x {
					rampBias(arm64.S4, x[i])
				}
			} else {
				e.VLD1(arm64.R1, true, xs...)
			}
			e.VLD1(arm64.R0, false, ts...)
			// One cache line (64 bytes) per iteration, softmaxPrefetch
			// bytes ahead: score rows are consecutive in memory
			// ([heads][lq][lk]), so this brings the rows of the coming
			// calls into cache while this row's exps keep the vector
			// units busy.
			e.PRFM(arm64.R0, softmaxPrefetch)
			exponent(precise, arm64.S4, x, t)
			expOrZero(e, x, t, p, q)
			e.VST1(arm64.R0, true, ts...)
			e.FADD(arm64.VReg(0).S4(), arm64.VReg(4).S4(), arm64.VReg(5).S4())
			e.FADD(arm64.VReg(2).S4(), arm64.VReg(6).S4(), arm64.VReg(7).S4())
			e.FADD(arm64.VReg(0).S4(), arm64.VReg(0).S4(), arm64.VReg(2).S4())
			e.FCVTL(arm64.VReg(1).D2(), arm64.VReg(0).S2())
			e.FCVTL(arm64.VReg(2).D2(), arm64.VReg(0).S4())
			addSums()
		}, func() {
			x, t, p, q := regs(1)
			if ramp {
				rampConsts(4)
				rampBias(arm64.S4, 0)
			} else {
				e.VLD1(arm64.R1, true, arm64.VReg(0).S4())
			}
			e.VLD1(arm64.R0, false, arm64.VReg(4).S4())
			exponent(precise, arm64.S4, x, t)
			expVecs(e, arm64.S4, x, t, p, q)
			e.VST1(arm64.R0, true, arm64.VReg(4).S4())
			e.FCVTL(arm64.VReg(1).D2(), arm64.VReg(4).S2())
			e.FCVTL(arm64.VReg(2).D2(), arm64.VReg(4).S4())
			addSums()
		}, func() {
			x, t, p, q := regs(1)
			if ramp {
				rampConsts(1)
				rampBias(arm64.S2, 0)
			} else {
				e.LoadS(0, arm64.R1, 4)
			}
			e.LoadS(4, arm64.R0, 0)
			exponent(precise, arm64.S2, x, t)
			expVecs(e, arm64.S2, x, t, p, q)
			e.StoreS(4, arm64.R0, 4)
			e.FCVTSD(1, 4) // zeroes the upper lane of V1.D2
			e.FADD(sum0, sum0, arm64.VReg(1).D2())
		})
	}
	precise, summed := e.NewLabel("precise"), e.NewLabel("summed")
	e.VMOVToReg(arm64.R9, arm64.VReg(19), 0)
	e.AndImm(arm64.R9, arm64.R9, 0x7fffffff)
	e.LsrImm(arm64.R9, arm64.R9, 23)
	e.SubsImm(arm64.R9, arm64.R9, 127+24)
	e.TBNZ(63, arm64.R9, precise) // biased exponent of |max| below 151: |max| < 2^24
	pass2(false, "exphuge")
	e.B(summed)
	e.Label(precise)
	pass2(true, "exp")
	e.Label(summed)
	if !ramp {
		e.FADD(sum0, sum0, sum1)
	}
	e.FADDP(sum0, sum0, sum0) // lane 0: the total
	e.FMOVDOne(16)
	e.FDIVD(16, 16, 17)
	e.FCVTDS(16, 16) // 1/Σ rounded once to float32
	e.VDUPLane(arm64.VReg(16).S4(), 16, 0)

	e.Comment("Pass 3: row[j] ·= 1/sum.")
	e.Mov(arm64.R0, arm64.R8)
	e.ForEach("scale", arm64.R2, arm64.R3, func() {
		x := arm64.Vecs(0, 4, 1, arm64.S4)
		e.VLD1(arm64.R0, false, x...)
		for i := range x {
			e.FMUL(x[i], x[i], arm64.VReg(16).S4())
		}
		e.VST1(arm64.R0, true, x...)
	}, func() {
		e.VLD1(arm64.R0, false, arm64.VReg(0).S4())
		e.FMUL(arm64.VReg(0).S4(), arm64.VReg(0).S4(), arm64.VReg(16).S4())
		e.VST1(arm64.R0, true, arm64.VReg(0).S4())
	}, func() {
		e.LoadS(0, arm64.R0, 0)
		e.FMULS(0, 0, 16)
		e.StoreS(0, arm64.R0, 4)
	})
	e.RET()
	e.End()
}
