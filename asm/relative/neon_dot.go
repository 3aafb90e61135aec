package relative

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// Kernels of the relative-attention encodings (asm/abi: DotRows, ScoresRow,
// XLScoresRow, AxpyRows), for a compile-time HeadDim D:
//
//	dotRows(dst, x, rows)              dst[r] = x·rows[r]                   (rpe_full)
//	scoresRow(dst, q, k, bias, scale)  dst[j] = (q·k_j + bias[j])·scale     (rpe_full)
//	scoresRow(dst, qu, k, qv, r)       dst[j] = qu·k_j + qv·r_j             (xl)
//	axpyRows(dst, w, rows)             dst += Σ_r w[r]·rows[r]              (rpe_full)
//
// The dot kernels take four rows per block, each with two accumulators
// (even and odd vectors of the row), so eight multiply-add chains run in
// parallel; x's first vectors stay in registers for the whole call. Three
// pairwise adds (FADDP) turn the four rows' accumulators into one vector of
// their four sums, in row order, which the epilogue adds bias to, scales
// and stores. When len(dst) is not a multiple of 4, the last block is moved
// back to end at the last row (recomputing up to three rows of the previous
// one, bit-identically); a call with fewer than 4 rows takes them one at a
// time, reduced in the same order. HeadDim is cut into steps of up to four
// vectors and a tail of two and one floats, loaded with FMOVD/FMOVS (which
// zero the other lanes), so no kernel reads past a row. Long heads loop
// over blocks of 16 floats.
//
// Registers of the dot kernels: R0 dst, R1 blocks left, R2 rows left after
// the blocks, R3/R5 x of the first/second term, R4/R6 their rows, R7 bias,
// R8–R11 the four row cursors, R12 x cursor, R13/R14 the terms' first x
// float not held in registers, R15 loop counter, R16/R17 scratch; V0–V7
// accumulators (row r: V(r) even vectors, V(4+r) odd ones), V8–V15 row
// vectors, V16–V19 x vectors, V20 scale, V21–V31 x vectors held.

// Register numbers of the dot kernels (see above).
const (
	dotRowBase  arm64.VReg = 8  // V8–V15: row vectors, two sets of four
	dotXBase    arm64.VReg = 16 // V16–V19: x vectors loaded per use
	dotScale    arm64.VReg = 20
	dotHoldBase arm64.VReg = 21 // V21–V31: x vectors held for the call
	dotHold                = 11
	// dotMaxBlocks is the most 16-float blocks of HeadDim a dot kernel
	// unrolls; longer heads loop.
	dotMaxBlocks = 16
)

// dotTermRegs are the general registers of one dot term.
type dotTermRegs struct{ x, rows, xrest arm64.Reg }

// dotGen emits one dot kernel.
type dotGen struct {
	e     *arm64.Emitter
	d     int
	kind  string // "dotRows", "scoresRow" (rpe_full) or "xl"
	terms []dotTermRegs
	steps []relStep
	loop  bool
	held  []int // per term: the number of leading steps held in registers
	hold  [][]arm64.VReg
}

// neonDotABI is the ABI entry of each kind of dot kernel.
var neonDotABI = map[string]abi.Kernel{"dotRows": abi.DotRows, "scoresRow": abi.ScoresRow, "xl": abi.XLScoresRow}

// dotKernel emits the dot kernel name of the given kind for HeadDim d.
func dotKernel(e *arm64.Emitter, name, kind string, d int) {
	g := &dotGen{e: e, d: d, kind: kind, steps: relSteps(d)}
	g.loop = d/16 > dotMaxBlocks
	k := neonDotABI[kind]
	e.Comment("func %s%s", name, k.Signature())
	switch kind {
	case "dotRows":
		e.Comment("dst[r] = x·rows[r] for r < len(dst); HeadDim %d.", d)
	case "scoresRow":
		e.Comment("dst[j] = (q·k_j + bias[j])·scale for j < len(dst); HeadDim %d.", d)
	case "xl":
		e.Comment("dst[j] = qu·k_j + qv·r_j for j < len(dst); HeadDim %d.", d)
	}
	e.TextFor(name, k)
	e.LoadArg(arm64.R0, e.Arg(k, "dst_base"))
	e.LoadArg(arm64.R1, e.Arg(k, "dst_len"))
	switch kind {
	case "dotRows":
		e.LoadArg(arm64.R3, e.Arg(k, "x_base"))
		e.LoadArg(arm64.R4, e.Arg(k, "rows_base"))
		g.terms = []dotTermRegs{{x: arm64.R3, rows: arm64.R4, xrest: arm64.R13}}
	case "scoresRow":
		e.LoadArg(arm64.R3, e.Arg(k, "q_base"))
		e.LoadArg(arm64.R4, e.Arg(k, "k_base"))
		e.LoadArg(arm64.R7, e.Arg(k, "bias_base"))
		e.LoadArgS(dotScale, e.Arg(k, "scale"))
		e.VDUPLane(dotScale.S4(), dotScale, 0)
		g.terms = []dotTermRegs{{x: arm64.R3, rows: arm64.R4, xrest: arm64.R13}}
	case "xl":
		e.LoadArg(arm64.R3, e.Arg(k, "qu_base"))
		e.LoadArg(arm64.R4, e.Arg(k, "k_base"))
		e.LoadArg(arm64.R5, e.Arg(k, "qv_base"))
		e.LoadArg(arm64.R6, e.Arg(k, "r_base"))
		g.terms = []dotTermRegs{{x: arm64.R3, rows: arm64.R4, xrest: arm64.R13}, {x: arm64.R5, rows: arm64.R6, xrest: arm64.R14}}
	}
	g.holdX()

	done, single, block := e.NewLabel("done"), e.NewLabel("single"), e.NewLabel("block")
	e.CBZ(arm64.R1, done)
	e.AndImm(arm64.R2, arm64.R1, 3)
	e.LsrImm(arm64.R1, arm64.R1, 2)
	e.CBZ(arm64.R1, single)
	e.Comment("Blocks of four rows.")
	e.Label(block)
	g.sweep(4)
	g.reduce(4)
	g.epilogue(4)
	e.SubsImm(arm64.R1, arm64.R1, 1)
	e.BNE(block)
	e.CBZ(arm64.R2, done)
	e.Comment("1..3 rows left: step back 4−R2 rows and run one more block.")
	e.MovImm(arm64.R16, 4)
	e.Sub(arm64.R16, arm64.R16, arm64.R2)
	e.MovImm(arm64.R17, int64(4*d))
	e.Mul(arm64.R17, arm64.R16, arm64.R17)
	for _, t := range g.terms {
		e.Sub(t.rows, t.rows, arm64.R17)
	}
	e.LslImm(arm64.R16, arm64.R16, 2)
	e.Sub(arm64.R0, arm64.R0, arm64.R16)
	if kind == "scoresRow" {
		e.Sub(arm64.R7, arm64.R7, arm64.R16)
	}
	e.MovImm(arm64.R1, 1)
	e.MovImm(arm64.R2, 0)
	e.B(block)
	e.Comment("Fewer than four rows: one at a time.")
	e.Label(single)
	g.sweep(1)
	g.reduce(1)
	g.epilogue(1)
	e.SubsImm(arm64.R2, arm64.R2, 1)
	e.BNE(single)
	e.Label(done)
	e.RET()
	e.End()
}

// holdX loads each term's leading steps into V21.. (up to dotHold
// registers shared by the terms) and points the term's xrest at the first
// float not held.
func (g *dotGen) holdX() {
	e := g.e
	next := dotHoldBase
	budget := dotHold / len(g.terms)
	g.held = make([]int, len(g.terms))
	g.hold = make([][]arm64.VReg, len(g.terms))
	for i, t := range g.terms {
		used, floats := 0, 0
		if !g.loop {
			for _, s := range g.steps {
				if used+s.regs() > budget {
					break
				}
				g.hold[i] = append(g.hold[i], next)
				used += s.regs()
				floats += s.floats()
				next += arm64.VReg(s.regs())
				g.held[i]++
			}
		}
		if g.held[i] > 0 {
			e.Comment("x floats [0, %d) of term %d stay in V%d–V%d.", floats, i, int(g.hold[i][0]), int(next)-1)
			e.Mov(arm64.R12, t.x)
			for k, s := range g.steps[:g.held[i]] {
				loadStep(e, s, arm64.R12, g.hold[i][k])
			}
			e.Mov(t.xrest, arm64.R12)
		} else {
			e.Mov(t.xrest, t.x)
		}
	}
}

// acc is the accumulator of row r for the vectors of the given parity.
func acc(r, parity int) arm64.Vec { return arm64.VReg(r + 4*parity).S4() }

// sweep emits the dot products of rows rows (4 or 1) into the
// accumulators and advances each term's rows pointer past them.
func (g *dotGen) sweep(rows int) {
	e := g.e
	cur := []arm64.Reg{arm64.R8, arm64.R9, arm64.R10, arm64.R11}[:rows]
	for r := range rows {
		for p := range 2 {
			a := acc(r, p)
			e.VEOR(a.R.B16(), a.R.B16(), a.R.B16())
		}
	}
	for i, t := range g.terms {
		// c_r = rows_t + r·HeadDim
		e.Mov(cur[0], t.rows)
		for r := 1; r < rows; r++ {
			e.AddImm(cur[r], cur[r-1], 4*g.d)
		}
		if g.held[i] < len(g.steps) {
			e.Mov(arm64.R12, t.xrest)
		}
		// fmas adds x step s (in x0..) times each row's step s to the
		// accumulators, vector k of the step taking parity k%2:
		//
		//	VLD1.P 16·n(c_r), [T0 … Tn−1]     (FMOVD/FMOVS for a tail)
		//	VFMLA  Tk, Xk, ACC(r, k%2)        for k < n
		fmas := func(s relStep, x0 arm64.VReg) {
			for r := range rows {
				t0 := dotRowBase + arm64.VReg(4*(r%2))
				loadStep(e, s, cur[r], t0)
				for k := range s.regs() {
					e.VFMLA(acc(r, k%2), (x0 + arm64.VReg(k)).S4(), (t0 + arm64.VReg(k)).S4())
				}
			}
		}
		steps := g.steps
		if g.loop {
			// for n := HeadDim/16; n > 0; n-- { one block of four vectors }
			loop := e.NewLabel("dloop")
			e.MovImm(arm64.R15, int64(g.d/16))
			e.Label(loop)
			e.VLD1(arm64.R12, true, arm64.Vecs(dotXBase, 4, 1, arm64.S4)...)
			fmas(relStep{4, 0}, dotXBase)
			e.SubsImm(arm64.R15, arm64.R15, 1)
			e.BNE(loop)
			steps = steps[g.d/16:]
		}
		for k, s := range steps {
			x0 := dotXBase
			if !g.loop && k < g.held[i] {
				x0 = g.hold[i][k]
			} else {
				loadStep(e, s, arm64.R12, x0)
			}
			fmas(s, x0)
		}
		e.Mov(t.rows, cur[rows-1])
	}
}

// reduce adds each row's two accumulators and their lanes: V8 holds the
// four rows' sums (rows = 4) or, in lane 0, the row's sum (rows = 1).
func (g *dotGen) reduce(rows int) {
	e := g.e
	for r := range rows {
		e.FADD(acc(r, 0), acc(r, 0), acc(r, 1))
	}
	v8, v9 := arm64.VReg(8).S4(), arm64.VReg(9).S4()
	if rows == 1 {
		e.FADDP(v8, acc(0, 0), acc(0, 0))
		e.FADDP(v8, v8, v8)
		return
	}
	e.FADDP(v8, acc(0, 0), acc(1, 0))
	e.FADDP(v9, acc(2, 0), acc(3, 0))
	e.FADDP(v8, v8, v9)
}

// epilogue stores the sums in V8 (bias added and scaled for scoresRow) and
// advances dst and bias.
func (g *dotGen) epilogue(rows int) {
	e := g.e
	if rows == 1 {
		if g.kind == "scoresRow" {
			e.LoadS(9, arm64.R7, 4)
			e.FADDS(8, 8, 9)
			e.FMULS(8, 8, dotScale)
		}
		e.StoreS(8, arm64.R0, 4)
		return
	}
	v8, v9 := arm64.VReg(8).S4(), arm64.VReg(9).S4()
	if g.kind == "scoresRow" {
		e.VLD1(arm64.R7, true, v9)
		e.FADD(v8, v8, v9)
		e.FMUL(v8, v8, dotScale.S4())
	}
	e.VST1(arm64.R0, true, v8)
}
