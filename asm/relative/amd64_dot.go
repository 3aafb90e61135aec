package amd64

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Kernels of the relative-attention encodings (docs/internals.md, kernel ABI
// "rpe_full and xl"), for a compile-time HeadDim D:
//
//	dotRows(dst, x, rows)              dst[r] = x·rows[r]                   (rpe_full)
//	scoresRow(dst, q, k, bias, scale)  dst[j] = (q·k_j + bias[j])·scale     (rpe_full)
//	scoresRow(dst, qu, k, qv, r)       dst[j] = qu·k_j + qv·r_j             (xl)
//	axpyRows(dst, w, rows)             dst += Σ_r w[r]·rows[r]              (rpe_full)
//
// The first three are rows of dot products. They take R = lanes rows at a
// time (8 on AVX2, 16 on AVX-512), one accumulator per row, so the R
// multiply-add chains run in parallel and every load of an x piece serves R
// rows; x's pieces stay in registers across the row loop as far as the
// budget allows (relHold). A transpose-and-add tree (reduceRows) turns the R
// accumulators into one vector holding the R sums in row order, which the
// epilogue adds the bias to, scales and stores with full-width instructions.
// When len(dst) is not a multiple of R the last block is moved back to end
// at the last row, recomputing (bit-identically) a few rows of the previous
// one; a call with fewer than R rows takes them one at a time. D is fully
// unrolled up to maxDotPieces vectors and loops over blocks of unroll
// vectors beyond. A D that is not a multiple of the lane count ends in a
// tail read with exact-width loads (AVX2: 4, 2 and 1 floats into the low
// lanes, the rest zero) or a zero-masked load (AVX-512), so no kernel reads
// past a row.

// maxDotPieces is the most vectors of x a dot kernel unrolls; longer head
// dims loop over blocks of unroll vectors.
const maxDotPieces = 32

// dotKind selects one of the three dot kernels.
type dotKind int

const (
	dotPlain  dotKind = iota // rpe_full dotRows
	dotScores                // rpe_full scoresRow
	dotXL                    // xl scoresRow
)

// dotTerm is one x·row product of a dot kernel: the HeadDim floats at x
// against the rows at rows (HeadDim floats apart).
type dotTerm struct {
	x, rows reg.GPVirtual
	hold    []reg.VecVirtual // x's pieces held in registers; nil entries are loaded per block
}

// relView returns the register g.load and g.store take for piece p of the
// full-width v: v, or its XMM half for an AVX2 tail (VEX loads into it zero
// the upper lanes of v).
func (g *gen) relView(p piece, v reg.VecVirtual) reg.Register {
	if g.isa.lanes == 8 && p.n < 8 {
		return v.AsX()
	}
	return v
}

// loadPiece loads piece p from m into a new full-width register whose lanes
// past p.n are zero.
func (g *gen) loadPiece(p piece, m operand.Mem) reg.VecVirtual {
	v := g.vec()
	g.load(p, m, g.relView(p, v))
	return v
}

// pieceOperand is the second factor of a multiply-add with piece p of the
// row at m: m itself for a full vector, a zero-padded register for a tail.
func (g *gen) pieceOperand(p piece, m operand.Mem) operand.Op {
	if g.full(p) {
		return m
	}
	return g.loadPiece(p, m)
}

// dotKernel emits dotRows<ISA>, or scoresRow<ISA> for rpe_full or xl, for
// HeadDim d.
func (g *gen) dotKernel(kind dotKind, d int) {
	c := g.ctx
	R := g.isa.lanes
	name := map[dotKind]string{dotPlain: "dotRows", dotScores: "scoresRow", dotXL: "scoresRow"}[kind] + g.isa.suffix
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	switch kind {
	case dotPlain:
		c.Doc(name+" is the "+g.isa.name+" kernels.dotRows for HeadDim "+itoa(d)+": dst[r] = x·rows[r].",
			"It trusts its arguments: len(x) >= HeadDim, len(rows) >= len(dst)·HeadDim, no overlap with dst.")
		c.SignatureExpr("func(dst, x, rows []float32)")
	case dotScores:
		c.Doc(name+" is the "+g.isa.name+" kernels.scoresRow for HeadDim "+itoa(d)+": dst[j] = (q·k_j + bias[j])·scale.",
			"It trusts its arguments: len(q) >= HeadDim, len(k) >= len(dst)·HeadDim, len(bias) >= len(dst), no overlap with dst.")
		c.SignatureExpr("func(dst, q, k, bias []float32, scale float32)")
	case dotXL:
		c.Doc(name+" is the "+g.isa.name+" xl kernels.scoresRow for HeadDim "+itoa(d)+": dst[j] = qu·k_j + qv·r_j.",
			"It trusts its arguments: len(qu), len(qv) >= HeadDim, len(k), len(r) >= len(dst)·HeadDim, no overlap with dst.")
		c.SignatureExpr("func(dst, qu, k, qv, r []float32)")
	}
	dst, n := c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), dst)
	c.Load(c.Param("dst").Len(), n)
	param := func(s string) reg.GPVirtual {
		r := c.GP64()
		c.Load(c.Param(s).Base(), r)
		return r
	}
	var terms []*dotTerm
	switch kind {
	case dotPlain:
		terms = []*dotTerm{{x: param("x"), rows: param("rows")}}
	case dotScores:
		terms = []*dotTerm{{x: param("q"), rows: param("k")}}
	case dotXL:
		terms = []*dotTerm{{x: param("qu"), rows: param("k")}, {x: param("qv"), rows: param("r")}}
	}
	var bias reg.GPVirtual
	var scale reg.VecVirtual
	if kind == dotScores {
		bias = param("bias")
		sx := c.XMM()
		c.Load(c.Param("scale"), sx)
		scale = g.vec()
		c.VBROADCASTSS(sx, scale)
	}
	g.setupMasks(d)
	pieces := g.split(d)
	loop := len(pieces) > maxDotPieces
	if !loop {
		// Pieces of x held in registers for the whole call.
		budget := g.relHold()
		if kind == dotScores {
			budget--
		}
		for _, t := range terms {
			t.hold = make([]reg.VecVirtual, len(pieces))
			for i, p := range pieces[:min(len(pieces), budget/len(terms))] {
				t.hold[i] = g.loadPiece(p, mem(t.x, 4*p.off))
			}
		}
	}

	rowBytes := 4 * d
	// epilogue stores the sums of rows [j, j+cnt) (cnt = R: a vector; cnt =
	// 1: lane 0) at dst, after adding bias and scaling for scoresRow.
	epilogue := func(s reg.VecVirtual, cnt int) {
		if cnt == 1 {
			x := s.AsX()
			if kind == dotScores {
				c.VADDSS(mem(bias, 0), x, x)
				c.VMULSS(scale.AsX(), x, x)
			}
			c.VMOVSS(x, mem(dst, 0))
			return
		}
		if kind == dotScores {
			c.VADDPS(mem(bias, 0), s, s)
			c.VMULPS(scale, s, s)
		}
		c.VMOVUPS(s, mem(dst, 0))
	}
	// advance moves the row pointers past cnt rows.
	advance := func(cnt int) {
		for _, t := range terms {
			c.ADDQ(operand.U32(uint32(cnt*rowBytes)), t.rows)
		}
		c.ADDQ(operand.U32(uint32(4*cnt)), dst)
		if kind == dotScores {
			c.ADDQ(operand.U32(uint32(4*cnt)), bias)
		}
	}

	done, single, block := g.newLabel("dot_done"), g.newLabel("dot_single"), g.newLabel("dot_block")
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef(done))
	c.CMPQ(n, operand.U32(uint32(R)))
	c.JB(operand.LabelRef(single))

	// for n >= R { dst[j:j+R] = dots of rows j..j+R−1; j += R; n −= R }
	c.Label(block)
	epilogue(g.dotBlock(terms, pieces, loop, R, rowBytes), R)
	advance(R)
	c.SUBQ(operand.U32(uint32(R)), n)
	c.CMPQ(n, operand.U32(uint32(R)))
	c.JAE(operand.LabelRef(block))
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef(done))
	// 0 < n < R rows left: step back R−n rows and run the block once more.
	back := c.GP64()
	c.MOVQ(operand.U32(uint32(R)), back)
	c.SUBQ(n, back)
	off := c.GP64()
	c.IMUL3Q(operand.U32(uint32(rowBytes)), back, off)
	for _, t := range terms {
		c.SUBQ(off, t.rows)
	}
	c.SHLQ(operand.U8(2), back)
	c.SUBQ(back, dst)
	if kind == dotScores {
		c.SUBQ(back, bias)
	}
	c.MOVQ(operand.U32(uint32(R)), n)
	c.JMP(operand.LabelRef(block))

	// Fewer than R rows: one at a time.
	c.Label(single)
	epilogue(g.dotBlock(terms, pieces, loop, 1, rowBytes), 1)
	advance(1)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(single))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// relHold is how many vector registers may hold x pieces across a dot
// kernel's row loop: the rest hold the R accumulators and the temporaries
// of a piece and of the reduction (4 of 16 on AVX2, 12 of 32 on AVX-512).
func (g *gen) relHold() int { return g.isa.regs - g.isa.lanes - 2 }

// dotBlock emits the dot products of cnt rows (cnt = R or 1) at the
// terms' row pointers, which it leaves unchanged, and returns the vector of
// sums: lane l holds row l (cnt = R), or lane 0 the single row's (cnt = 1).
func (g *gen) dotBlock(terms []*dotTerm, pieces []piece, loop bool, cnt, rowBytes int) reg.VecVirtual {
	c := g.ctx
	rowOf, tree := []int{0}, g.reduceTree()
	if cnt > 1 {
		rowOf = reducePlan(tree, cnt)
	}
	accs := make([]reg.VecVirtual, cnt)
	for a := range accs {
		accs[a] = g.vec()
	}
	started := false
	// fma emits acc[a] += x_p · row(a)_p for every accumulator a, the
	// first product of each accumulator as a multiply:
	//
	//	VMULPS      (rowOf[a]·D + p.off)·4(rows), X_p, ACC_a   // first piece
	//	VFMADD231PS (rowOf[a]·D + p.off)·4(rows), X_p, ACC_a   // the others
	//
	// (a tail piece of the row is first loaded into a zero-padded register).
	fma := func(p piece, x operand.Op, rows reg.GPVirtual, disp int) {
		for a, acc := range accs {
			m := g.pieceOperand(p, mem(rows, rowOf[a]*rowBytes+disp+4*p.off))
			if started {
				c.VFMADD231PS(m, x, acc)
			} else {
				c.VMULPS(m, x, acc)
			}
		}
		started = true
	}
	if loop {
		for _, acc := range accs {
			c.VXORPS(acc, acc, acc)
		}
		started = true
	}
	for _, t := range terms {
		rest := pieces
		xb, rb := t.x, t.rows
		if loop {
			// for i := 0; i < blocks; i++ { acc[a] += x[u]·row(a)[u] for the unroll vectors u of block i }
			blk := unroll * g.isa.lanes
			blocks := pieces[len(pieces)-1].off / g.isa.lanes / unroll // whole blocks before the last piece
			xb, rb = c.GP64(), c.GP64()
			cntr := c.GP64()
			c.MOVQ(t.x, xb)
			c.MOVQ(t.rows, rb)
			c.MOVQ(operand.U32(uint32(blocks)), cntr)
			top := g.newLabel("dot_d")
			c.Label(top)
			for u := range unroll {
				p := piece{u * g.isa.lanes, g.isa.lanes}
				x := g.vec()
				c.VMOVUPS(mem(xb, 4*p.off), x)
				fma(p, x, rb, 0)
			}
			c.ADDQ(operand.U32(uint32(4*blk)), xb)
			c.ADDQ(operand.U32(uint32(4*blk)), rb)
			c.DECQ(cntr)
			c.JNZ(operand.LabelRef(top))
			rest = nil
			for _, p := range pieces[blocks*unroll:] {
				rest = append(rest, piece{p.off - blocks*blk, p.n})
			}
		}
		for i, p := range rest {
			var x operand.Op
			if !loop && t.hold[i] != nil {
				x = t.hold[i]
			} else {
				x = g.loadPiece(p, mem(xb, 4*p.off))
			}
			fma(p, x, rb, 0)
		}
	}
	return g.reduceRows(tree, accs)
}

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
func (g *gen) reduceTree() []redLevel {
	inLane := []redLevel{{"VSHUFPS", 0x88, 0xdd}, {"VSHUFPS", 0x88, 0xdd}}
	if g.isa.lanes == 16 {
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
func (g *gen) reduceRows(tree []redLevel, accs []reg.VecVirtual) reg.VecVirtual {
	c := g.ctx
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
			a, b := g.vec(), g.vec()
			shuffle(lv.op, lv.lo, s2, s1, a)
			shuffle(lv.op, lv.hi, s2, s1, b)
			c.VADDPS(b, a, a)
			next[i] = a
		}
		accs = next
	}
	return accs[0]
}

// axpyRows emits axpyRows<ISA>(dst, w, rows) for HeadDim d:
// dst[x] += Σ_r w[r]·rows[r·d+x].
//
// dst is cut into chunks of at most axpyChunk pieces, each accumulated in
// registers over all rows: S sets of accumulators take S rows per iteration
// (S chosen so that about 8 multiply-add chains run in parallel), then the
// sets are added and stored. Up to four chunks are straight-line code; more
// loop over full chunks.
func (g *gen) axpyRows(d int) {
	c := g.ctx
	name := "axpyRows" + g.isa.suffix
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.Doc(name+" is the "+g.isa.name+" kernels.axpyRows for HeadDim "+itoa(d)+": dst += Σ_r w[r]·rows[r].",
		"It trusts its arguments: len(dst) >= HeadDim, len(rows) >= len(w)·HeadDim, no overlap with dst.")
	c.SignatureExpr("func(dst, w, rows []float32)")
	dst, w, rows, n := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), dst)
	c.Load(c.Param("w").Base(), w)
	c.Load(c.Param("rows").Base(), rows)
	c.Load(c.Param("w").Len(), n)
	g.setupMasks(d)

	pieces := g.split(d)
	pc := g.axpyChunk()
	chunks := (len(pieces) + pc - 1) / pc
	if chunks <= 4 {
		for i := 0; i < len(pieces); i += pc {
			g.axpyChunkAt(pieces[i:min(i+pc, len(pieces))], dst, rows, w, n, 4*d)
		}
	} else {
		// for ch := range full { chunk at dst+ch·pc·L, rows+ch·pc·L }, then the rest
		full := d / g.isa.lanes / pc
		dc, rc, cnt := c.GP64(), c.GP64(), c.GP64()
		c.MOVQ(dst, dc)
		c.MOVQ(rows, rc)
		c.MOVQ(operand.U32(uint32(full)), cnt)
		top := g.newLabel("axpy_chunk")
		c.Label(top)
		g.axpyChunkAt(pieces[:pc], dc, rc, w, n, 4*d)
		step := uint32(4 * pc * g.isa.lanes)
		c.ADDQ(operand.U32(step), dc)
		c.ADDQ(operand.U32(step), rc)
		c.DECQ(cnt)
		c.JNZ(operand.LabelRef(top))
		base := full * pc * g.isa.lanes
		var rest []piece
		for _, p := range pieces[full*pc:] {
			rest = append(rest, piece{p.off - base, p.n})
		}
		for i := 0; i < len(rest); i += pc {
			g.axpyChunkAt(rest[i:min(i+pc, len(rest))], dc, rc, w, n, 4*d)
		}
	}
	c.VZEROUPPER()
	c.RET()
}

// axpyChunk is the most pieces of dst one pass over the rows accumulates:
// the registers left after one broadcast weight and a tail temporary.
func (g *gen) axpyChunk() int { return g.isa.regs - 4 }

// axpySets is how many rows one iteration takes for a chunk of np pieces:
// enough accumulator sets for about 8 independent multiply-add chains,
// within the registers.
func (g *gen) axpySets(np int) int {
	s := min(4, (8+np-1)/np)
	return max(1, min(s, (g.isa.regs-3)/np))
}

// axpyChunkAt emits dst[p] += Σ_r w[r]·rows[r][p] for the pieces ps (offsets
// from dst and rows, which it leaves unchanged), over the n rows at w.
func (g *gen) axpyChunkAt(ps []piece, dst, rows, w, n reg.GPVirtual, rowBytes int) {
	c := g.ctx
	S := g.axpySets(len(ps))
	acc := make([][]reg.VecVirtual, S)
	for s := range acc {
		acc[s] = make([]reg.VecVirtual, len(ps))
		for i, p := range ps {
			if s == 0 {
				acc[s][i] = g.loadPiece(p, mem(dst, 4*p.off))
				continue
			}
			v := g.vec()
			c.VXORPS(v, v, v)
			acc[s][i] = v
		}
	}
	wc, rc, cnt := c.GP64(), c.GP64(), c.GP64()
	c.MOVQ(w, wc)
	c.MOVQ(rows, rc)
	c.MOVQ(n, cnt)
	// row adds w[s]·rows[s] into accumulator set set:
	//
	//	VBROADCASTSS 4·s(wc), B
	//	VFMADD231PS  (s·D + p.off)·4(rc), B, ACC[set][p]   for every piece p
	row := func(s, set int) {
		b := g.vec()
		c.VBROADCASTSS(mem(wc, 4*s), b)
		for i, p := range ps {
			c.VFMADD231PS(g.pieceOperand(p, mem(rc, s*rowBytes+4*p.off)), b, acc[set][i])
		}
	}
	// for cnt >= S { rows wc[0..S) into sets 0..S−1 }; then for cnt >= 1 { one row into set 0 }
	steps := []int{S}
	if S > 1 {
		steps = append(steps, 1)
	}
	for _, step := range steps {
		top, end := g.newLabel("axpy_rows"), g.newLabel("axpy_rows_end")
		c.Label(top)
		c.CMPQ(cnt, operand.U32(uint32(step)))
		c.JB(operand.LabelRef(end))
		for s := range step {
			row(s, s)
		}
		c.ADDQ(operand.U32(uint32(step*rowBytes)), rc)
		c.ADDQ(operand.U32(uint32(4*step)), wc)
		c.SUBQ(operand.U32(uint32(step)), cnt)
		c.JMP(operand.LabelRef(top))
		c.Label(end)
	}
	for i, p := range ps {
		v := acc[0][i]
		for s := 1; s < S; s++ {
			c.VADDPS(acc[s][i], v, v)
		}
		g.store(p, g.relView(p, v), mem(dst, 4*p.off))
	}
}
