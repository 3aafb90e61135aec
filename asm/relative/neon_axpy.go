package relative

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// Registers of axpyRows: R0 dst, R1 w, R2 rows, R3 len(w), R4 w cursor, R5
// row cursor, R6 iterations left, R7 single rows left, R8 dst cursor, R9
// chunks left, R10/R11 the rows and dst of the current chunk; V0–V23
// accumulators (set s, register i: V(s·P+i) for a chunk of P registers),
// V24–V27 row vectors, V28 the broadcast weight.
const (
	axpyMaxRegs             = 24
	axpyRow      arm64.VReg = 24
	axpyW        arm64.VReg = 28
	axpyMaxBlock            = 6 // 16-float blocks per chunk: 24 registers
)

// axpyRows emits axpyRows(dst, w, rows []float32): dst[x] += Σ_r w[r]·rows[r·d+x].
// HeadDim is cut into chunks of at most 24 registers, each accumulated over
// every row and then stored; S sets of accumulators take S rows per
// iteration (S a power of two giving at least 8 multiply-add chains when
// the registers allow). Up to four chunks are straight-line code; more loop
// over full chunks of 96 floats.
func axpyRows(e *arm64.Emitter, name string, d int) {
	e.Comment("func %s%s", name, abi.AxpyRows.Signature())
	e.Comment("dst[x] += Σ_r w[r]·rows[r·%d+x] for x < %d, r < len(w).", d, d)
	e.TextFor(name, abi.AxpyRows)
	e.LoadArg(arm64.R0, e.Arg(abi.AxpyRows, "dst_base"))
	e.LoadArg(arm64.R1, e.Arg(abi.AxpyRows, "w_base"))
	e.LoadArg(arm64.R3, e.Arg(abi.AxpyRows, "w_len"))
	e.LoadArg(arm64.R2, e.Arg(abi.AxpyRows, "rows_base"))
	steps := relSteps(d)
	chunks := axpyChunks(steps)
	// at is the float offset of HeadDim that R10 and R11 point at.
	at := 0
	chunkAt := func(ch []relStep) {
		if off := 4 * (ch[0].off - at); off > 0 {
			e.AddImm(arm64.R11, arm64.R11, off)
			e.AddImm(arm64.R10, arm64.R10, off)
		}
		at = ch[0].off
		axpyChunk(e, ch, d)
	}
	e.Mov(arm64.R11, arm64.R0)
	e.Mov(arm64.R10, arm64.R2)
	if len(chunks) <= 4 {
		for _, ch := range chunks {
			chunkAt(ch)
		}
	} else {
		full := d / 16 / axpyMaxBlock
		e.Comment("%d chunks of %d floats, then the rest.", full, 16*axpyMaxBlock)
		e.MovImm(arm64.R9, int64(full))
		loop := e.NewLabel("chunk")
		e.Label(loop)
		axpyChunk(e, steps[:axpyMaxBlock], d)
		e.AddImm(arm64.R11, arm64.R11, 64*axpyMaxBlock)
		e.AddImm(arm64.R10, arm64.R10, 64*axpyMaxBlock)
		e.SubsImm(arm64.R9, arm64.R9, 1)
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
func axpyChunk(e *arm64.Emitter, ch []relStep, d int) {
	p := 0
	for _, s := range ch {
		p += s.regs()
	}
	S := axpySets(p)
	bytes := 4 * (ch[len(ch)-1].off + ch[len(ch)-1].floats() - ch[0].off)
	e.Comment("Floats [%d, %d): %d registers, %d set(s) of accumulators.", ch[0].off, ch[0].off+bytes/4, p, S)
	// Set 0 starts from dst, the others from zero.
	e.Mov(arm64.R8, arm64.R11)
	reg := arm64.VReg(0)
	for _, s := range ch {
		loadStep(e, s, arm64.R8, reg)
		reg += arm64.VReg(s.regs())
	}
	for v := arm64.VReg(p); v < arm64.VReg(S*p); v++ {
		e.VEOR(v.B16(), v.B16(), v.B16())
	}
	e.Mov(arm64.R4, arm64.R1)
	e.Mov(arm64.R5, arm64.R10)
	// row adds w[r]·rows[r] (cursors R4, R5) into accumulator set set:
	//
	//	FMOVS.P 4(R4), F28; VDUP V28.S[0], V28.S4
	//	VLD1.P  16·n(R5), [V24 … ]; VFMLA V24, V28, ACC …   for every step
	row := func(set int) {
		e.LoadS(axpyW, arm64.R4, 4)
		e.VDUPLane(axpyW.S4(), axpyW, 0)
		reg := arm64.VReg(set * p)
		for _, s := range ch {
			loadStep(e, s, arm64.R5, axpyRow)
			for k := range s.regs() {
				e.VFMLA((reg + arm64.VReg(k)).S4(), axpyW.S4(), (axpyRow + arm64.VReg(k)).S4())
			}
			reg += arm64.VReg(s.regs())
		}
		if gap := 4*d - bytes; gap > 0 {
			e.AddImm(arm64.R5, arm64.R5, gap)
		}
	}
	end := e.NewLabel("rows_end")
	if S > 1 {
		sh := map[int]int{2: 1, 4: 2}[S]
		e.LsrImm(arm64.R6, arm64.R3, sh)
		e.AndImm(arm64.R7, arm64.R3, uint64(S-1))
	} else {
		e.Mov(arm64.R6, arm64.R3)
	}
	rest := e.NewLabel("rows_rest")
	e.CBZ(arm64.R6, rest)
	loop := e.NewLabel("rows")
	e.Label(loop)
	for s := range S {
		row(s)
	}
	e.SubsImm(arm64.R6, arm64.R6, 1)
	e.BNE(loop)
	e.Label(rest)
	if S > 1 {
		e.CBZ(arm64.R7, end)
		one := e.NewLabel("row")
		e.Label(one)
		row(0)
		e.SubsImm(arm64.R7, arm64.R7, 1)
		e.BNE(one)
	}
	e.Label(end)
	for s := 1; s < S; s++ {
		for i := range p {
			a := arm64.VReg(i).S4()
			e.FADD(a, a, arm64.VReg(s*p+i).S4())
		}
	}
	e.Mov(arm64.R8, arm64.R11)
	reg = 0
	for _, s := range ch {
		storeStep(e, s, arm64.R8, reg)
		reg += arm64.VReg(s.regs())
	}
}
