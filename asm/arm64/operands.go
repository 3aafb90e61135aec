package arm64

import "fmt"

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
// and S2; the three-register ones (FADD, FMUL, …) also D2, FCVTL
// widens S2/S4 halves to D2 and FCVTN narrows D2 into S2/S4 halves. H4 and
// H8 are 16-bit storage: loaded and stored as H4 (the low 64 bits), widened
// to S4 by FCVTL (binary16) or SHLL (bfloat16) and narrowed from S4 by
// FCVTN or RADDHN.
const (
	S4  Arrangement = iota + 1 // four 32-bit lanes (128 bits)
	S2                         // two 32-bit lanes (64 bits)
	B16                        // sixteen bytes (whole-register bitwise ops and moves)
	D2                         // two 64-bit lanes (128 bits): float64 arithmetic
	H4                         // four 16-bit lanes (64 bits): 16-bit storage
	H8                         // eight 16-bit lanes (128 bits): the high half of a widening or narrowing
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
	case H4:
		return "H4"
	case H8:
		return "H8"
	}
	return fmt.Sprintf("Arrangement(%d)", int(a))
}

// bytes is the width of the arrangement in bytes.
func (a Arrangement) bytes() int {
	if a == S2 || a == H4 {
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

// H4 returns v with the 4H arrangement.
func (v VReg) H4() Vec { return Vec{v, H4} }

// H8 returns v with the 8H arrangement.
func (v VReg) H8() Vec { return Vec{v, H8} }

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
