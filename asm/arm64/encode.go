package arm64

import "fmt"

// Op is a NEON float instruction the Go assembler cannot spell, emitted as a
// WORD with its A64 encoding.
type Op int

// The WORD-encoded operations.
const (
	OpFADD   Op = iota + 1 // FADD  Vd.T, Vn.T, Vm.T
	OpFSUB                 // FSUB  Vd.T, Vn.T, Vm.T
	OpFMUL                 // FMUL  Vd.T, Vn.T, Vm.T
	OpFMAX                 // FMAX  Vd.T, Vn.T, Vm.T
	OpFMIN                 // FMIN  Vd.T, Vn.T, Vm.T
	OpFADDP                // FADDP Vd.T, Vn.T, Vm.T
	OpFMAXP                // FMAXP Vd.T, Vn.T, Vm.T
	OpFRINTN               // FRINTN Vd.T, Vn.T
	OpFCVTZS               // FCVTZS Vd.T, Vn.T
	OpFNEG                 // FNEG Vd.T, Vn.T
	OpSSHR                 // SSHR Vd.T, Vn.T, #shift
)

// opInfo is the fixed bits of an encoding (Q = 0, sz = 0: single precision)
// and the name go tool objdump prints for it.
type opInfo struct {
	base uint32
	name string
}

var ops = map[Op]opInfo{
	OpFADD:   {0x0e20d400, "FADD"},   // Advanced SIMD three same, U=0 opcode 11010 sz=0
	OpFSUB:   {0x0ea0d400, "FSUB"},   // U=0 opcode 11010 sz=1 (bit 23)
	OpFMUL:   {0x2e20dc00, "FMUL"},   // U=1 opcode 11011
	OpFMAX:   {0x0e20f400, "FMAX"},   // U=0 opcode 11110
	OpFMIN:   {0x0ea0f400, "FMIN"},   // U=0 opcode 11110 bit 23
	OpFADDP:  {0x2e20d400, "VFADDP"}, // U=1 opcode 11010
	OpFMAXP:  {0x2e20f400, "VFMAXP"}, // U=1 opcode 11110
	OpFRINTN: {0x0e218800, "FRINTN"}, // two-reg misc U=0 opcode 11000
	OpFCVTZS: {0x0ea1b800, "FCVTZS"}, // two-reg misc U=0 opcode 11011 bit 23
	OpFNEG:   {0x2ea0f800, "FNEG"},   // two-reg misc U=1 opcode 01111 bit 23
	OpSSHR:   {0x0f000400, "VSSHR"},  // shift by immediate U=0 opcode 00000
}

// Word is one encoded instruction: its bits and its disassembly in the
// syntax go tool objdump prints (Go operand order, destination last).
type Word struct {
	Bits uint32
	Text string
}

// q returns the Q bit for a float arrangement, or an error.
func q(op string, vs ...Vec) (uint32, error) {
	for _, v := range vs {
		if v.R < 0 || v.R > 31 {
			return 0, fmt.Errorf("%s: vector register V%d out of range 0..31", op, int(v.R))
		}
		if v.A != S4 && v.A != S2 {
			return 0, fmt.Errorf("%s: arrangement %s not supported (S4, S2)", op, v.A)
		}
		if v.A != vs[0].A {
			return 0, fmt.Errorf("%s: mixed arrangements %s and %s", op, vs[0].A, v.A)
		}
	}
	if vs[0].A == S4 {
		return 1 << 30, nil
	}
	return 0, nil
}

// Encode3 encodes a three-register operation d = op(n, m).
func Encode3(op Op, d, n, m Vec) (Word, error) {
	info, ok := ops[op]
	if !ok || op == OpFRINTN || op == OpFCVTZS || op == OpFNEG || op == OpSSHR {
		return Word{}, fmt.Errorf("Encode3: op %d is not a three-register operation", int(op))
	}
	qb, err := q(info.name, d, n, m)
	if err != nil {
		return Word{}, err
	}
	bits := info.base | qb | uint32(m.R)<<16 | uint32(n.R)<<5 | uint32(d.R)
	return Word{bits, fmt.Sprintf("%s %s, %s, %s", info.name, m, n, d)}, nil
}

// Encode2 encodes a two-register operation d = op(n).
func Encode2(op Op, d, n Vec) (Word, error) {
	info, ok := ops[op]
	if !ok || (op != OpFRINTN && op != OpFCVTZS && op != OpFNEG) {
		return Word{}, fmt.Errorf("Encode2: op %d is not a two-register operation", int(op))
	}
	qb, err := q(info.name, d, n)
	if err != nil {
		return Word{}, err
	}
	bits := info.base | qb | uint32(n.R)<<5 | uint32(d.R)
	return Word{bits, fmt.Sprintf("%s %s, %s", info.name, n, d)}, nil
}

// EncodeSSHR encodes the 32-bit-lane arithmetic shift right d = n >> sh,
// 1 ≤ sh ≤ 32 (immh:immb = 64 − sh).
func EncodeSSHR(d, n Vec, sh int) (Word, error) {
	info := ops[OpSSHR]
	qb, err := q(info.name, d, n)
	if err != nil {
		return Word{}, err
	}
	if sh < 1 || sh > 32 {
		return Word{}, fmt.Errorf("SSHR: shift %d out of range 1..32", sh)
	}
	bits := info.base | qb | uint32(64-sh)<<16 | uint32(n.R)<<5 | uint32(d.R)
	return Word{bits, fmt.Sprintf("%s $%d, %s, %s", info.name, sh, n, d)}, nil
}
