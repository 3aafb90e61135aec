package attention

import (
	"strconv"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// NEON returns the arm64 scoresKV and valuesKV for HeadDim d (symbols
// scoresKVNEON, valuesKVNEON). Like the AVX kernels they walk the keys in
// memory order, each key's KV heads one after another, and keep the head's
// row of k (v) in vector registers, as far as they reach, for every query
// row of that head; HeadDim is unrolled at generation time.
//
// HeadDim is cut into steps (neonSteps): blocks of four vectors, one step of
// 1..3 vectors, then a tail of two and of one float, loaded with
// FMOVD/FMOVS (which zero the other lanes) and stored the same way, so no
// kernel touches a float outside its rows.
//
// General registers (both kernels): R0 s (acc), R1 q (p), R2 k (v) at the
// current key, R3 keys left, R4 nb, R5 groups, R6 grp, R7 kStride (vStride)
// and R8 sStride (pStride) in bytes (the 16-bit kernels: k and v rows of
// 2-byte elements), R9 the q (acc) row cursor, R10 the s
// (p) cursor of the row, R11 the key's row of the current KV head, R12–R14
// the query, group and head counters, R15 the cursor of the streamed part
// of the key's row, R16 its start, R17 the weight's bits (valuesKV), R19
// the acc cursor within a row (valuesKV).
//
// scoresKV vector registers: V0–V3 the four accumulators (vector i of the
// row adds into V(i mod 4); the first product of each is an FMUL), V4–V7 q
// vectors, V8–V31 the key's row (up to 24 vectors, 96 floats) or, for
// longer heads, V12–V31 its first 20 vectors and V8–V11 the rest streamed
// from memory per query row. valuesKV: V0–V3 acc vectors, V4 the broadcast
// weight, V5–V31 the value row (27 vectors, 108 floats) or V9–V31 its
// first 23 vectors and V5–V8 the rest streamed.
func NEON(d int) []arm64.Kernel {
	mk := arm64.Symbol(abi.MaxRow)
	return append(neonKV(d, ""), arm64.Kernel{ABI: abi.MaxRow, Name: mk, Doc: "is the NEON kernels.maxRow: m[0] = max(m[0], row...), NaN if any is NaN.",
		Emit: func(e *arm64.Emitter) { maxRowNEON(e, mk) }})
}

// NEONStorage16 returns scoresKV16 and valuesKV16 (abi.ScoresKV16,
// abi.ValuesKV16) for HeadDim d over keys and values stored as storage
// ("f16" or "bf16"): NEON's kernels with every step of a key (value) row
// loaded as 16-bit elements into the low halves of its registers and
// widened there (Emitter.Widen16), so a decode step reads the 16-bit cache
// where it is.
func NEONStorage16(d int, storage string) []arm64.Kernel { return neonKV(d, kvElems(storage)) }

// neonKV returns scoresKV and valuesKV over keys and values stored as st.
func neonKV(d int, st kvElems) []arm64.Kernel {
	ka, va, what := abi.ScoresKV, abi.ValuesKV, ""
	if st != "" {
		ka, va, what = abi.ScoresKV16, abi.ValuesKV16, ", keys and values stored as "+string(st)
	}
	sk, vk := arm64.Symbol(ka), arm64.Symbol(va)
	return []arm64.Kernel{
		{ABI: ka, Name: sk, Doc: "is the NEON kernels." + ka.Field + " for HeadDim " + strconv.Itoa(d) + what + ": q·k of each block row and key.",
			Emit: func(e *arm64.Emitter) { scoresKVNEON(e, sk, d, st) }},
		{ABI: va, Name: vk, Doc: "is the NEON kernels." + va.Field + " for HeadDim " + strconv.Itoa(d) + what + ": acc += p·v for every weight not +0.",
			Emit: func(e *arm64.Emitter) { valuesKVNEON(e, vk, d, st) }},
	}
}

// kvElems is the storage of the key and value rows the kernels read: ""
// for float32, "f16" or "bf16".
type kvElems string

// size is the bytes of one element.
func (st kvElems) size() int {
	if st == "" {
		return 4
	}
	return 2
}

// loadStep loads step s of a key or value row from base into registers
// first.. as float32, post-incrementing base past it when post is set.
// 16-bit steps load n·4 elements into the low halves (VLD1 of H4
// registers), two elements with FMOVS or one into a zeroed register, and
// are widened in place: the lanes past a tail stay 0.
func (st kvElems) loadStep(e *arm64.Emitter, s neonStep, base arm64.Reg, first arm64.VReg, post bool) {
	if st == "" {
		loadStep(e, s, base, first, post)
		return
	}
	inc := 0
	if post {
		inc = 2 * s.floats()
	}
	switch s.n {
	case -2:
		e.LoadS(first, base, inc)
	case -1:
		e.VEOR(first.B16(), first.B16(), first.B16())
		e.LoadH(first, base, inc)
	default:
		e.VLD1(base, post, arm64.Vecs(first, s.n, 1, arm64.H4)...)
	}
	for r := range s.regs() {
		e.Widen16(string(st), first+arm64.VReg(r))
	}
}

// neonStep is one step of a sweep over HeadDim: n = 1..4 vectors of four
// floats, or n = −2, −1 a tail of two or one float; off is its first float.
type neonStep struct{ n, off int }

// regs is the number of vector registers the step occupies.
func (s neonStep) regs() int { return max(s.n, 1) }

// floats is the number of floats the step covers.
func (s neonStep) floats() int {
	if s.n < 0 {
		return -s.n
	}
	return 4 * s.n
}

// neonSteps cuts d floats into steps: blocks of four vectors, one step of
// 1..3 vectors, then tails of two and one float.
func neonSteps(d int) []neonStep {
	var out []neonStep
	off := 0
	add := func(n int) {
		s := neonStep{n, off}
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

// loadStep loads step s from base into registers first.., post-incrementing
// base past it when post is set: VLD1 for vectors, FMOVD/FMOVS for tails.
func loadStep(e *arm64.Emitter, s neonStep, base arm64.Reg, first arm64.VReg, post bool) {
	inc := 0 // the post-increment of a tail: its bytes, or 0
	if post && s.n < 0 {
		inc = 4 * s.floats()
	}
	switch s.n {
	case -2:
		e.LoadD(first, base, inc)
	case -1:
		e.LoadS(first, base, inc)
	default:
		e.VLD1(base, post, arm64.Vecs(first, s.n, 1, arm64.S4)...)
	}
}

// storeStep stores step s from registers first.. to base, post-incrementing.
func storeStep(e *arm64.Emitter, s neonStep, base arm64.Reg, first arm64.VReg) {
	switch s.n {
	case -2:
		e.StoreD(first, base, 8)
	case -1:
		e.StoreS(first, base, 4)
	default:
		e.VST1(base, true, arm64.Vecs(first, s.n, 1, arm64.S4)...)
	}
}

// rowPlan is where the steps of a key's (value's) row live: the first held
// steps in registers from hold[i], the others loaded per query row into
// the registers from stream.
type rowPlan struct {
	steps  []neonStep
	held   int
	hold   []arm64.VReg
	stream arm64.VReg
}

// planRow places the steps of a row of d floats: all of them in registers
// from all on when they fit below V32, otherwise as many leading steps as
// fit from part on, the rest streamed through the four registers below
// part.
func planRow(d int, all, part arm64.VReg) rowPlan {
	p := rowPlan{steps: neonSteps(d)}
	regs := 0
	for _, s := range p.steps {
		regs += s.regs()
	}
	first := all
	if regs > int(32-all) {
		first, p.stream = part, part-4
	}
	next := first
	for _, s := range p.steps {
		if int(next)+s.regs() > 32 {
			break
		}
		p.hold = append(p.hold, next)
		next += arm64.VReg(s.regs())
		p.held++
	}
	return p
}

// loadHeld loads the held steps of the row at cur, stored as st
// (post-incrementing cur, which then points at the first streamed element).
func (p rowPlan) loadHeld(e *arm64.Emitter, cur arm64.Reg, st kvElems) {
	for i, s := range p.steps[:p.held] {
		st.loadStep(e, s, cur, p.hold[i], true)
	}
}

// heldFloats is the number of floats of the row held in registers.
func (p rowPlan) heldFloats() int {
	n := 0
	for _, s := range p.steps[:p.held] {
		n += s.floats()
	}
	return n
}

// regsHeld is the number of registers the held steps occupy.
func (p rowPlan) regsHeld() int {
	n := 0
	for _, s := range p.steps[:p.held] {
		n += s.regs()
	}
	return n
}

// comment describes the plan in the assembly.
func (p rowPlan) comment(e *arm64.Emitter, what string, d int) {
	last := int(p.hold[0]) + p.regsHeld() - 1
	if p.held == len(p.steps) {
		e.Comment("The %s row's %d floats stay in V%d–V%d for every query row of its head.", what, d, int(p.hold[0]), last)
		return
	}
	e.Comment("The %s row's floats [0, %d) stay in V%d–V%d for every query row of its head;", what, p.heldFloats(), int(p.hold[0]), last)
	e.Comment("[%d, %d) are loaded per query row into V%d–V%d.", p.heldFloats(), d, int(p.stream), int(p.stream)+3)
}

// kvLoops emits the loops the two kernels share, once their arguments are
// in R0–R8, and closes the TEXT block: for each key (R3 counting down)
// perKey points the row cursors R9, R10 at block row 0; for each query of
// the block (R12) and each KV group (R13) the group's row at R11 has its
// held part loaded (R16 then points at the streamed part), and head runs
// for each of the grp block rows of the group (R14), advancing R9 and R10
// to the next row; afterKey moves R0–R2 to the next key. A zero count
// returns at once, so every loop runs at least once.
func kvLoops(e *arm64.Emitter, d int, plan rowPlan, st kvElems, perKey, head, afterKey func()) {
	done := e.NewLabel("kv_done")
	for _, r := range []arm64.Reg{arm64.R3, arm64.R4, arm64.R5, arm64.R6} {
		e.CBZ(r, done) // nothing to do: the loops below run at least once each
	}
	keyL, queryL, groupL, headL := e.NewLabel("kv_key"), e.NewLabel("kv_query"), e.NewLabel("kv_group"), e.NewLabel("kv_head")
	e.Label(keyL)
	perKey()
	e.Mov(arm64.R12, arm64.R4)
	e.Label(queryL)
	e.Mov(arm64.R11, arm64.R2) // KV head g0 of this key
	e.Mov(arm64.R13, arm64.R5)
	e.Label(groupL)
	e.Mov(arm64.R16, arm64.R11)
	plan.loadHeld(e, arm64.R16, st) // R16: the row's first streamed element
	e.Mov(arm64.R14, arm64.R6)
	e.Label(headL)
	head()
	e.SubsImm(arm64.R14, arm64.R14, 1)
	e.BNE(headL)
	e.AddImm(arm64.R11, arm64.R11, st.size()*d) // the next KV head of the key
	e.SubsImm(arm64.R13, arm64.R13, 1)
	e.BNE(groupL)
	e.SubsImm(arm64.R12, arm64.R12, 1)
	e.BNE(queryL)
	afterKey()
	e.SubsImm(arm64.R3, arm64.R3, 1)
	e.BNE(keyL)
	e.Label(done)
	e.RET()
	e.End()
}

// loadKVArgs loads the arguments of scoresKV or valuesKV into R0–R8 (the
// strides scaled to bytes, rowStride's elements st.size() bytes): the
// slices out, in and row to R0, R1 and R2, the counts to R3–R6, the
// strides rowStride and outStride to R7 and R8.
func loadKVArgs(e *arm64.Emitter, k abi.Kernel, st kvElems, out, in, row, rowStride, outStride string) {
	e.LoadArg(arm64.R0, e.Arg(k, out+"_base"))
	e.LoadArg(arm64.R1, e.Arg(k, in+"_base"))
	e.LoadArg(arm64.R2, e.Arg(k, row+"_base"))
	e.LoadArg(arm64.R3, e.Arg(k, "nk"))
	e.LoadArg(arm64.R4, e.Arg(k, "nb"))
	e.LoadArg(arm64.R5, e.Arg(k, "groups"))
	e.LoadArg(arm64.R6, e.Arg(k, "grp"))
	e.LoadArg(arm64.R7, e.Arg(k, rowStride))
	e.LslImm(arm64.R7, arm64.R7, st.size()/2)
	e.LoadArg(arm64.R8, e.Arg(k, outStride))
	e.LslImm(arm64.R8, arm64.R8, 2)
}

// scoresKVNEON emits scoresKV(s, q, k, nk, nb, groups, grp, kStride,
// sStride) for HeadDim d: s[r·sStride + j] = q_r·k_j(gi(r)), the rows r in
// order (q's rows are consecutive, so R9 walks them all once per key), the
// row's vectors multiplied into four accumulators, added as (V0+V1)+(V2+V3)
// and then across lanes (FADDP twice). The keys are stored as st.
func scoresKVNEON(e *arm64.Emitter, name string, d int, st kvElems) {
	k := abi.ScoresKV
	if st != "" {
		k = abi.ScoresKV16
	}
	plan := planRow(d, 8, 12)
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("s[r·sStride + j] = q[r·%d:]·k[j·kStride + gi(r)·%d:] for j < nk, r < nb·groups·grp.", d, d)
	plan.comment(e, "key", d)
	e.TextFor(name, k)
	loadKVArgs(e, k, st, "s", "q", "k", "kStride", "sStride")
	nacc := 0 // accumulators in use: one per vector of the row, at most 4
	for _, s := range plan.steps {
		nacc += s.regs()
	}
	nacc = min(nacc, 4)
	acc := func(i int) arm64.Vec { return arm64.VReg(i % 4).S4() }
	kvLoops(e, d, plan, st, func() {
		e.Mov(arm64.R9, arm64.R1)  // q's first row
		e.Mov(arm64.R10, arm64.R0) // s[j] of row 0
	}, func() {
		if plan.held < len(plan.steps) {
			e.Mov(arm64.R15, arm64.R16)
		}
		vec := 0 // vectors of the row done
		for i, s := range plan.steps {
			loadStep(e, s, arm64.R9, 4, true)
			kv := plan.stream
			if i < plan.held {
				kv = plan.hold[i]
			} else {
				st.loadStep(e, s, arm64.R15, kv, true)
			}
			for r := range s.regs() {
				q, kr := arm64.VReg(4+r).S4(), (kv + arm64.VReg(r)).S4()
				if vec < 4 {
					e.FMUL(acc(vec), q, kr) // the accumulator's first product
				} else {
					e.VFMLA(acc(vec), q, kr)
				}
				vec++
			}
		}
		switch nacc {
		case 2:
			e.FADD(acc(0), acc(0), acc(1))
		case 3:
			e.FADD(acc(0), acc(0), acc(1))
			e.FADD(acc(0), acc(0), acc(2))
		case 4:
			e.FADD(acc(0), acc(0), acc(1))
			e.FADD(acc(2), acc(2), acc(3))
			e.FADD(acc(0), acc(0), acc(2))
		}
		e.FADDP(acc(0), acc(0), acc(0))
		e.FADDP(acc(0), acc(0), acc(0)) // lane 0: the row's dot product
		e.StoreS(0, arm64.R10, 0)
		e.Add(arm64.R10, arm64.R10, arm64.R8) // s of the next row
	}, func() {
		e.Add(arm64.R2, arm64.R2, arm64.R7) // the next key
		e.AddImm(arm64.R0, arm64.R0, 4)     // s[j+1]
	})
}

// valuesKVNEON emits valuesKV(acc, p, v, alpha, nk, nb, groups, grp,
// vStride, pStride) for HeadDim d: first every block row r is rescaled,
// acc_r *= alpha[r]; then, for each key and block row r whose weight
// w = p[r·pStride + j] has bits other than zero (+0 skips the row, so a NaN
// of a padding key's v never reaches it), acc_r += w·v_j(gi(r)), one fused
// multiply-add per lane, the row loaded and stored step by step. The
// values are stored as st.
func valuesKVNEON(e *arm64.Emitter, name string, d int, st kvElems) {
	k := abi.ValuesKV
	if st != "" {
		k = abi.ValuesKV16
	}
	plan := planRow(d, 5, 9)
	e.Comment("func %s%s", name, k.Signature())
	e.Comment("acc[r·%d + x] = alpha[r]·acc[r·%d + x] + Σ p[r·pStride + j]·v[j·vStride + gi(r)·%d + x] over j < nk with p ≠ +0, r < nb·groups·grp.", d, d, d)
	plan.comment(e, "value", d)
	e.TextFor(name, k)
	loadKVArgs(e, k, st, "acc", "p", "v", "vStride", "pStride")
	w := arm64.VReg(4).S4()
	// First every row of the block: acc[r] *= alpha[r] (R12 rows, R9 the
	// acc cursor, R10 alpha's, R17 its bits broadcast to V4).
	e.LoadArg(arm64.R10, e.Arg(k, "alpha_base"))
	e.Mul(arm64.R12, arm64.R4, arm64.R5)
	e.Mul(arm64.R12, arm64.R12, arm64.R6)
	e.Mov(arm64.R9, arm64.R0)
	rescale, rescaled := e.NewLabel("kv_rescale"), e.NewLabel("kv_rescaled")
	e.CBZ(arm64.R12, rescaled)
	e.Label(rescale)
	e.LoadW32Post(arm64.R17, arm64.R10)
	e.VDUPR(w, arm64.R17)
	for _, st := range plan.steps {
		loadStep(e, st, arm64.R9, 0, false)
		for r := range st.regs() {
			e.FMUL(arm64.VReg(r).S4(), arm64.VReg(r).S4(), w)
		}
		storeStep(e, st, arm64.R9, 0) // post-increments R9
	}
	e.SubsImm(arm64.R12, arm64.R12, 1)
	e.BNE(rescale)
	e.Label(rescaled)
	kvLoops(e, d, plan, st, func() {
		e.Mov(arm64.R9, arm64.R0)  // acc's first row
		e.Mov(arm64.R10, arm64.R1) // p[j] of row 0
	}, func() {
		skip := e.NewLabel("kv_zero")
		e.LoadWU(arm64.R17, arm64.R10)
		e.CBZ(arm64.R17, skip) // w = +0: the row does not meet this key
		e.VDUPR(w, arm64.R17)
		e.Mov(arm64.R19, arm64.R9)
		if plan.held < len(plan.steps) {
			e.Mov(arm64.R15, arm64.R16)
		}
		for i, s := range plan.steps {
			loadStep(e, s, arm64.R19, 0, false)
			vv := plan.stream
			if i < plan.held {
				vv = plan.hold[i]
			} else {
				st.loadStep(e, s, arm64.R15, vv, true)
			}
			for r := range s.regs() {
				e.VFMLA(arm64.VReg(r).S4(), w, (vv + arm64.VReg(r)).S4())
			}
			storeStep(e, s, arm64.R19, 0)
		}
		e.Label(skip)
		e.AddImm(arm64.R9, arm64.R9, 4*d)     // acc of the next row
		e.Add(arm64.R10, arm64.R10, arm64.R8) // p of the next row
	}, func() {
		e.Add(arm64.R2, arm64.R2, arm64.R7) // the next key
		e.AddImm(arm64.R1, arm64.R1, 4)     // p[j+1]
	})
}
