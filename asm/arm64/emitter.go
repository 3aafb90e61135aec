package arm64

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Reg is an arm64 general-purpose register R0..R30. Kernels may use only
// R0..R17 and R19..R25: R18 is the platform register, R26 the closure
// context, R27 the assembler's temporary (REGTMP), R28 g, R29 the frame
// pointer and R30 the link register.
type Reg int

// VReg is a SIMD&FP register V0..V31. Its scalar single-precision view is
// printed Fn (the same register).
type VReg int

// Arrangement is the element layout of a vector operand.
type Arrangement int

// The arrangements the emitter knows. The float WORD encodings accept S4
// and S2; the three-register ones (FADD, FMUL, …) also D2, and FCVTL
// widens S2/S4 halves to D2.
const (
	S4  Arrangement = iota + 1 // four 32-bit lanes (128 bits)
	S2                         // two 32-bit lanes (64 bits)
	B16                        // sixteen bytes (whole-register bitwise ops and moves)
	D2                         // two 64-bit lanes (128 bits): float64 arithmetic
)

// String returns the Go assembler spelling of the arrangement ("S4").
func (a Arrangement) String() string {
	switch a {
	case S4:
		return "S4"
	case S2:
		return "S2"
	case B16:
		return "B16"
	case D2:
		return "D2"
	}
	return fmt.Sprintf("Arrangement(%d)", int(a))
}

// bytes is the width of the arrangement in bytes.
func (a Arrangement) bytes() int {
	if a == S2 {
		return 8
	}
	return 16
}

// Vec is a vector register with an arrangement, e.g. V3.S4.
type Vec struct {
	R VReg
	A Arrangement
}

// S4 returns v with the 4S arrangement.
func (v VReg) S4() Vec { return Vec{v, S4} }

// S2 returns v with the 2S arrangement.
func (v VReg) S2() Vec { return Vec{v, S2} }

// D2 returns v with the 2D arrangement.
func (v VReg) D2() Vec { return Vec{v, D2} }

// B16 returns v with the 16B arrangement.
func (v VReg) B16() Vec { return Vec{v, B16} }

// As returns v with arrangement a.
func (v VReg) As(a Arrangement) Vec { return Vec{v, a} }

// String returns the Go assembler spelling of v ("V3.S4").
func (v Vec) String() string { return fmt.Sprintf("V%d.%s", int(v.R), v.A) }

// String returns "Rn".
func (r Reg) String() string { return fmt.Sprintf("R%d", int(r)) }

// F returns the scalar spelling of the register ("F3").
func (v VReg) F() string { return fmt.Sprintf("F%d", int(v)) }

// Label names a branch target inside one TEXT block.
type Label string

// Arg names one argument slot of the Go frame, e.g. Arg{"q_base", 0}; it is
// printed name+off(FP), the form go vet's asmdecl checks.
type Arg struct {
	Name string
	Off  int
}

// String returns the operand as the assembler reads it: name+off(FP).
func (a Arg) String() string { return fmt.Sprintf("%s+%d(FP)", a.Name, a.Off) }

// Emitter writes Go arm64 assembly text. Every method checks its operands;
// the first problem is kept as a sticky error (Err) and every later call is
// a no-op, so a generator can emit a whole function and check once.
type Emitter struct {
	b       strings.Builder
	err     error
	fn      string         // TEXT block being emitted, "" outside one
	defined map[Label]bool // labels defined in fn
	used    map[Label]bool // labels branched to in fn
	nlabel  int
}

// NewEmitter returns an empty emitter.
func NewEmitter() *Emitter { return &Emitter{} }

// Err returns the first error recorded, or nil.
func (e *Emitter) Err() error { return e.err }

// errorf records an error unless one is already kept.
func (e *Emitter) errorf(format string, args ...any) {
	if e.err == nil {
		where := ""
		if e.fn != "" {
			where = e.fn + ": "
		}
		e.err = fmt.Errorf("arm64 emitter: "+where+format, args...)
	}
}

// ok reports whether emission may proceed.
func (e *Emitter) ok() bool { return e.err == nil }

// line writes one raw line (no indentation added).
func (e *Emitter) line(s string) {
	if e.ok() {
		e.b.WriteString(s)
		e.b.WriteByte('\n')
	}
}

// ins writes one instruction line, tab-indented.
func (e *Emitter) ins(format string, args ...any) {
	if e.ok() {
		e.line("\t" + fmt.Sprintf(format, args...))
	}
}

// Raw writes a line verbatim (directives such as #include).
func (e *Emitter) Raw(s string) { e.line(s) }

// Comment writes a // comment line (at the indentation of instructions when
// inside a TEXT block). An empty comment writes a blank line.
func (e *Emitter) Comment(format string, args ...any) {
	if !e.ok() {
		return
	}
	s := fmt.Sprintf(format, args...)
	if s == "" {
		e.line("")
		return
	}
	ind := ""
	if e.fn != "" {
		ind = "\t"
	}
	for _, l := range strings.Split(s, "\n") {
		e.line(ind + "// " + l)
	}
}

// Text opens a TEXT block for the Go function name (declared in the package's
// .go file) with a zero-size local frame and argSize bytes of arguments. The
// previous block must have been closed by End.
func (e *Emitter) Text(name string, argSize int) {
	if !e.ok() {
		return
	}
	if e.fn != "" {
		e.errorf("TEXT %s while %s is open", name, e.fn)
		return
	}
	if name == "" || argSize < 0 {
		e.errorf("bad TEXT %q $0-%d", name, argSize)
		return
	}
	e.fn = name
	e.defined = map[Label]bool{}
	e.used = map[Label]bool{}
	e.nlabel = 0
	e.line(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $0-%d", name, argSize))
}

// End closes the TEXT block, checking that every branch target was defined.
func (e *Emitter) End() {
	if !e.ok() {
		return
	}
	if e.fn == "" {
		e.errorf("End outside a TEXT block")
		return
	}
	var undefined []string
	for l := range e.used {
		if !e.defined[l] {
			undefined = append(undefined, string(l))
		}
	}
	if len(undefined) > 0 {
		sort.Strings(undefined)
		e.errorf("branch to undefined label %s", strings.Join(undefined, ", "))
		return
	}
	e.fn = ""
	e.line("")
}

// NewLabel returns a label unique within the current TEXT block, built from
// hint.
func (e *Emitter) NewLabel(hint string) Label {
	e.nlabel++
	return Label(fmt.Sprintf("%s%d", hint, e.nlabel))
}

// Label defines l at the current position.
func (e *Emitter) Label(l Label) {
	if !e.ok() {
		return
	}
	if e.fn == "" || l == "" {
		e.errorf("label %q outside a TEXT block or empty", l)
		return
	}
	if e.defined[l] {
		e.errorf("label %s defined twice", l)
		return
	}
	e.defined[l] = true
	e.line(string(l) + ":")
}

// Bytes returns the text written so far, or the sticky error. A TEXT block
// left open is an error.
func (e *Emitter) Bytes() ([]byte, error) {
	if e.err == nil && e.fn != "" {
		e.errorf("TEXT block not closed")
	}
	if e.err != nil {
		return nil, e.err
	}
	return []byte(e.b.String()), nil
}

// ---- operand checks ----

func (e *Emitter) checkR(rs ...Reg) bool {
	for _, r := range rs {
		if r < 0 || r > 25 || r == 18 {
			e.errorf("general register R%d not usable (R0..R17, R19..R25)", int(r))
			return false
		}
	}
	return e.ok()
}

func (e *Emitter) checkV(vs ...VReg) bool {
	for _, v := range vs {
		if v < 0 || v > 31 {
			e.errorf("vector register V%d out of range 0..31", int(v))
			return false
		}
	}
	return e.ok()
}

// checkVec checks register numbers and that every operand has one of the
// allowed arrangements, all the same.
func (e *Emitter) checkVec(op string, allowed []Arrangement, vs ...Vec) bool {
	for i, v := range vs {
		if !e.checkV(v.R) {
			return false
		}
		okA := false
		for _, a := range allowed {
			if v.A == a {
				okA = true
			}
		}
		if !okA {
			e.errorf("%s: arrangement %s not allowed", op, v.A)
			return false
		}
		if i > 0 && v.A != vs[0].A {
			e.errorf("%s: mixed arrangements %s and %s", op, vs[0].A, v.A)
			return false
		}
	}
	return e.ok()
}

func (e *Emitter) inFn(op string) bool {
	if e.ok() && e.fn == "" {
		e.errorf("%s outside a TEXT block", op)
	}
	return e.ok()
}

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

// ---- vector loads and stores ----

// structMem emits VLDn/VSTn: regs must be consecutive (mod 32), share one
// arrangement (S4 or S2), number 1..4 for n=1 and exactly n otherwise. With
// post the base is incremented by the bytes transferred.
func (e *Emitter) structMem(op string, n int, store bool, base Reg, post bool, regs []Vec) {
	if !e.inFn(op) || !e.checkR(base) || !e.checkVec(op, []Arrangement{S4, S2}, regs...) {
		return
	}
	if (n == 1 && (len(regs) < 1 || len(regs) > 4)) || (n > 1 && len(regs) != n) {
		e.errorf("%s: %d registers", op, len(regs))
		return
	}
	names := make([]string, len(regs))
	for i, r := range regs {
		if i > 0 && r.R != (regs[i-1].R+1)%32 {
			e.errorf("%s: registers %s, %s not consecutive", op, regs[i-1], r)
			return
		}
		names[i] = r.String()
	}
	list := "[" + strings.Join(names, ", ") + "]"
	mem := fmt.Sprintf("(%s)", base)
	if post {
		op += ".P"
		mem = fmt.Sprintf("%d(%s)", len(regs)*regs[0].A.bytes(), base)
	}
	if store {
		e.ins("%s %s, %s", op, list, mem)
	} else {
		e.ins("%s %s, %s", op, mem, list)
	}
}

// VLD1 loads 1..4 consecutive registers from (base), post-incrementing base
// when post is set.
func (e *Emitter) VLD1(base Reg, post bool, regs ...Vec) {
	e.structMem("VLD1", 1, false, base, post, regs)
}

// VST1 stores 1..4 consecutive registers to (base).
func (e *Emitter) VST1(base Reg, post bool, regs ...Vec) {
	e.structMem("VST1", 1, true, base, post, regs)
}

// VLD2 loads 2-element structures, de-interleaving even elements into the
// first register and odd elements into the second.
func (e *Emitter) VLD2(base Reg, post bool, a, b Vec) {
	e.structMem("VLD2", 2, false, base, post, []Vec{a, b})
}

// VST2 stores two registers interleaved (a0 b0 a1 b1 …).
func (e *Emitter) VST2(base Reg, post bool, a, b Vec) {
	e.structMem("VST2", 2, true, base, post, []Vec{a, b})
}

// scalarMem emits FMOVS/FMOVD between lane 0.. of v and memory. A load
// zeroes the rest of the register. post > 0 post-increments base by post.
func (e *Emitter) scalarMem(op string, store bool, v VReg, base Reg, post int) {
	if !e.inFn(op) || !e.checkV(v) || !e.checkR(base) {
		return
	}
	if post < 0 || post > 255 {
		e.errorf("%s: post-increment %d out of range 0..255", op, post)
		return
	}
	mem := fmt.Sprintf("(%s)", base)
	if post > 0 {
		op += ".P"
		mem = fmt.Sprintf("%d(%s)", post, base)
	}
	if store {
		e.ins("%s %s, %s", op, v.F(), mem)
	} else {
		e.ins("%s %s, %s", op, mem, v.F())
	}
}

// LoadS loads one float32 into lane 0 of v (FMOVS), zeroing the other lanes.
func (e *Emitter) LoadS(v VReg, base Reg, post int) { e.scalarMem("FMOVS", false, v, base, post) }

// StoreS stores lane 0 of v (FMOVS).
func (e *Emitter) StoreS(v VReg, base Reg, post int) { e.scalarMem("FMOVS", true, v, base, post) }

// LoadD loads two float32 into lanes 0..1 of v (FMOVD), zeroing lanes 2..3.
func (e *Emitter) LoadD(v VReg, base Reg, post int) { e.scalarMem("FMOVD", false, v, base, post) }

// StoreD stores lanes 0..1 of v (FMOVD).
func (e *Emitter) StoreD(v VReg, base Reg, post int) { e.scalarMem("FMOVD", true, v, base, post) }

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

// VDUPR broadcasts the low 32 bits of r into every lane of d.
func (e *Emitter) VDUPR(d Vec, r Reg) {
	if e.inFn("VDUP") && e.checkVec("VDUP", floatArr, d) && e.checkR(r) {
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

// FDIVD emits Dd = Dn / Dm (float64).
func (e *Emitter) FDIVD(d, n, m VReg) { e.scalar3("FDIVD", d, n, m) }

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
