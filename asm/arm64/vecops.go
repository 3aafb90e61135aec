package arm64

// ---- vector instructions the Go assembler knows ----

// three emits a Go-native three-operand vector instruction d = op(n, m),
// printed in Go order "op m, n, d".
func (e *Emitter) three(op string, allowed []Arrangement, d, n, m Vec) {
	if e.inFn(op) && e.checkVec(op, allowed, d, n, m) {
		e.ins("%s %s, %s, %s", op, m, n, d)
	}
}

var (
	floatArr = []Arrangement{S4, S2}
	byteArr  = []Arrangement{B16}
)

// VFMLA emits d += n·m (fused, per lane).
func (e *Emitter) VFMLA(d, n, m Vec) { e.three("VFMLA", floatArr, d, n, m) }

// VFMLS emits d −= n·m (fused, per lane).
func (e *Emitter) VFMLS(d, n, m Vec) { e.three("VFMLS", floatArr, d, n, m) }

// VEOR emits d = n XOR m (B16).
func (e *Emitter) VEOR(d, n, m Vec) { e.three("VEOR", byteArr, d, n, m) }

// VMOV copies register n to d (B16).
func (e *Emitter) VMOV(d, n Vec) {
	if e.inFn("VMOV") && e.checkVec("VMOV", byteArr, d, n) {
		e.ins("VMOV %s, %s", n, d)
	}
}

// VSHL emits the integer lane shift left d = n << sh (0 ≤ sh < 32).
func (e *Emitter) VSHL(d, n Vec, sh int) {
	if !e.inFn("VSHL") || !e.checkVec("VSHL", floatArr, d, n) {
		return
	}
	if sh < 0 || sh > 31 {
		e.errorf("VSHL shift %d out of range 0..31", sh)
		return
	}
	e.ins("VSHL $%d, %s, %s", sh, n, d)
}

// VDUPR broadcasts the low 32 bits of r into every lane of d (S4, S2), or
// all 64 bits into both lanes of a D2 d.
func (e *Emitter) VDUPR(d Vec, r Reg) {
	if e.inFn("VDUP") && e.checkVec("VDUP", []Arrangement{S4, S2, D2}, d) && e.checkR(r) {
		e.ins("VDUP %s, %s", r, d)
	}
}

// VDUPLane broadcasts 32-bit lane of n into every lane of d.
func (e *Emitter) VDUPLane(d Vec, n VReg, lane int) {
	if !e.inFn("VDUP") || !e.checkVec("VDUP", floatArr, d) || !e.checkV(n) {
		return
	}
	if lane < 0 || lane > 3 {
		e.errorf("VDUP lane %d out of range 0..3", lane)
		return
	}
	e.ins("VDUP V%d.S[%d], %s", int(n), lane, d)
}

// VMOVToReg emits VMOV Vn.S[lane], Rd (UMOV): the bits of one 32-bit lane
// into a general register, zero-extended.
func (e *Emitter) VMOVToReg(d Reg, n VReg, lane int) {
	if !e.inFn("VMOV") || !e.checkR(d) || !e.checkV(n) {
		return
	}
	if lane < 0 || lane > 3 {
		e.errorf("VMOV lane %d out of range 0..3", lane)
		return
	}
	e.ins("VMOV V%d.S[%d], %s", int(n), lane, d)
}

// VMOVFromReg emits VMOV Rn, Vd.S[lane] (INS): the low 32 bits of a
// general register into one lane of d, the other lanes kept.
func (e *Emitter) VMOVFromReg(d VReg, lane int, n Reg) {
	if !e.inFn("VMOV") || !e.checkR(n) || !e.checkV(d) {
		return
	}
	if lane < 0 || lane > 3 {
		e.errorf("VMOV lane %d out of range 0..3", lane)
		return
	}
	e.ins("VMOV %s, V%d.S[%d]", n, int(d), lane)
}

// PRFM emits PRFM off(base), PLDL1KEEP: a hint to bring the cache line at
// base+off into L1 for a load. It never faults. The offset form takes
// multiples of 8 in 0..32760 (unsigned 12-bit immediate, scaled by 8).
func (e *Emitter) PRFM(base Reg, off int) {
	if !e.inFn("PRFM") || !e.checkR(base) {
		return
	}
	if off < 0 || off > 32760 || off%8 != 0 {
		e.errorf("PRFM offset %d not a multiple of 8 in 0..32760", off)
		return
	}
	e.ins("PRFM %d(%s), PLDL1KEEP", off, base)
}

// ---- scalar float instructions the Go assembler knows ----

func (e *Emitter) scalar3(op string, d, n, m VReg) {
	if e.inFn(op) && e.checkV(d, n, m) {
		e.ins("%s %s, %s, %s", op, m.F(), n.F(), d.F())
	}
}

// FADDS emits Fd = Fn + Fm (zeroes lanes 1..3 of d).
func (e *Emitter) FADDS(d, n, m VReg) { e.scalar3("FADDS", d, n, m) }

// FMULS emits Fd = Fn · Fm.
func (e *Emitter) FMULS(d, n, m VReg) { e.scalar3("FMULS", d, n, m) }

// FMAXS emits Fd = max(Fn, Fm) (NaN if either is NaN).
func (e *Emitter) FMAXS(d, n, m VReg) { e.scalar3("FMAXS", d, n, m) }

// FADDD emits Dd = Dn + Dm (float64).
func (e *Emitter) FADDD(d, n, m VReg) { e.scalar3("FADDD", d, n, m) }

// FDIVD emits Dd = Dn / Dm (float64).
func (e *Emitter) FDIVD(d, n, m VReg) { e.scalar3("FDIVD", d, n, m) }

// FCMPS emits FCMPS Fm, Fn: compares the float32 in lane 0 of n with that
// of m, setting the flags (V set when unordered: either is a NaN).
func (e *Emitter) FCMPS(n, m VReg) {
	if e.inFn("FCMPS") && e.checkV(n, m) {
		e.ins("FCMPS %s, %s", m.F(), n.F())
	}
}

// FCVTSD emits FCVTSD Fn, Fd: the float32 in lane 0 of n widened to the
// float64 in the low 64 bits of d (the upper 64 bits of d are zeroed).
func (e *Emitter) FCVTSD(d, n VReg) {
	if e.inFn("FCVTSD") && e.checkV(d, n) {
		e.ins("FCVTSD %s, %s", n.F(), d.F())
	}
}

// FCVTDS emits FCVTDS Fn, Fd: the float64 in n rounded to the float32 in
// lane 0 of d.
func (e *Emitter) FCVTDS(d, n VReg) {
	if e.inFn("FCVTDS") && e.checkV(d, n) {
		e.ins("FCVTDS %s, %s", n.F(), d.F())
	}
}

// FMOVDOne emits FMOVD $1.0, Fd (float64 1 in the low 64 bits).
func (e *Emitter) FMOVDOne(d VReg) {
	if e.inFn("FMOVD") && e.checkV(d) {
		e.ins("FMOVD $1.0, %s", d.F())
	}
}

// ---- vector instructions encoded as WORDs ----

// word emits a WORD produced by enc with the Go-syntax mnemonic as comment.
func (e *Emitter) word(w Word, err error) {
	if !e.inFn("WORD") {
		return
	}
	if err != nil {
		e.errorf("%v", err)
		return
	}
	e.ins("WORD $0x%08x // %s", w.Bits, w.Text)
}

// FADD emits d = n + m (float lanes).
func (e *Emitter) FADD(d, n, m Vec) { e.word(Encode3(OpFADD, d, n, m)) }

// FSUB emits d = n − m.
func (e *Emitter) FSUB(d, n, m Vec) { e.word(Encode3(OpFSUB, d, n, m)) }

// FMUL emits d = n · m.
func (e *Emitter) FMUL(d, n, m Vec) { e.word(Encode3(OpFMUL, d, n, m)) }

// FMAX emits d = max(n, m), NaN-propagating.
func (e *Emitter) FMAX(d, n, m Vec) { e.word(Encode3(OpFMAX, d, n, m)) }

// FMIN emits d = min(n, m), NaN-propagating.
func (e *Emitter) FMIN(d, n, m Vec) { e.word(Encode3(OpFMIN, d, n, m)) }

// FADDP emits the pairwise add d = [n0+n1, n2+n3, m0+m1, m2+m3].
func (e *Emitter) FADDP(d, n, m Vec) { e.word(Encode3(OpFADDP, d, n, m)) }

// FMAXP emits the pairwise maximum.
func (e *Emitter) FMAXP(d, n, m Vec) { e.word(Encode3(OpFMAXP, d, n, m)) }

// FCVTL emits the widening conversion of a float32 half of n to the two
// float64 lanes of d (D2): the low half when n is S2 (FCVTL), the high half
// when n is S4 (FCVTL2).
func (e *Emitter) FCVTL(d, n Vec) { e.word(EncodeFCVTL(d, n)) }

// FCVTN emits the narrowing conversion of the two float64 lanes of n (D2)
// to float32: into the low half of d when d is S2 (FCVTN, the high half
// zeroed), into the high half when d is S4 (FCVTN2, the low half kept).
func (e *Emitter) FCVTN(d, n Vec) { e.word(EncodeFCVTN(d, n)) }

// ---- 16-bit storage: widening and narrowing ----

// FCVTLH emits FCVTL Vd.4S, Vn.4H: the four binary16 values in the low half
// of n widened (exactly) to the float32 lanes of d.
func (e *Emitter) FCVTLH(d, n VReg) { e.word(EncodeFCVTL(d.S4(), n.H4())) }

// FCVTNH emits FCVTN Vd.4H, Vn.4S: the float32 lanes of n rounded to
// binary16 (to nearest even under Go's FPCR) in the low half of d, the high
// half zeroed.
func (e *Emitter) FCVTNH(d, n VReg) { e.word(EncodeFCVTN(d.H4(), n.S4())) }

// Widen16 turns the four 16-bit elements in the low half of v, encodings
// of storage ("f16": IEEE binary16, FCVTL; "bf16": bfloat16, SHLL #16,
// a bfloat16 being the upper half of a float32), into its float32 lanes,
// exactly.
func (e *Emitter) Widen16(storage string, v VReg) {
	if storage == "f16" {
		e.FCVTLH(v, v)
	} else {
		e.SHLL16(v, v)
	}
}

// SHLL16 emits SHLL Vd.4S, Vn.4H, #16: the four 16-bit lanes in the low
// half of n moved to the upper halves of the 32-bit lanes of d (bfloat16 to
// float32), the lower halves zero.
func (e *Emitter) SHLL16(d, n VReg) { e.word(EncodeSHLL16(d.S4(), n.H4())) }

// CMGEZero emits CMGE Vd.4S, Vn.4S, #0: all ones in the lanes whose signed
// integer in n is ≥ 0.
func (e *Emitter) CMGEZero(d, n VReg) { e.word(EncodeCMGEZero(d.S4(), n.S4())) }

// RADDHN emits RADDHN Vd.4H, Vn.4S, Vm.4S: per lane the high 16 bits of
// n + m + 2^15 into the low half of d, the high half zeroed.
func (e *Emitter) RADDHN(d, n, m VReg) { e.word(EncodeRADDHN(d.H4(), n.S4(), m.S4())) }

// ---- permutes the Go assembler knows ----

// VUZP1 emits d = the even-numbered lanes of n then of m (S4 or S2).
func (e *Emitter) VUZP1(d, n, m Vec) { e.three("VUZP1", floatArr, d, n, m) }

// VUZP2 emits d = the odd-numbered lanes of n then of m (S4 or S2).
func (e *Emitter) VUZP2(d, n, m Vec) { e.three("VUZP2", floatArr, d, n, m) }

// VZIP1 emits d = n0, m0, n1, m1 (S4; S2: n0, m0): the low halves of n and
// m interleaved.
func (e *Emitter) VZIP1(d, n, m Vec) { e.three("VZIP1", floatArr, d, n, m) }
