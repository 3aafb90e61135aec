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

// EncodeFCVTL encodes a widening float conversion of half of n: float32
// lanes to the two float64 lanes of d (D2) from the low half (n S2, FCVTL)
// or the high half (n S4, FCVTL2), or binary16 lanes to the four float32
// lanes of d (S4) from the low half (n H4, FCVTL) or the high half (n H8,
// FCVTL2). Every value converts exactly.
func EncodeFCVTL(d, n Vec) (Word, error) {
	info := ops[OpFCVTL]
	if d.R < 0 || d.R > 31 || n.R < 0 || n.R > 31 {
		return Word{}, fmt.Errorf("%s: vector register out of range 0..31 (V%d, V%d)", info.name, int(d.R), int(n.R))
	}
	name, bits := info.name, info.base|uint32(n.R)<<5|uint32(d.R)
	switch {
	case d.A == D2 && (n.A == S2 || n.A == S4):
	case d.A == S4 && (n.A == H4 || n.A == H8):
		bits &^= 1 << 22 // sz = 0: half-precision sources
	default:
		return Word{}, fmt.Errorf("%s: arrangements %s, %s; want D2 from S2 or S4, or S4 from H4 or H8", info.name, d.A, n.A)
	}
	if n.A == S4 || n.A == H8 {
		name, bits = name+"2", bits|1<<30
	}
	return Word{bits, fmt.Sprintf("%s %s, %s", name, n, d)}, nil
}

// EncodeFCVTN encodes a narrowing float conversion, rounding as FPCR.RMode
// says (round to nearest, ties to even, unless a program changed it; Go
// never does): the two float64 lanes of n (D2) to float32 in the low half
// of d (d S2, FCVTN, the high half zeroed) or its high half (d S4, FCVTN2,
// the low half kept), or the four float32 lanes of n (S4) to binary16 in
// the low half of d (d H4, FCVTN) or its high half (d H8, FCVTN2). With
// FPCR.AHP clear (the default) the binary16 results are IEEE ones: a finite
// value from 65520 on becomes an infinity, small ones subnormals, and a NaN
// stays NaN, made quiet, keeping its sign and top fraction bits.
func EncodeFCVTN(d, n Vec) (Word, error) {
	info := ops[OpFCVTN]
	if d.R < 0 || d.R > 31 || n.R < 0 || n.R > 31 {
		return Word{}, fmt.Errorf("%s: vector register out of range 0..31 (V%d, V%d)", info.name, int(d.R), int(n.R))
	}
	name, bits := info.name, info.base|uint32(n.R)<<5|uint32(d.R)
	switch {
	case n.A == D2 && (d.A == S2 || d.A == S4):
	case n.A == S4 && (d.A == H4 || d.A == H8):
		bits &^= 1 << 22 // sz = 0: half-precision results
	default:
		return Word{}, fmt.Errorf("%s: arrangements %s, %s; want S2 or S4 from D2, or H4 or H8 from S4", info.name, d.A, n.A)
	}
	if d.A == S4 || d.A == H8 {
		name, bits = name+"2", bits|1<<30
	}
	return Word{bits, fmt.Sprintf("%s %s, %s", name, n, d)}, nil
}

// checkRegs checks that every register number is in 0..31.
func checkRegs(op string, vs ...Vec) error {
	for _, v := range vs {
		if v.R < 0 || v.R > 31 {
			return fmt.Errorf("%s: vector register V%d out of range 0..31", op, int(v.R))
		}
	}
	return nil
}

// EncodeSHLL16 encodes SHLL Vd.4S, Vn.4H, #16 (n H4) or SHLL2 Vd.4S,
// Vn.8H, #16 (n H8): each 16-bit lane of a half of n shifted left by 16
// into a 32-bit lane of d (S4), which widens bfloat16 encodings to the
// float32 ones of the same values. The Go assembler's VUSHLL takes shifts
// up to 15 only; SHLL is the instruction whose shift is the lane width.
func EncodeSHLL16(d, n Vec) (Word, error) {
	if err := checkRegs("VSHLL", d, n); err != nil {
		return Word{}, err
	}
	if d.A != S4 || (n.A != H4 && n.A != H8) {
		return Word{}, fmt.Errorf("VSHLL: arrangements %s, %s; want S4 from H4 or H8", d.A, n.A)
	}
	name, bits := "VSHLL", uint32(0x2e613800)|uint32(n.R)<<5|uint32(d.R) // two-reg misc U=1 size=01 opcode 10011
	if n.A == H8 {
		name, bits = name+"2", bits|1<<30
	}
	return Word{bits, fmt.Sprintf("%s $16, %s, %s", name, n, d)}, nil
}

// EncodeCMGEZero encodes CMGE Vd.T, Vn.T, #0 (S4 or S2): all ones in the
// lanes of d whose signed 32-bit integer in n is ≥ 0, zero elsewhere.
func EncodeCMGEZero(d, n Vec) (Word, error) {
	qb, err := sizeQ("VCMGE", d, n)
	if err != nil {
		return Word{}, err
	}
	if d.A == D2 {
		return Word{}, fmt.Errorf("VCMGE: arrangement D2 not supported (S4, S2)")
	}
	bits := uint32(0x2ea08800) | qb | uint32(n.R)<<5 | uint32(d.R) // two-reg misc U=1 size=10 opcode 01000
	return Word{bits, fmt.Sprintf("VCMGE $0, %s, %s", n, d)}, nil
}

// EncodeRADDHN encodes RADDHN Vd.4H, Vn.4S, Vm.4S (d H4) or RADDHN2 Vd.8H,
// Vn.4S, Vm.4S (d H8): per 32-bit lane the high 16 bits of n + m + 2^15
// (modulo 2^32) into the low (the high half zeroed) or the high half of d
// (the low half kept).
func EncodeRADDHN(d, n, m Vec) (Word, error) {
	if err := checkRegs("VRADDHN", d, n, m); err != nil {
		return Word{}, err
	}
	if n.A != S4 || m.A != S4 || (d.A != H4 && d.A != H8) {
		return Word{}, fmt.Errorf("VRADDHN: arrangements %s, %s, %s; want H4 or H8 from S4, S4", d.A, n.A, m.A)
	}
	name, bits := "VRADDHN", uint32(0x2e604000)|uint32(m.R)<<16|uint32(n.R)<<5|uint32(d.R) // three different U=1 size=01 opcode 0100
	if d.A == H8 {
		name, bits = name+"2", bits|1<<30
	}
	return Word{bits, fmt.Sprintf("%s %s, %s, %s", name, m, n, d)}, nil
}
