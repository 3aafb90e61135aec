package arm64

import (
	"math"
	"math/bits"
)

// ---- general-purpose instructions ----

// LoadArg emits MOVD arg, dst (a 64-bit argument slot).
func (e *Emitter) LoadArg(dst Reg, a Arg) {
	if e.inFn("MOVD") && e.checkR(dst) {
		e.ins("MOVD %s, %s", a, dst)
	}
}

// LoadArgW emits MOVWU arg, dst (a 32-bit slot, zero-extended).
func (e *Emitter) LoadArgW(dst Reg, a Arg) {
	if e.inFn("MOVWU") && e.checkR(dst) {
		e.ins("MOVWU %s, %s", a, dst)
	}
}

// LoadArgS emits FMOVS arg, Fd (a float32 slot into lane 0 of dst).
func (e *Emitter) LoadArgS(dst VReg, a Arg) {
	if e.inFn("FMOVS") && e.checkV(dst) {
		e.ins("FMOVS %s, %s", a, dst.F())
	}
}

// MovImm emits MOVD $v, dst.
func (e *Emitter) MovImm(dst Reg, v int64) {
	if e.inFn("MOVD") && e.checkR(dst) {
		e.ins("MOVD $%d, %s", v, dst)
	}
}

// MovBits emits MOVD $bits(f), dst with the float value as a comment.
func (e *Emitter) MovBits(dst Reg, f float32) {
	if e.inFn("MOVD") && e.checkR(dst) {
		e.ins("MOVD $0x%08x, %s // float32 %g", math.Float32bits(f), dst, f)
	}
}

// Mov emits MOVD src, dst.
func (e *Emitter) Mov(dst, src Reg) {
	if e.inFn("MOVD") && e.checkR(dst, src) {
		e.ins("MOVD %s, %s", src, dst)
	}
}

// AddImm emits ADD $v, src, dst (dst = src + v), 0 ≤ v < 2^24.
func (e *Emitter) AddImm(dst, src Reg, v int) {
	if !e.inFn("ADD") || !e.checkR(dst, src) {
		return
	}
	if v < 0 || v >= 1<<24 {
		e.errorf("ADD immediate %d out of range 0..2^24-1", v)
		return
	}
	e.ins("ADD $%d, %s, %s", v, src, dst)
}

// Add emits ADD m, n, dst (dst = n + m).
func (e *Emitter) Add(dst, n, m Reg) {
	if e.inFn("ADD") && e.checkR(dst, n, m) {
		e.ins("ADD %s, %s, %s", m, n, dst)
	}
}

// Sub emits SUB m, n, dst (dst = n − m).
func (e *Emitter) Sub(dst, n, m Reg) {
	if e.inFn("SUB") && e.checkR(dst, n, m) {
		e.ins("SUB %s, %s, %s", m, n, dst)
	}
}

// Mul emits MUL m, n, dst (dst = n·m).
func (e *Emitter) Mul(dst, n, m Reg) {
	if e.inFn("MUL") && e.checkR(dst, n, m) {
		e.ins("MUL %s, %s, %s", m, n, dst)
	}
}

// LsrImm emits LSR $sh, src, dst (logical shift right, 0 < sh < 64).
func (e *Emitter) LsrImm(dst, src Reg, sh int) {
	if !e.inFn("LSR") || !e.checkR(dst, src) {
		return
	}
	if sh <= 0 || sh >= 64 {
		e.errorf("LSR shift %d out of range 1..63", sh)
		return
	}
	e.ins("LSR $%d, %s, %s", sh, src, dst)
}

// LslImm emits LSL $sh, src, dst (shift left, 0 < sh < 64).
func (e *Emitter) LslImm(dst, src Reg, sh int) {
	if !e.inFn("LSL") || !e.checkR(dst, src) {
		return
	}
	if sh <= 0 || sh >= 64 {
		e.errorf("LSL shift %d out of range 1..63", sh)
		return
	}
	e.ins("LSL $%d, %s, %s", sh, src, dst)
}

// AndImm emits AND $mask, src, dst where mask is 2^k−1, 1 ≤ k ≤ 32.
func (e *Emitter) AndImm(dst, src Reg, mask uint64) {
	if !e.inFn("AND") || !e.checkR(dst, src) {
		return
	}
	if mask == 0 || mask&(mask+1) != 0 || mask > math.MaxUint32 {
		e.errorf("AND mask %#x is not a low-bit mask", mask)
		return
	}
	e.ins("AND $%d, %s, %s", mask, src, dst)
}

// AndImmW emits ANDW $mask, src, dst (32-bit; the upper half of dst is
// zeroed). mask must be a 32-bit logical immediate: one run of ones,
// possibly wrapping around (the element size 32 of the A64 bitmask
// immediates; the smaller replicated sizes are not accepted).
func (e *Emitter) AndImmW(dst, src Reg, mask uint32) { e.logicW("ANDW", dst, src, mask) }

// OrrImmW emits ORRW $set, src, dst (32-bit), set a logical immediate as
// for AndImmW.
func (e *Emitter) OrrImmW(dst, src Reg, set uint32) { e.logicW("ORRW", dst, src, set) }

func (e *Emitter) logicW(op string, dst, src Reg, imm uint32) {
	if !e.inFn(op) || !e.checkR(dst, src) {
		return
	}
	// One circular run of ones has exactly two bit transitions.
	if imm == 0 || imm == math.MaxUint32 || bits.OnesCount32(imm^bits.RotateLeft32(imm, 1)) != 2 {
		e.errorf("%s immediate %#x is not one run of ones", op, imm)
		return
	}
	e.ins("%s $%#x, %s, %s", op, imm, src, dst)
}

// SubsImm emits SUBS $v, src, dst (sets flags), 0 < v < 4096.
func (e *Emitter) SubsImm(dst, src Reg, v int) {
	if !e.inFn("SUBS") || !e.checkR(dst, src) {
		return
	}
	if v <= 0 || v >= 4096 {
		e.errorf("SUBS immediate %d out of range 1..4095", v)
		return
	}
	e.ins("SUBS $%d, %s, %s", v, src, dst)
}

// LoadW32Post emits MOVW.P 4(base), dst: a sign-extended int32 load with
// post-increment.
func (e *Emitter) LoadW32Post(dst, base Reg) {
	if e.inFn("MOVW") && e.checkR(dst, base) {
		e.ins("MOVW.P 4(%s), %s", base, dst)
	}
}

// LoadWU emits MOVWU (base), dst: the 32 bits at base, zero-extended (a
// float32's bits, to test them in a general register).
func (e *Emitter) LoadWU(dst, base Reg) {
	if e.inFn("MOVWU") && e.checkR(dst, base) {
		e.ins("MOVWU (%s), %s", base, dst)
	}
}

func (e *Emitter) branch(op string, format string, args ...any) {
	if e.inFn(op) {
		e.ins(op+" "+format, args...)
	}
}

func (e *Emitter) use(l Label) bool {
	if !e.ok() {
		return false
	}
	if l == "" {
		e.errorf("branch to empty label")
		return false
	}
	if e.used != nil {
		e.used[l] = true
	}
	return true
}

// B emits an unconditional branch.
func (e *Emitter) B(l Label) {
	if e.use(l) {
		e.branch("B", "%s", l)
	}
}

// BNE emits a branch taken when the Z flag is clear.
func (e *Emitter) BNE(l Label) {
	if e.use(l) {
		e.branch("BNE", "%s", l)
	}
}

// BVC emits a branch taken when the V flag is clear (after FCMPS: the
// operands are ordered, neither is a NaN).
func (e *Emitter) BVC(l Label) {
	if e.use(l) {
		e.branch("BVC", "%s", l)
	}
}

// CBZ emits a branch taken when r is zero.
func (e *Emitter) CBZ(r Reg, l Label) {
	if e.use(l) && e.checkR(r) {
		e.branch("CBZ", "%s, %s", r, l)
	}
}

// TBNZ emits a branch taken when bit of r is set (0 ≤ bit < 64).
func (e *Emitter) TBNZ(bit int, r Reg, l Label) {
	if !e.use(l) || !e.checkR(r) {
		return
	}
	if bit < 0 || bit > 63 {
		e.errorf("TBNZ bit %d out of range", bit)
		return
	}
	e.branch("TBNZ", "$%d, %s, %s", bit, r, l)
}

// RET emits RET.
func (e *Emitter) RET() {
	if e.inFn("RET") {
		e.ins("RET")
	}
}
