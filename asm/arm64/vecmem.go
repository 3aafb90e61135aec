package arm64

import (
	"fmt"
	"strings"
)

// ---- vector loads and stores ----

// structMem emits VLDn/VSTn: regs must be consecutive (mod 32), share one
// arrangement (S4, S2 or H4), number 1..4 for n=1 and exactly n otherwise. With
// post the base is incremented by the bytes transferred.
func (e *Emitter) structMem(op string, n int, store bool, base Reg, post bool, regs []Vec) {
	if !e.inFn(op) || !e.checkR(base) || !e.checkVec(op, []Arrangement{S4, S2, H4}, regs...) {
		return
	}
	if (n == 1 && (len(regs) < 1 || len(regs) > 4)) || (n > 1 && len(regs) != n) {
		e.errorf("%s: %d registers", op, len(regs))
		return
	}
	names := make([]string, len(regs))
	for i, r := range regs {
		if i > 0 && r.R != (regs[i-1].R+1)%32 {
			e.errorf("%s: registers %s, %s not consecutive", op, regs[i-1], r)
			return
		}
		names[i] = r.String()
	}
	list := "[" + strings.Join(names, ", ") + "]"
	mem := fmt.Sprintf("(%s)", base)
	if post {
		op += ".P"
		mem = fmt.Sprintf("%d(%s)", len(regs)*regs[0].A.bytes(), base)
	}
	if store {
		e.ins("%s %s, %s", op, list, mem)
	} else {
		e.ins("%s %s, %s", op, mem, list)
	}
}

// VLD1 loads 1..4 consecutive registers from (base), post-incrementing base
// when post is set.
func (e *Emitter) VLD1(base Reg, post bool, regs ...Vec) {
	e.structMem("VLD1", 1, false, base, post, regs)
}

// VST1 stores 1..4 consecutive registers to (base).
func (e *Emitter) VST1(base Reg, post bool, regs ...Vec) {
	e.structMem("VST1", 1, true, base, post, regs)
}

// VLD2 loads 2-element structures, de-interleaving even elements into the
// first register and odd elements into the second.
func (e *Emitter) VLD2(base Reg, post bool, a, b Vec) {
	e.structMem("VLD2", 2, false, base, post, []Vec{a, b})
}

// VST2 stores two registers interleaved (a0 b0 a1 b1 …).
func (e *Emitter) VST2(base Reg, post bool, a, b Vec) {
	e.structMem("VST2", 2, true, base, post, []Vec{a, b})
}

// scalarMem emits FMOVS/FMOVD between lane 0.. of v and memory. A load
// zeroes the rest of the register. post > 0 post-increments base by post.
func (e *Emitter) scalarMem(op string, store bool, v VReg, base Reg, post int) {
	if !e.inFn(op) || !e.checkV(v) || !e.checkR(base) {
		return
	}
	if post < 0 || post > 255 {
		e.errorf("%s: post-increment %d out of range 0..255", op, post)
		return
	}
	mem := fmt.Sprintf("(%s)", base)
	if post > 0 {
		op += ".P"
		mem = fmt.Sprintf("%d(%s)", post, base)
	}
	if store {
		e.ins("%s %s, %s", op, v.F(), mem)
	} else {
		e.ins("%s %s, %s", op, mem, v.F())
	}
}

// LoadS loads one float32 into lane 0 of v (FMOVS), zeroing the other lanes.
func (e *Emitter) LoadS(v VReg, base Reg, post int) { e.scalarMem("FMOVS", false, v, base, post) }

// StoreS stores lane 0 of v (FMOVS).
func (e *Emitter) StoreS(v VReg, base Reg, post int) { e.scalarMem("FMOVS", true, v, base, post) }

// LoadD loads two float32 into lanes 0..1 of v (FMOVD), zeroing lanes 2..3.
func (e *Emitter) LoadD(v VReg, base Reg, post int) { e.scalarMem("FMOVD", false, v, base, post) }

// StoreD stores lanes 0..1 of v (FMOVD).
func (e *Emitter) StoreD(v VReg, base Reg, post int) { e.scalarMem("FMOVD", true, v, base, post) }

// laneMem emits VLD1/VST1 of the 16-bit lane 0 of v: a load keeps the other
// lanes. post is 0 (no write-back) or 2.
func (e *Emitter) laneMem(op string, store bool, v VReg, base Reg, post int) {
	if !e.inFn(op) || !e.checkV(v) || !e.checkR(base) {
		return
	}
	if post != 0 && post != 2 {
		e.errorf("%s: 16-bit lane post-increment %d, want 0 or 2", op, post)
		return
	}
	mem := fmt.Sprintf("(%s)", base)
	if post > 0 {
		op += ".P"
		mem = fmt.Sprintf("%d(%s)", post, base)
	}
	lane := fmt.Sprintf("V%d.H[0]", int(v))
	if store {
		e.ins("%s %s, %s", op, lane, mem)
	} else {
		e.ins("%s %s, %s", op, mem, lane)
	}
}

// LoadH loads one 16-bit element into lane 0 of v (the other lanes kept).
func (e *Emitter) LoadH(v VReg, base Reg, post int) { e.laneMem("VLD1", false, v, base, post) }

// StoreH stores the 16-bit lane 0 of v.
func (e *Emitter) StoreH(v VReg, base Reg, post int) { e.laneMem("VST1", true, v, base, post) }
