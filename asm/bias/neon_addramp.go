package bias

import (
	"math"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// addRamp emits addRamp(dst []float32, nslope, t0 float64):
// dst[j] += float32(nslope·|t0 − j|) with the bias formed in float64, bit
// for bit the alibi wrapper's float32 table entry (t0 − j exact, the
// product rounded to float64, FCVTN rounding it to float32, nearest even).
// A vector of four float32 is two D2 halves: V17 and V18 hold t0 − j for
// keys j..j+1 and j+2..j+3, V19 and V20 their negations, so |t0 − j| is one
// FMAX; all four move by 4 per vector (V21), V17 and V19 by 1 in the
// one-lane loop (V22). V16 is nslope.
//
// General registers: R0 dst cursor, R2 length, R3 trip counter, R4 and R5
// scratch.
func addRamp(e *arm64.Emitter, name string) {
	k := abi.AddRamp
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("dst[j] += float32(nslope·|t0 − j|), the bias formed in float64; |t0|, len(dst) < 2^52.")
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "dst_base"))
	e.LoadArg(arm64.R2, e.Arg(k, "dst_len"))
	e.LoadArg(arm64.R4, e.Arg(k, "nslope"))
	e.VDUPR(arm64.VReg(16).D2(), arm64.R4)
	e.LoadArg(arm64.R4, e.Arg(k, "t0"))
	e.VDUPR(arm64.VReg(23).D2(), arm64.R4)
	// V11 = [0, 1, 2, 3] (float32), widened to V12 = [0, 1], V13 = [2, 3].
	e.VEOR(arm64.VReg(11).B16(), arm64.VReg(11).B16(), arm64.VReg(11).B16())
	for lane := 1; lane < 4; lane++ {
		e.MovBits(arm64.R5, float32(lane))
		e.VMOVFromReg(11, lane, arm64.R5)
	}
	e.FCVTL(arm64.VReg(12).D2(), arm64.VReg(11).S2())
	e.FCVTL(arm64.VReg(13).D2(), arm64.VReg(11).S4())
	d2 := func(r arm64.VReg) arm64.Vec { return r.D2() }
	e.FSUB(d2(17), d2(23), d2(12))
	e.FSUB(d2(18), d2(23), d2(13))
	e.FSUB(d2(19), d2(12), d2(23))
	e.FSUB(d2(20), d2(13), d2(23))
	e.MovImm(arm64.R5, int64(math.Float64bits(4)))
	e.VDUPR(d2(21), arm64.R5)
	e.MovImm(arm64.R5, int64(math.Float64bits(1)))
	e.VDUPR(d2(22), arm64.R5)
	e.ForEach("ramp", arm64.R2, arm64.R3, nil, func() {
		e.FMAX(d2(0), d2(17), d2(19))
		e.FMAX(d2(1), d2(18), d2(20))
		e.FMUL(d2(0), d2(0), d2(16))
		e.FMUL(d2(1), d2(1), d2(16))
		e.FCVTN(arm64.VReg(2).S2(), d2(0))
		e.FCVTN(arm64.VReg(2).S4(), d2(1))
		e.VLD1(arm64.R0, false, arm64.VReg(3).S4())
		e.FADD(arm64.VReg(3).S4(), arm64.VReg(3).S4(), arm64.VReg(2).S4())
		e.VST1(arm64.R0, true, arm64.VReg(3).S4())
		e.FSUB(d2(17), d2(17), d2(21))
		e.FSUB(d2(18), d2(18), d2(21))
		e.FADD(d2(19), d2(19), d2(21))
		e.FADD(d2(20), d2(20), d2(21))
	}, func() {
		e.FMAX(d2(0), d2(17), d2(19))
		e.FMUL(d2(0), d2(0), d2(16))
		e.FCVTN(arm64.VReg(2).S2(), d2(0))
		e.LoadS(3, arm64.R0, 0)
		e.FADDS(3, 3, 2)
		e.StoreS(3, arm64.R0, 4)
		e.FSUB(d2(17), d2(17), d2(22))
		e.FADD(d2(19), d2(19), d2(22))
	})
	e.RET()
	e.End()
}
