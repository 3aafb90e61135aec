package rope

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// The scaleRows kernel over 16-bit storage on NEON (abi.ScaleRows16, Llama
// 4's ScaleQ of a spec with dtype f16 or bf16): per value the widening of
// the 16-bit rotate kernel (neon16.go: FCVTL for f16, SHLL #16 for bf16),
// one FMUL by the token's factor (the correctly rounded float32 product of
// the generic kernel) and the narrowing to nearest even (FCVTN for f16,
// VSHL #15, CMGE #0, RADDHN for bf16), so each result equals the generic
// kernel's narrow(widen(x)·s) bit for bit.
//
// NaNs: FMUL takes the widened value as its first operand, so a NaN value
// propagates (quieted) as in the generic kernel; for f16 FCVTN keeps the
// sign and top payload bits and sets the quiet bit, as the generic narrow.
// The bf16 narrowing adds rounding bits and is exact for a NaN only when
// its low 16 bits are zero (neon16.go), which holds for a widened bf16 and
// the default NaN but not for a factor that is a NaN with a payload in its
// low half (the generic narrow truncates such a NaN, the addition could
// round it into another NaN, or past 0x7FFFFFFF into −0). So the bf16
// kernel replaces a NaN factor by itself quieted with its low 16 bits
// cleared, once per token: the products then narrow to the generic
// kernel's (bits>>16)|0x40.
//
// Per token the row is walked by arm64.ForEach: blocks of 16 values (four
// H4 registers), then of 4, then single values (VLD1/VST1 of lane H[0]);
// nothing outside the row is read or written.

// scaleRows16NEON emits scaleRows(x []uint16, scales []float32, rowLen int)
// for storage "f16" or "bf16". R0 row start, R1 scales cursor, R2 rowLen,
// R3 trip counter, R4 tokens left, R5 element cursor, R6 row bytes, R7 the
// factor's bits (bf16 NaN factor); V31 holds the token's factor in every
// lane, V0..V3 the values, V4..V7 the bf16 narrowing's temporaries.
func scaleRows16NEON(e *arm64.Emitter, name, storage string) {
	k := abi.ScaleRows16
	g := &ropeGen{e: e, storage: storage} // widen and narrow of neon16.go
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("x[t·rowLen+j] = narrow(widen(x[t·rowLen+j])·scales[t]) over %s, round to nearest even.", storage)
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "x_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "scales_base"))
	e.LoadArg(arm64.R4, e.Arg(k, "scales_len"))
	e.LoadArg(arm64.R2, e.Arg(k, "rowLen"))
	done := e.NewLabel("scale16_done")
	e.CBZ(arm64.R4, done)
	e.CBZ(arm64.R2, done)
	e.LslImm(arm64.R6, arm64.R2, 1)
	loop := e.NewLabel("scale16_token")
	e.Label(loop)
	e.LoadS(31, arm64.R1, 4)
	if storage == "bf16" {
		ordered := e.NewLabel("scale16_factor")
		e.Comment("a NaN factor: quiet, low 16 bits cleared (the bf16 narrowing is exact on it)")
		e.FCMPS(31, 31)
		e.BVC(ordered)
		e.VMOVToReg(arm64.R7, 31, 0)
		e.AndImmW(arm64.R7, arm64.R7, 0xffff0000)
		e.OrrImmW(arm64.R7, arm64.R7, 0x00400000)
		e.VMOVFromReg(31, 0, arm64.R7)
		e.Label(ordered)
	}
	f := arm64.Vec{R: 31, A: arm64.S4}
	e.VDUPLane(f, 31, 0)
	e.Mov(arm64.R5, arm64.R0)
	// scale widens, multiplies and narrows V0..V(nv−1).
	scale := func(nv int) {
		for i := range nv {
			g.widen(arm64.VReg(i))
		}
		for i := range nv {
			v := arm64.VReg(i).S4()
			e.FMUL(v, v, f)
		}
		for i := range nv {
			g.narrow(arm64.VReg(i), arm64.VReg(4+i))
		}
	}
	vec := func(nv int) {
		d := h4(arm64.Vecs(0, nv, 1, arm64.S4))
		e.VLD1(arm64.R5, false, d...)
		scale(nv)
		e.VST1(arm64.R5, true, d...)
	}
	e.ForEach("scale16", arm64.R2, arm64.R3, func() { vec(4) }, func() { vec(1) }, func() {
		e.LoadH(0, arm64.R5, 0)
		scale(1)
		e.StoreH(0, arm64.R5, 2)
	})
	e.Add(arm64.R0, arm64.R0, arm64.R6)
	e.SubsImm(arm64.R4, arm64.R4, 1)
	e.BNE(loop)
	e.Label(done)
	e.RET()
	e.End()
}
