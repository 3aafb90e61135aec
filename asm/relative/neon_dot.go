package arm64

import "fmt"

// Kernels of the relative-attention encodings (docs/internals.md, kernel ABI
// "rpe_full and xl"), for a compile-time HeadDim D:
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

// Kernel symbol names of the relative encodings.
const (
	DotRowsName   = "dotRowsNEON"
	ScoresRowName = "scoresRowNEON"
	AxpyRowsName  = "axpyRowsNEON"
)

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
func loadStep(e *Emitter, s relStep, base Reg, first VReg) {
	switch s.n {
	case -2:
		e.LoadD(first, base, 8)
	case -1:
		e.LoadS(first, base, 4)
	default:
		e.VLD1(base, true, vecs(first, s.n, 1, S4)...)
	}
}

// storeStep stores step s from registers first.. to base, post-incrementing.
func storeStep(e *Emitter, s relStep, base Reg, first VReg) {
	switch s.n {
	case -2:
		e.StoreD(first, base, 8)
	case -1:
		e.StoreS(first, base, 4)
	default:
		e.VST1(base, true, vecs(first, s.n, 1, S4)...)
	}
}

// Register numbers of the dot kernels (see above).
const (
	dotRowBase  VReg = 8  // V8–V15: row vectors, two sets of four
	dotXBase    VReg = 16 // V16–V19: x vectors loaded per use
	dotScale    VReg = 20
	dotHoldBase VReg = 21 // V21–V31: x vectors held for the call
	dotHold          = 11
	// dotMaxBlocks is the most 16-float blocks of HeadDim a dot kernel
	// unrolls; longer heads loop.
	dotMaxBlocks = 16
)

// dotTermRegs are the general registers of one dot term.
type dotTermRegs struct{ x, rows, xrest Reg }

// dotGen emits one dot kernel.
type dotGen struct {
	e     *Emitter
	d     int
	kind  string // "dotRows", "scoresRow" (rpe_full) or "xl"
	terms []dotTermRegs
	steps []relStep
	loop  bool
	held  []int // per term: the number of leading steps held in registers
	hold  [][]VReg
}

// dotKernel emits the dot kernel name of the given kind for HeadDim d.
func dotKernel(e *Emitter, name, kind string, d int) {
	g := &dotGen{e: e, d: d, kind: kind, steps: relSteps(d)}
	g.loop = d/16 > dotMaxBlocks
	switch kind {
	case "dotRows":
		e.Comment("func %s(dst, x, rows []float32)", name)
		e.Comment("dst[r] = x·rows[r] for r < len(dst); HeadDim %d.", d)
		e.Text(name, 72)
	case "scoresRow":
		e.Comment("func %s(dst, q, k, bias []float32, scale float32)", name)
		e.Comment("dst[j] = (q·k_j + bias[j])·scale for j < len(dst); HeadDim %d.", d)
		e.Text(name, 100)
	case "xl":
		e.Comment("func %s(dst, qu, k, qv, r []float32)", name)
		e.Comment("dst[j] = qu·k_j + qv·r_j for j < len(dst); HeadDim %d.", d)
		e.Text(name, 120)
	}
	e.LoadArg(r0, Arg{"dst_base", 0})
	e.LoadArg(r1, Arg{"dst_len", 8})
	switch kind {
	case "dotRows":
		e.LoadArg(r3, Arg{"x_base", 24})
		e.LoadArg(r4, Arg{"rows_base", 48})
		g.terms = []dotTermRegs{{r3, r4, r13}}
	case "scoresRow":
		e.LoadArg(r3, Arg{"q_base", 24})
		e.LoadArg(r4, Arg{"k_base", 48})
		e.LoadArg(r7, Arg{"bias_base", 72})
		e.LoadArgS(dotScale, Arg{"scale", 96})
		e.VDUPLane(dotScale.S4(), dotScale, 0)
		g.terms = []dotTermRegs{{r3, r4, r13}}
	case "xl":
		e.LoadArg(r3, Arg{"qu_base", 24})
		e.LoadArg(r4, Arg{"k_base", 48})
		e.LoadArg(r5, Arg{"qv_base", 72})
		e.LoadArg(r6, Arg{"r_base", 96})
		g.terms = []dotTermRegs{{r3, r4, r13}, {r5, r6, r14}}
	}
	g.holdX()

	done, single, block := e.NewLabel("done"), e.NewLabel("single"), e.NewLabel("block")
	e.CBZ(r1, done)
	e.AndImm(r2, r1, 3)
	e.LsrImm(r1, r1, 2)
	e.CBZ(r1, single)
	e.Comment("Blocks of four rows.")
	e.Label(block)
	g.sweep(4)
	g.reduce(4)
	g.epilogue(4)
	e.SubsImm(r1, r1, 1)
	e.BNE(block)
	e.CBZ(r2, done)
	e.Comment("1..3 rows left: step back 4−R2 rows and run one more block.")
	e.MovImm(r16, 4)
	e.Sub(r16, r16, r2)
	e.MovImm(r17, int64(4*d))
	e.Mul(r17, r16, r17)
	for _, t := range g.terms {
		e.Sub(t.rows, t.rows, r17)
	}
	e.LslImm(r16, r16, 2)
	e.Sub(r0, r0, r16)
	if kind == "scoresRow" {
		e.Sub(r7, r7, r16)
	}
	e.MovImm(r1, 1)
	e.MovImm(r2, 0)
	e.B(block)
	e.Comment("Fewer than four rows: one at a time.")
	e.Label(single)
	g.sweep(1)
	g.reduce(1)
	g.epilogue(1)
	e.SubsImm(r2, r2, 1)
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
	g.hold = make([][]VReg, len(g.terms))
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
				next += VReg(s.regs())
				g.held[i]++
			}
		}
		if g.held[i] > 0 {
			e.Comment("x floats [0, %d) of term %d stay in V%d–V%d.", floats, i, int(g.hold[i][0]), int(next)-1)
			e.Mov(r12, t.x)
			for k, s := range g.steps[:g.held[i]] {
				loadStep(e, s, r12, g.hold[i][k])
			}
			e.Mov(t.xrest, r12)
		} else {
			e.Mov(t.xrest, t.x)
		}
	}
}

// acc is the accumulator of row r for the vectors of the given parity.
func acc(r, parity int) Vec { return VReg(r + 4*parity).S4() }

// sweep emits the dot products of rows rows (4 or 1) into the
// accumulators and advances each term's rows pointer past them.
func (g *dotGen) sweep(rows int) {
	e := g.e
	cur := []Reg{r8, r9, r10, r11}[:rows]
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
			e.Mov(r12, t.xrest)
		}
		// fmas adds x step s (in x0..) times each row's step s to the
		// accumulators, vector k of the step taking parity k%2:
		//
		//	VLD1.P 16·n(c_r), [T0 … Tn−1]     (FMOVD/FMOVS for a tail)
		//	VFMLA  Tk, Xk, ACC(r, k%2)        for k < n
		fmas := func(s relStep, x0 VReg) {
			for r := range rows {
				t0 := dotRowBase + VReg(4*(r%2))
				loadStep(e, s, cur[r], t0)
				for k := range s.regs() {
					e.VFMLA(acc(r, k%2), (x0 + VReg(k)).S4(), (t0 + VReg(k)).S4())
				}
			}
		}
		steps := g.steps
		if g.loop {
			// for n := HeadDim/16; n > 0; n-- { one block of four vectors }
			loop := e.NewLabel("dloop")
			e.MovImm(r15, int64(g.d/16))
			e.Label(loop)
			e.VLD1(r12, true, vecs(dotXBase, 4, 1, S4)...)
			fmas(relStep{4, 0}, dotXBase)
			e.SubsImm(r15, r15, 1)
			e.BNE(loop)
			steps = steps[g.d/16:]
		}
		for k, s := range steps {
			x0 := dotXBase
			if !g.loop && k < g.held[i] {
				x0 = g.hold[i][k]
			} else {
				loadStep(e, s, r12, x0)
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
	v8, v9 := VReg(8).S4(), VReg(9).S4()
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
			e.LoadS(9, r7, 4)
			e.FADDS(8, 8, 9)
			e.FMULS(8, 8, dotScale)
		}
		e.StoreS(8, r0, 4)
		return
	}
	v8, v9 := VReg(8).S4(), VReg(9).S4()
	if g.kind == "scoresRow" {
		e.VLD1(r7, true, v9)
		e.FADD(v8, v8, v9)
		e.FMUL(v8, v8, dotScale.S4())
	}
	e.VST1(r0, true, v8)
}

// Registers of axpyRows: R0 dst, R1 w, R2 rows, R3 len(w), R4 w cursor, R5
// row cursor, R6 iterations left, R7 single rows left, R8 dst cursor, R9
// chunks left, R10/R11 the rows and dst of the current chunk; V0–V23
// accumulators (set s, register i: V(s·P+i) for a chunk of P registers),
// V24–V27 row vectors, V28 the broadcast weight.
const (
	axpyMaxRegs       = 24
	axpyRow      VReg = 24
	axpyW        VReg = 28
	axpyMaxBlock      = 6 // 16-float blocks per chunk: 24 registers
)

// axpyRows emits axpyRows(dst, w, rows []float32): dst[x] += Σ_r w[r]·rows[r·d+x].
// HeadDim is cut into chunks of at most 24 registers, each accumulated over
// every row and then stored; S sets of accumulators take S rows per
// iteration (S a power of two giving at least 8 multiply-add chains when
// the registers allow). Up to four chunks are straight-line code; more loop
// over full chunks of 96 floats.
func axpyRows(e *Emitter, name string, d int) {
	e.Comment("func %s(dst, w, rows []float32)", name)
	e.Comment("dst[x] += Σ_r w[r]·rows[r·%d+x] for x < %d, r < len(w).", d, d)
	e.Text(name, 72)
	e.LoadArg(r0, Arg{"dst_base", 0})
	e.LoadArg(r1, Arg{"w_base", 24})
	e.LoadArg(r3, Arg{"w_len", 32})
	e.LoadArg(r2, Arg{"rows_base", 48})
	steps := relSteps(d)
	chunks := axpyChunks(steps)
	// at is the float offset of HeadDim that R10 and R11 point at.
	at := 0
	chunkAt := func(ch []relStep) {
		if off := 4 * (ch[0].off - at); off > 0 {
			e.AddImm(r11, r11, off)
			e.AddImm(r10, r10, off)
		}
		at = ch[0].off
		axpyChunk(e, ch, d)
	}
	e.Mov(r11, r0)
	e.Mov(r10, r2)
	if len(chunks) <= 4 {
		for _, ch := range chunks {
			chunkAt(ch)
		}
	} else {
		full := d / 16 / axpyMaxBlock
		e.Comment("%d chunks of %d floats, then the rest.", full, 16*axpyMaxBlock)
		e.MovImm(r9, int64(full))
		loop := e.NewLabel("chunk")
		e.Label(loop)
		axpyChunk(e, steps[:axpyMaxBlock], d)
		e.AddImm(r11, r11, 64*axpyMaxBlock)
		e.AddImm(r10, r10, 64*axpyMaxBlock)
		e.SubsImm(r9, r9, 1)
		e.BNE(loop)
		at = steps[full*axpyMaxBlock].off
		for _, ch := range axpyChunks(steps[full*axpyMaxBlock:]) {
			chunkAt(ch)
		}
	}
	e.RET()
	e.End()
}

// axpyChunks groups steps into chunks of at most axpyMaxRegs registers.
func axpyChunks(steps []relStep) [][]relStep {
	var out [][]relStep
	used := axpyMaxRegs
	for _, s := range steps {
		if used+s.regs() > axpyMaxRegs {
			out = append(out, nil)
			used = 0
		}
		out[len(out)-1] = append(out[len(out)-1], s)
		used += s.regs()
	}
	return out
}

// axpySets is the number of accumulator sets for a chunk of p registers.
func axpySets(p int) int {
	s := 1
	for s*p < 8 && 2*s*p <= axpyMaxRegs && s < 4 {
		s *= 2
	}
	return s
}

// axpyChunk emits the chunk ch (its dst at R11, its rows at R10, HeadDim d
// floats apart), leaving R10 and R11 unchanged.
func axpyChunk(e *Emitter, ch []relStep, d int) {
	p := 0
	for _, s := range ch {
		p += s.regs()
	}
	S := axpySets(p)
	bytes := 4 * (ch[len(ch)-1].off + ch[len(ch)-1].floats() - ch[0].off)
	e.Comment("Floats [%d, %d): %d registers, %d set(s) of accumulators.", ch[0].off, ch[0].off+bytes/4, p, S)
	// Set 0 starts from dst, the others from zero.
	e.Mov(r8, r11)
	reg := VReg(0)
	for _, s := range ch {
		loadStep(e, s, r8, reg)
		reg += VReg(s.regs())
	}
	for v := VReg(p); v < VReg(S*p); v++ {
		e.VEOR(v.B16(), v.B16(), v.B16())
	}
	e.Mov(r4, r1)
	e.Mov(r5, r10)
	// row adds w[r]·rows[r] (cursors R4, R5) into accumulator set set:
	//
	//	FMOVS.P 4(R4), F28; VDUP V28.S[0], V28.S4
	//	VLD1.P  16·n(R5), [V24 … ]; VFMLA V24, V28, ACC …   for every step
	row := func(set int) {
		e.LoadS(axpyW, r4, 4)
		e.VDUPLane(axpyW.S4(), axpyW, 0)
		reg := VReg(set * p)
		for _, s := range ch {
			loadStep(e, s, r5, axpyRow)
			for k := range s.regs() {
				e.VFMLA((reg + VReg(k)).S4(), axpyW.S4(), (axpyRow + VReg(k)).S4())
			}
			reg += VReg(s.regs())
		}
		if gap := 4*d - bytes; gap > 0 {
			e.AddImm(r5, r5, gap)
		}
	}
	end := e.NewLabel("rows_end")
	if S > 1 {
		sh := map[int]int{2: 1, 4: 2}[S]
		e.LsrImm(r6, r3, sh)
		e.AndImm(r7, r3, uint64(S-1))
	} else {
		e.Mov(r6, r3)
	}
	rest := e.NewLabel("rows_rest")
	e.CBZ(r6, rest)
	loop := e.NewLabel("rows")
	e.Label(loop)
	for s := range S {
		row(s)
	}
	e.SubsImm(r6, r6, 1)
	e.BNE(loop)
	e.Label(rest)
	if S > 1 {
		e.CBZ(r7, end)
		one := e.NewLabel("row")
		e.Label(one)
		row(0)
		e.SubsImm(r7, r7, 1)
		e.BNE(one)
	}
	e.Label(end)
	for s := 1; s < S; s++ {
		for i := range p {
			a := VReg(i).S4()
			e.FADD(a, a, VReg(s*p+i).S4())
		}
	}
	e.Mov(r8, r11)
	reg = 0
	for _, s := range ch {
		storeStep(e, s, r8, reg)
		reg += VReg(s.regs())
	}
}

// checkRelDims validates HeadDim for the rpe_full and xl kernels: row
// strides are ADD immediates.
func checkRelDims(p Params) error {
	if p.HeadDim < 1 || 4*p.HeadDim >= 1<<24 {
		return fmt.Errorf("arm64: head_dim %d out of range for %s", p.HeadDim, p.Encoding)
	}
	return nil
}
