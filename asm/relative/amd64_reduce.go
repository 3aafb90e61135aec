package relative

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// A reduction level combines pairs of registers (i, i+k/2) of the k left:
// sum = shuffle(lo; s1, s2) + shuffle(hi; s1, s2) with s1 the first of the
// pair, so that every lane of sum still adds up partial sums of a single
// accumulator. Applied to (v, v) it folds v onto itself, as the one-row
// path does; either way a row's lanes are added in the same order.
type redLevel struct {
	op     string // VSHUFF32X4 (128-bit lanes of a ZMM), VPERM2F128 (of a YMM) or VSHUFPS (within 128-bit lanes)
	lo, hi uint8
}

// reduceTree returns the levels of the ISA: 16 or 8 accumulators into one.
func (g gen) reduceTree() []redLevel {
	inLane := []redLevel{{"VSHUFPS", 0x88, 0xdd}, {"VSHUFPS", 0x88, 0xdd}}
	if g.ISA.Lanes == 16 {
		return append([]redLevel{{"VSHUFF32X4", 0x44, 0xee}, {"VSHUFF32X4", 0x88, 0xdd}}, inLane...)
	}
	return append([]redLevel{{"VPERM2F128", 0x20, 0x31}}, inLane...)
}

// shuffleLanes applies a level's shuffle with immediate imm to s1, s2 (one
// entry per float lane) the way the instruction does.
func shuffleLanes(op string, imm uint8, s1, s2 []int) []int {
	out := make([]int, len(s1))
	for b := 0; b < len(s1); b += 4 {
		k := b / 4 // 128-bit lane
		var src []int
		var sel int
		switch op {
		case "VSHUFF32X4": // lanes 0, 1 from s1, lanes 2, 3 from s2
			src, sel = s1, int(imm>>(2*k))&3
			if k >= 2 {
				src = s2
			}
		case "VPERM2F128": // selector 0, 1: s1's lanes; 2, 3: s2's
			sel = int(imm>>(4*k)) & 3
			src = s1
			if sel >= 2 {
				src = s2
			}
			sel &= 1
		case "VSHUFPS": // elements 0, 1 from s1, 2, 3 from s2, within the lane
			for e := range 4 {
				s := s1
				if e >= 2 {
					s = s2
				}
				out[b+e] = s[b+int(imm>>(2*e))&3]
			}
			continue
		}
		copy(out[b:b+4], src[4*sel:4*sel+4])
	}
	return out
}

// reducePlan simulates tree on n accumulators of n lanes each and returns
// rowOf: accumulator a must hold row rowOf[a] for lane l of the result to
// be row l. It panics unless every result lane adds all n lanes of exactly
// one accumulator, each once.
func reducePlan(tree []redLevel, n int) []int {
	// A lane value is a set of (accumulator, lane) pairs, encoded a·n+l.
	type val = map[int]bool
	regs := make([][]val, n)
	ids := make([][]int, n)
	for a := range regs {
		regs[a] = make([]val, n)
		ids[a] = make([]int, n)
		for l := range n {
			regs[a][l] = val{a*n + l: true}
		}
	}
	for _, lv := range tree {
		k := len(regs)
		next := make([][]val, k/2)
		for i := range k / 2 {
			s1, s2 := regs[i], regs[i+k/2]
			idx := make([]int, 2*n)
			for l := range idx {
				idx[l] = l
			}
			a := shuffleLanes(lv.op, lv.lo, idx[:n], idx[n:])
			b := shuffleLanes(lv.op, lv.hi, idx[:n], idx[n:])
			pick := func(j int) val {
				if j < n {
					return s1[j]
				}
				return s2[j-n]
			}
			next[i] = make([]val, n)
			for l := range n {
				sum := val{}
				for x := range pick(a[l]) {
					sum[x] = true
				}
				for x := range pick(b[l]) {
					if sum[x] {
						panic(fmt.Sprintf("amd64: reduction adds (%d, %d) twice", x/n, x%n))
					}
					sum[x] = true
				}
				next[i][l] = sum
			}
		}
		regs = next
	}
	if len(regs) != 1 {
		panic(fmt.Sprintf("amd64: reduction of %d accumulators leaves %d registers", n, len(regs)))
	}
	rowOf := make([]int, n)
	seen := make([]bool, n)
	for l, v := range regs[0] {
		acc := -1
		for x := range v {
			if acc >= 0 && x/n != acc {
				panic("amd64: reduction mixes accumulators")
			}
			acc = x / n
		}
		if len(v) != n || seen[acc] {
			panic(fmt.Sprintf("amd64: reduction lane %d holds %d partial sums of accumulator %d", l, len(v), acc))
		}
		seen[acc] = true
		rowOf[acc] = l
	}
	return rowOf
}

// reduceRows emits tree over accs (R accumulators, or one folded onto
// itself) and returns the vector of their lane sums.
func (g gen) reduceRows(tree []redLevel, accs []reg.VecVirtual) reg.VecVirtual {
	c := g.Ctx
	shuffle := func(op string, imm uint8, s2, s1, dst reg.Register) {
		switch op {
		case "VSHUFF32X4":
			c.VSHUFF32X4(operand.U8(imm), s2, s1, dst)
		case "VPERM2F128":
			c.VPERM2F128(operand.U8(imm), s2, s1, dst)
		default:
			c.VSHUFPS(operand.U8(imm), s2, s1, dst)
		}
	}
	for _, lv := range tree {
		k := len(accs)
		half := max(k/2, 1)
		next := make([]reg.VecVirtual, half)
		for i := range half {
			s1, s2 := accs[i], accs[i]
			if k > 1 {
				s2 = accs[i+half]
			}
			// sum = shuffle(lo; s1, s2) + shuffle(hi; s1, s2):
			//
			//	VSHUFPS $lo, S2, S1, A    (or VPERM2F128, VSHUFF32X4)
			//	VSHUFPS $hi, S2, S1, B
			//	VADDPS  B, A, A
			a, b := g.Vec(), g.Vec()
			shuffle(lv.op, lv.lo, s2, s1, a)
			shuffle(lv.op, lv.hi, s2, s1, b)
			c.VADDPS(b, a, a)
			next[i] = a
		}
		accs = next
	}
	return accs[0]
}
