package relative

import "github.com/posenc/posenc/asm/arm64"

// relStep is one step of a sweep over HeadDim: n = 1..4 vectors of four
// floats, or n = −2, −1 a tail of two or one floats; off is its first float.
type relStep struct{ n, off int }

// regs is the number of vector registers the step occupies.
func (s relStep) regs() int { return max(s.n, 1) }

// floats is the number of floats the step covers.
func (s relStep) floats() int {
	if s.n < 0 {
		return -s.n
	}
	return 4 * s.n
}

// relSteps cuts d floats into steps: blocks of four vectors, one step of
// 1..3 vectors, then tails of two and one floats.
func relSteps(d int) []relStep {
	var out []relStep
	off := 0
	add := func(n int) {
		s := relStep{n, off}
		out = append(out, s)
		off += s.floats()
	}
	for range d / 16 {
		add(4)
	}
	if r := d % 16 / 4; r > 0 {
		add(r)
	}
	if d%4 >= 2 {
		add(-2)
	}
	if d%2 == 1 {
		add(-1)
	}
	return out
}

// loadStep loads step s from base into registers first.. (post-incrementing
// base past it): VLD1 for vectors, FMOVD/FMOVS for tails.
func loadStep(e *arm64.Emitter, s relStep, base arm64.Reg, first arm64.VReg) {
	switch s.n {
	case -2:
		e.LoadD(first, base, 8)
	case -1:
		e.LoadS(first, base, 4)
	default:
		e.VLD1(base, true, arm64.Vecs(first, s.n, 1, arm64.S4)...)
	}
}

// storeStep stores step s from registers first.. to base, post-incrementing.
func storeStep(e *arm64.Emitter, s relStep, base arm64.Reg, first arm64.VReg) {
	switch s.n {
	case -2:
		e.StoreD(first, base, 8)
	case -1:
		e.StoreS(first, base, 4)
	default:
		e.VST1(base, true, arm64.Vecs(first, s.n, 1, arm64.S4)...)
	}
}
