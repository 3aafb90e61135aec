package arm64

// MaxUnroll is the largest number of 16-lane blocks a compile-time loop is
// unrolled into straight-line code; longer trip counts get a counted loop.
const MaxUnroll = 4

// The general registers kernels may use (see Reg for the reserved ones).
const (
	R0  Reg = 0
	R1  Reg = 1
	R2  Reg = 2
	R3  Reg = 3
	R4  Reg = 4
	R5  Reg = 5
	R6  Reg = 6
	R7  Reg = 7
	R8  Reg = 8
	R9  Reg = 9
	R10 Reg = 10
	R11 Reg = 11
	R12 Reg = 12
	R13 Reg = 13
	R14 Reg = 14
	R15 Reg = 15
	R16 Reg = 16
	R17 Reg = 17
	R19 Reg = 19
	R20 Reg = 20
	R21 Reg = 21
	R22 Reg = 22
	R23 Reg = 23
	R24 Reg = 24
	R25 Reg = 25
)

// Vecs returns the n registers first, first+step, … with arrangement a.
func Vecs(first VReg, n, step int, a Arrangement) []Vec {
	out := make([]Vec, n)
	for i := range out {
		out[i] = Vec{first + VReg(i*step), a}
	}
	return out
}

// ForEach emits the loops over the n elements counted by register rn, using
// rc as the trip counter: a 16-element loop (when body16 is set), a
// 4-element loop and a 1-element loop. Bodies advance their own cursors.
func (e *Emitter) ForEach(hint string, rn, rc Reg, body16, body4, body1 func()) {
	l4 := e.NewLabel(hint + "_from4_")
	l1 := e.NewLabel(hint + "_from1_")
	end := e.NewLabel(hint + "_end")
	if body16 != nil {
		loop := e.NewLabel(hint + "_x16_")
		e.LsrImm(rc, rn, 4)
		e.CBZ(rc, l4)
		e.Label(loop)
		body16()
		e.SubsImm(rc, rc, 1)
		e.BNE(loop)
		e.Label(l4)
		e.LsrImm(rc, rn, 2)
		e.AndImm(rc, rc, 3)
	} else {
		e.Label(l4)
		e.LsrImm(rc, rn, 2)
	}
	loop4 := e.NewLabel(hint + "_x4_")
	e.CBZ(rc, l1)
	e.Label(loop4)
	body4()
	e.SubsImm(rc, rc, 1)
	e.BNE(loop4)
	e.Label(l1)
	loop1 := e.NewLabel(hint + "_x1_")
	e.AndImm(rc, rn, 3)
	e.CBZ(rc, end)
	e.Label(loop1)
	body1()
	e.SubsImm(rc, rc, 1)
	e.BNE(loop1)
	e.Label(end)
}
