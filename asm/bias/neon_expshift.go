package bias

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/asm/attention"
)

// AttentionNEON are the arm64 kernels of the attention form for HeadDim d,
// which the rope and bias programs add: scoresKV and valuesKV
// (asm/attention) and expShift, which lives here because it is
// softmaxRow's expf.
func AttentionNEON(d int) []arm64.Kernel {
	name := arm64.Symbol(abi.ExpShift)
	return append(attention.NEON(d), arm64.Kernel{ABI: abi.ExpShift, Name: name,
		Doc:  "is the NEON kernels.expShift: row[j] = e^(row[j] − m) with softmaxRow's expf, sum[0] = Σ row[j].",
		Emit: func(e *arm64.Emitter) { expShiftNEON(e, name) }})
}

// expShiftNEON emits expShift(row []float32, m float32, sum []float32):
// row[j] = e^(row[j] − m), the exponent one FSUB and the exp softmaxRow's
// (expVecs, so e^−∞ = +0 exactly; expOrZero skips blocks at or below the
// clamp, bit for bit), and sum[0] = the sum of the results, in float32:
// blocks of four vectors and single vectors add into V17's lanes, single
// floats into lane 0 of V18, and the lanes of V17 are added (FADDP twice)
// before V18.
//
// Registers: R0 row cursor, R1 sum, R2 length, R3 trip counter, R9 and R11
// scratch (constants, the exp skip); V0–V3 exponents, V4–V7 results,
// V8–V15 Horner, V16 m, V17 and V18 the sums, V20–V31 the expf constants.
func expShiftNEON(e *arm64.Emitter, name string) {
	k := abi.ExpShift
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("row[j] = e^(row[j] − m) for j < len(row), sum[0] = Σ_j row[j]; len(sum) ≥ 1.")
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "row_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "row_len"))
	e.LoadArg(arm64.R1, e.Arg(k, "sum_base"))
	e.LoadArgS(16, e.Arg(k, "m"))
	e.VDUPLane(arm64.VReg(16).S4(), 16, 0)
	loadExpConsts(e)
	sum, one := arm64.VReg(17), arm64.VReg(18)
	e.VEOR(sum.B16(), sum.B16(), sum.B16())
	e.VEOR(one.B16(), one.B16(), one.B16())
	m := arm64.VReg(16)
	regs := func(n int) (x, t, p, q []arm64.VReg) {
		for i := 0; i < n; i++ {
			x, t = append(x, arm64.VReg(i)), append(t, arm64.VReg(4+i))
			p, q = append(p, arm64.VReg(8+i)), append(q, arm64.VReg(12+i))
		}
		return
	}
	e.ForEach("expshift", arm64.R2, arm64.R3, func() {
		x, t, p, q := regs(4)
		e.VLD1(arm64.R0, false, arm64.Vecs(0, 4, 1, arm64.S4)...)
		for _, r := range x {
			e.FSUB(r.S4(), r.S4(), m.S4())
		}
		expOrZero(e, x, t, p, q)
		e.VST1(arm64.R0, true, arm64.Vecs(4, 4, 1, arm64.S4)...)
		e.FADD(arm64.VReg(0).S4(), arm64.VReg(4).S4(), arm64.VReg(5).S4())
		e.FADD(arm64.VReg(2).S4(), arm64.VReg(6).S4(), arm64.VReg(7).S4())
		e.FADD(arm64.VReg(0).S4(), arm64.VReg(0).S4(), arm64.VReg(2).S4())
		e.FADD(sum.S4(), sum.S4(), arm64.VReg(0).S4())
	}, func() {
		x, t, p, q := regs(1)
		e.VLD1(arm64.R0, false, arm64.VReg(0).S4())
		e.FSUB(arm64.VReg(0).S4(), arm64.VReg(0).S4(), m.S4())
		expVecs(e, arm64.S4, x, t, p, q)
		e.VST1(arm64.R0, true, arm64.VReg(4).S4())
		e.FADD(sum.S4(), sum.S4(), arm64.VReg(4).S4())
	}, func() {
		// Lane 0 only: lane 1 of the S2 exp holds e^(0 − m), never stored
		// nor added (FADDS reads lane 0).
		x, t, p, q := regs(1)
		e.LoadS(0, arm64.R0, 0)
		e.FSUB(arm64.VReg(0).S2(), arm64.VReg(0).S2(), m.S2())
		expVecs(e, arm64.S2, x, t, p, q)
		e.StoreS(4, arm64.R0, 4)
		e.FADDS(one, one, 4)
	})
	e.FADDP(sum.S4(), sum.S4(), sum.S4())
	e.FADDP(sum.S4(), sum.S4(), sum.S4())
	e.FADDS(sum, sum, one)
	e.StoreS(sum, arm64.R1, 0)
	e.RET()
	e.End()
}
