package rope

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// 16-bit storage on NEON (abi.Rotate16). A step of the float32 kernel
// (neon.go: 4·nv pairs, or the tails of 2 and 1 pairs) loads the same
// number of 16-bit elements, widens them to float32 lanes, rotates them
// with the same FMUL, FMLS and FMLA, and narrows the results before the
// store, so the float32 values equal those of the float32 kernel:
//
//   - f16 (IEEE 754 binary16): FCVTL 4H→4S widens exactly, FCVTN 4S→4H
//     narrows with FPCR's rounding, round to nearest even (Go never changes
//     FPCR); with FPCR.AHP and FZ clear these are IEEE conversions: 65520
//     and more become infinities, small values binary16 subnormals, NaNs
//     stay NaN (quiet, with sign and top fraction bits), as the generic
//     kernel's narrow.
//   - bf16 (bfloat16, the upper half of a float32): SHLL #16 widens; the
//     narrow is the generic kernel's integer rounding bits + 0x7FFF +
//     bit 16, shifted right by 16, in three instructions without a
//     constant register: t = bits << 15 puts bit 16 in the sign bit, CMGE
//     t, #0 makes t = bit16 − 1 (0 or all ones), and RADDHN adds bits, t
//     and its own rounding constant 2^15, keeping the high 16 bits:
//     bits + bit16 − 1 + 2^15 = bits + 0x7FFF + bit16. NaNs need no
//     special case, as on amd64 (amd64_16.go): every NaN the rotation
//     produces has zero low 16 bits (an input NaN is a widened bf16, which
//     the arithmetic propagates with its payload, made quiet; an invalid
//     operation gives the default NaN 0x7FC00000; the table is finite), so
//     the addition cannot carry it into an infinity, and its quiet bit is
//     already set, the 0x40 the generic narrow ORs in.
//
// Memory: full steps move nv·8 bytes per tensor half with VLD1/VST1 of H4
// registers (half) or VLD2/VST2 of H4 pairs (interleaved). Half tails move
// 4 bytes (FMOVS, two elements) or one 16-bit lane (VLD1/VST1 .H[0]);
// interleaved tails move the one or two pairs as 4 or 8 bytes, split into
// x_{2i} and x_{2i+1} by UZP after widening and joined by ZIP1 before
// narrowing. No byte outside the elements is read or written.

// kernel is the ABI entry the kernel implements: abi.Rotate, or
// abi.Rotate16 for 16-bit storage.
func (g *ropeGen) kernel() abi.Kernel {
	if g.storage != "" {
		return abi.Rotate16
	}
	return abi.Rotate
}

// es is the size of a tensor element in bytes.
func (g *ropeGen) es() int {
	if g.storage != "" {
		return 2
	}
	return 4
}

// shift is log2(es): the left shift turning an element stride into bytes.
func (g *ropeGen) shift() int {
	if g.storage != "" {
		return 1
	}
	return 2
}

// h4 returns the registers of vs with the H4 arrangement (their 16-bit
// storage form).
func h4(vs []arm64.Vec) []arm64.Vec {
	out := make([]arm64.Vec, len(vs))
	for i, v := range vs {
		out[i] = v.R.H4()
	}
	return out
}

// widen turns the four 16-bit elements in the low half of r into the
// float32 lanes of r.
func (g *ropeGen) widen(r arm64.VReg) { g.e.Widen16(g.storage, r) }

// narrow rounds the float32 lanes of y to 16-bit elements in the low half
// of y (nearest, ties to even); tmp is clobbered for bf16.
func (g *ropeGen) narrow(y, tmp arm64.VReg) {
	e := g.e
	if g.storage == "f16" {
		e.FCVTNH(y, y)
		return
	}
	e.VSHL(tmp.S4(), y.S4(), 15) // bit 16 → sign bit
	e.CMGEZero(tmp, tmp)         // bit16 − 1
	e.RADDHN(y, y, tmp)          // (bits + bit16 − 1 + 2^15) >> 16
}

// load16 loads the x_i and x_{i+n} (half) or x_{2i} and x_{2i+1}
// (interleaved) elements of a step into the float32 lanes of x0 and x1,
// advancing the source cursors as rotateStep does for float32.
func (g *ropeGen) load16(v int, inPlace bool, x0, x1 []arm64.Vec) {
	e := g.e
	x := arm64.R25
	switch {
	case g.interleaved && v < 0:
		// One pair (4 bytes) or two (8 bytes): a0 b0 [a1 b1], widened and
		// split into x0 = a0 [a1] and x1 = b0 [b1].
		w := x0[0].R
		if v == -1 {
			e.LoadS(w, arm64.R10, 4)
		} else {
			e.LoadD(w, arm64.R10, 8)
		}
		g.widen(w)
		e.VUZP2(x1[0].R.S4(), w.S4(), w.S4())
		if v == -2 {
			e.VUZP1(w.S4(), w.S4(), w.S4())
		}
		return
	case g.interleaved:
		for i := range x0 {
			e.VLD2(arm64.R10, true, x0[i].R.H4(), x1[i].R.H4())
		}
	case inPlace && v == -1:
		e.LoadH(x0[0].R, x, 0)
		e.LoadH(x1[0].R, arm64.R11, 0)
	case inPlace && v == -2:
		e.LoadS(x0[0].R, x, 0)
		e.LoadS(x1[0].R, arm64.R11, 0)
	case inPlace:
		e.VLD1(x, false, h4(x0)...)
		e.VLD1(arm64.R11, false, h4(x1)...)
	case v == -1:
		e.LoadH(x0[0].R, arm64.R10, 2)
		e.LoadH(x1[0].R, arm64.R16, 2)
	case v == -2:
		e.LoadS(x0[0].R, arm64.R10, 4)
		e.LoadS(x1[0].R, arm64.R16, 4)
	default:
		e.VLD1(arm64.R10, true, h4(x0)...)
		e.VLD1(arm64.R16, true, h4(x1)...)
	}
	for i := range x0 {
		g.widen(x0[i].R)
		g.widen(x1[i].R)
	}
}

// store16 narrows the results y0 and y1 of a step and stores them,
// advancing the destination cursors; the x registers, dead after the
// rotation, are the temporaries.
func (g *ropeGen) store16(v int, x0, x1, y0, y1 []arm64.Vec) {
	e := g.e
	x := arm64.R25
	if g.interleaved && v < 0 {
		// Pairs joined again: y0[0] y1[0] [y0[1] y1[1]].
		t := x0[0].R
		e.VZIP1(t.S4(), y0[0].R.S4(), y1[0].R.S4())
		g.narrow(t, x1[0].R)
		if v == -1 {
			e.StoreS(t, x, 4)
		} else {
			e.StoreD(t, x, 8)
		}
		return
	}
	for i := range y0 {
		g.narrow(y0[i].R, x0[i].R)
		g.narrow(y1[i].R, x1[i].R)
	}
	switch {
	case g.interleaved:
		for i := range y0 {
			e.VST2(x, true, y0[i].R.H4(), y1[i].R.H4())
		}
	case v == -1:
		e.StoreH(y0[0].R, x, 2)
		e.StoreH(y1[0].R, arm64.R11, 2)
	case v == -2:
		e.StoreS(y0[0].R, x, 4)
		e.StoreS(y1[0].R, arm64.R11, 4)
	default:
		e.VST1(x, true, h4(y0)...)
		e.VST1(arm64.R11, true, h4(y1)...)
	}
}
