package arm64

import "fmt"

// Op is a NEON float instruction the Go assembler cannot spell, emitted as a
// WORD with its A64 encoding.
type Op int

// The WORD-encoded operations.
const (
	OpFADD  Op = iota + 1 // FADD  Vd.T, Vn.T, Vm.T
	OpFSUB                // FSUB  Vd.T, Vn.T, Vm.T
	OpFMUL                // FMUL  Vd.T, Vn.T, Vm.T
	OpFMAX                // FMAX  Vd.T, Vn.T, Vm.T
	OpFMIN                // FMIN  Vd.T, Vn.T, Vm.T
	OpFADDP               // FADDP Vd.T, Vn.T, Vm.T
	OpFMAXP               // FMAXP Vd.T, Vn.T, Vm.T
	OpFCVTL               // FCVTL Vd.2D, Vn.2S and FCVTL2 Vd.2D, Vn.4S
	OpFCVTN               // FCVTN Vd.2S, Vn.2D and FCVTN2 Vd.4S, Vn.2D
)

// opInfo is the fixed bits of an encoding (Q = 0, sz = 0: single precision)
// and the name go tool objdump prints for it. The three-register float
// operations take double precision (D2) by setting sz, bit 22, and Q.
type opInfo struct {
	base uint32
	name string
}

var ops = map[Op]opInfo{
	OpFADD:  {0x0e20d400, "FADD"},   // Advanced SIMD three same, U=0 opcode 11010 sz=0
	OpFSUB:  {0x0ea0d400, "FSUB"},   // U=0 opcode 11010 sz=1 (bit 23)
	OpFMUL:  {0x2e20dc00, "FMUL"},   // U=1 opcode 11011
	OpFMAX:  {0x0e20f400, "FMAX"},   // U=0 opcode 11110
	OpFMIN:  {0x0ea0f400, "FMIN"},   // U=0 opcode 11110 bit 23
	OpFADDP: {0x2e20d400, "VFADDP"}, // U=1 opcode 11010
	OpFMAXP: {0x2e20f400, "VFMAXP"}, // U=1 opcode 11110
	OpFCVTL: {0x0e617800, "VFCVTL"}, // two-reg misc U=0 opcode 10111 sz=1 (double results)
	OpFCVTN: {0x0e616800, "VFCVTN"}, // two-reg misc U=0 opcode 10110 sz=1 (double sources)
}

// Word is one encoded instruction: its bits and its disassembly in the
// syntax go tool objdump prints (Go operand order, destination last).
type Word struct {
	Bits uint32
	Text string
}

// sizeQ checks the operands of op and returns its Q and sz bits: S4 sets Q,
// S2 neither, D2 Q and sz.
func sizeQ(op string, vs ...Vec) (uint32, error) {
	for _, v := range vs {
		if v.R < 0 || v.R > 31 {
			return 0, fmt.Errorf("%s: vector register V%d out of range 0..31", op, int(v.R))
		}
		if v.A != S4 && v.A != S2 && v.A != D2 {
			return 0, fmt.Errorf("%s: arrangement %s not supported (S4, S2, D2)", op, v.A)
		}
		if v.A != vs[0].A {
			return 0, fmt.Errorf("%s: mixed arrangements %s and %s", op, vs[0].A, v.A)
		}
	}
	switch vs[0].A {
	case S4:
		return 1 << 30, nil
	case D2:
		return 1<<30 | 1<<22, nil
	}
	return 0, nil
}

// Encode3 encodes a three-register operation d = op(n, m); S4, S2 or D2.
func Encode3(op Op, d, n, m Vec) (Word, error) {
	info, ok := ops[op]
	if !ok || op == OpFCVTL || op == OpFCVTN {
		return Word{}, fmt.Errorf("Encode3: op %d is not a three-register operation", int(op))
	}
	qb, err := sizeQ(info.name, d, n, m)
	if err != nil {
		return Word{}, err
	}
	bits := info.base | qb | uint32(m.R)<<16 | uint32(n.R)<<5 | uint32(d.R)
	return Word{bits, fmt.Sprintf("%s %s, %s, %s", info.name, m, n, d)}, nil
}

// EncodeFCVTL encodes the widening conversion of two float32 lanes of n to
// the two float64 lanes of d (D2): FCVTL from the low half (n S2), FCVTL2
// from the high half (n S4, Q set).
func EncodeFCVTL(d, n Vec) (Word, error) {
	info := ops[OpFCVTL]
	if d.R < 0 || d.R > 31 || n.R < 0 || n.R > 31 {
		return Word{}, fmt.Errorf("%s: vector register out of range 0..31 (V%d, V%d)", info.name, int(d.R), int(n.R))
	}
	if d.A != D2 || (n.A != S2 && n.A != S4) {
		return Word{}, fmt.Errorf("%s: arrangements %s, %s; want D2 from S2 (low half) or S4 (high half)", info.name, d.A, n.A)
	}
	name, bits := info.name, info.base|uint32(n.R)<<5|uint32(d.R)
	if n.A == S4 {
		name, bits = name+"2", bits|1<<30
	}
	return Word{bits, fmt.Sprintf("%s %s, %s", name, n, d)}, nil
}

// EncodeFCVTN encodes the narrowing conversion of the two float64 lanes of
// n (D2) to two float32 lanes of d, rounding to nearest even: FCVTN writes
// the low half (d S2) and zeroes the high one, FCVTN2 writes the high half
// (d S4, Q set) and keeps the low one.
func EncodeFCVTN(d, n Vec) (Word, error) {
	info := ops[OpFCVTN]
	if d.R < 0 || d.R > 31 || n.R < 0 || n.R > 31 {
		return Word{}, fmt.Errorf("%s: vector register out of range 0..31 (V%d, V%d)", info.name, int(d.R), int(n.R))
	}
	if n.A != D2 || (d.A != S2 && d.A != S4) {
		return Word{}, fmt.Errorf("%s: arrangements %s, %s; want S2 (low half) or S4 (high half) from D2", info.name, d.A, n.A)
	}
	name, bits := info.name, info.base|uint32(n.R)<<5|uint32(d.R)
	if d.A == S4 {
		name, bits = name+"2", bits|1<<30
	}
	return Word{bits, fmt.Sprintf("%s %s, %s", name, n, d)}, nil
}
