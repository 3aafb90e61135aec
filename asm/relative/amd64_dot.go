package relative

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// Kernels of the relative-attention encodings (asm/abi: DotRows, ScoresRow,
// XLScoresRow, AxpyRows), for a compile-time HeadDim D:
//
//	dotRows(dst, x, rows)              dst[r] = x·rows[r]                   (rpe_full)
//	scoresRow(dst, q, k, bias, scale)  dst[j] = (q·k_j + bias[j])·scale     (rpe_full)
//	scoresRow(dst, qu, k, qv, r)       dst[j] = qu·k_j + qv·r_j             (xl)
//	axpyRows(dst, w, rows)             dst += Σ_r w[r]·rows[r]              (rpe_full)
//
// The first three are rows of dot products. They take R = lanes rows at a
// time (8 on AVX2, 16 on AVX-512), one accumulator per row, so the R
// multiply-add chains run in parallel and every load of an x amd64.Piece serves R
// rows; x's pieces stay in registers across the row loop as far as the
// budget allows (relHold). A transpose-and-add tree (reduceRows) turns the R
// accumulators into one vector holding the R sums in row order, which the
// epilogue adds the bias to, scales and stores with full-width instructions.
// When len(dst) is not a multiple of R the last block is moved back to end
// at the last row, recomputing (bit-identically) a few rows of the previous
// one; a call with fewer than R rows takes them one at a time. D is fully
// unrolled up to maxDotPieces vectors and loops over blocks of amd64.Unroll
// vectors beyond. A D that is not a multiple of the lane count ends in a
// tail read with exact-width loads (AVX2: 4, 2 and 1 floats into the low
// lanes, the rest zero) or a zero-masked load (AVX-512), so no kernel reads
// past a row.

// maxDotPieces is the most vectors of x a dot kernel unrolls; longer head
// dims loop over blocks of amd64.Unroll vectors.
const maxDotPieces = 32

// dotKind selects one of the three dot kernels.
type dotKind int

const (
	dotPlain  dotKind = iota // rpe_full dotRows
	dotScores                // rpe_full scoresRow
	dotXL                    // xl scoresRow
)

// dotABI is the ABI entry of each dot kernel.
var dotABI = map[dotKind]abi.Kernel{dotPlain: abi.DotRows, dotScores: abi.ScoresRow, dotXL: abi.XLScoresRow}

// dotTerm is one x·row product of a dot kernel: the HeadDim floats at x
// against the rows at rows (HeadDim floats apart).
type dotTerm struct {
	x, rows reg.GPVirtual
	hold    []reg.VecVirtual // x's pieces held in registers; nil entries are loaded per block
}

// relView returns the register g.load and g.store take for amd64.Piece p of the
// full-width v: v, or its XMM half for an AVX2 tail (VEX loads into it zero
// the upper lanes of v).
func (g gen) relView(p amd64.Piece, v reg.VecVirtual) reg.Register {
	if g.ISA.Lanes == 8 && p.N < 8 {
		return v.AsX()
	}
	return v
}

// loadPiece loads amd64.Piece p from m into a new full-width register whose lanes
// past p.N are zero.
func (g gen) loadPiece(p amd64.Piece, m operand.Mem) reg.VecVirtual {
	v := g.Vec()
	g.Load(p, m, g.relView(p, v))
	return v
}

// pieceOperand is the second factor of a multiply-add with amd64.Piece p of the
// row at m: m itself for a full vector, a zero-padded register for a tail.
func (g gen) pieceOperand(p amd64.Piece, m operand.Mem) operand.Op {
	if g.Full(p) {
		return m
	}
	return g.loadPiece(p, m)
}

// dotKernel emits dotRows<ISA>, or scoresRow<ISA> for rpe_full or xl, for
// HeadDim d.
func (g gen) dotKernel(kind dotKind, d int) {
	c := g.Ctx
	R := g.ISA.Lanes
	k := dotABI[kind]
	name := k.Field + g.ISA.Suffix
	switch kind {
	case dotPlain:
		g.Begin(k, name+" is the "+g.ISA.Name+" kernels.dotRows for HeadDim "+strconv.Itoa(d)+": dst[r] = x·rows[r].",
			"It trusts its arguments: len(x) >= HeadDim, len(rows) >= len(dst)·HeadDim, no overlap with dst.")
	case dotScores:
		g.Begin(k, name+" is the "+g.ISA.Name+" kernels.scoresRow for HeadDim "+strconv.Itoa(d)+": dst[j] = (q·k_j + bias[j])·scale.",
			"It trusts its arguments: len(q) >= HeadDim, len(k) >= len(dst)·HeadDim, len(bias) >= len(dst), no overlap with dst.")
	case dotXL:
		g.Begin(k, name+" is the "+g.ISA.Name+" xl kernels.scoresRow for HeadDim "+strconv.Itoa(d)+": dst[j] = qu·k_j + qv·r_j.",
			"It trusts its arguments: len(qu), len(qv) >= HeadDim, len(k), len(r) >= len(dst)·HeadDim, no overlap with dst.")
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
		scale = g.Vec()
		c.VBROADCASTSS(sx, scale)
	}
	g.SetupMasks(d)
	pieces := g.Split(d)
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
				t.hold[i] = g.loadPiece(p, amd64.Mem(t.x, 4*p.Off))
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
				c.VADDSS(amd64.Mem(bias, 0), x, x)
				c.VMULSS(scale.AsX(), x, x)
			}
			c.VMOVSS(x, amd64.Mem(dst, 0))
			return
		}
		if kind == dotScores {
			c.VADDPS(amd64.Mem(bias, 0), s, s)
			c.VMULPS(scale, s, s)
		}
		c.VMOVUPS(s, amd64.Mem(dst, 0))
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

	done, single, block := g.NewLabel("dot_done"), g.NewLabel("dot_single"), g.NewLabel("dot_block")
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
// of a amd64.Piece and of the reduction (4 of 16 on AVX2, 12 of 32 on AVX-512).
func (g gen) relHold() int { return g.ISA.Regs - g.ISA.Lanes - 2 }

// dotBlock emits the dot products of cnt rows (cnt = R or 1) at the
// terms' row pointers, which it leaves unchanged, and returns the vector of
// sums: lane l holds row l (cnt = R), or lane 0 the single row's (cnt = 1).
func (g gen) dotBlock(terms []*dotTerm, pieces []amd64.Piece, loop bool, cnt, rowBytes int) reg.VecVirtual {
	c := g.Ctx
	rowOf, tree := []int{0}, g.reduceTree()
	if cnt > 1 {
		rowOf = reducePlan(tree, cnt)
	}
	accs := make([]reg.VecVirtual, cnt)
	for a := range accs {
		accs[a] = g.Vec()
	}
	started := false
	// fma emits acc[a] += x_p · row(a)_p for every accumulator a, the
	// first product of each accumulator as a multiply:
	//
	//	VMULPS      (rowOf[a]·D + p.Off)·4(rows), X_p, ACC_a   // first amd64.Piece
	//	VFMADD231PS (rowOf[a]·D + p.Off)·4(rows), X_p, ACC_a   // the others
	//
	// (a tail amd64.Piece of the row is first loaded into a zero-padded register).
	fma := func(p amd64.Piece, x operand.Op, rows reg.GPVirtual, disp int) {
		for a, acc := range accs {
			m := g.pieceOperand(p, amd64.Mem(rows, rowOf[a]*rowBytes+disp+4*p.Off))
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
			// for i := 0; i < blocks; i++ { acc[a] += x[u]·row(a)[u] for the amd64.Unroll vectors u of block i }
			blk := amd64.Unroll * g.ISA.Lanes
			blocks := pieces[len(pieces)-1].Off / g.ISA.Lanes / amd64.Unroll // whole blocks before the last amd64.Piece
			xb, rb = c.GP64(), c.GP64()
			cntr := c.GP64()
			c.MOVQ(t.x, xb)
			c.MOVQ(t.rows, rb)
			c.MOVQ(operand.U32(uint32(blocks)), cntr)
			top := g.NewLabel("dot_d")
			c.Label(top)
			for u := range amd64.Unroll {
				p := amd64.Piece{Off: u * g.ISA.Lanes, N: g.ISA.Lanes}
				x := g.Vec()
				c.VMOVUPS(amd64.Mem(xb, 4*p.Off), x)
				fma(p, x, rb, 0)
			}
			c.ADDQ(operand.U32(uint32(4*blk)), xb)
			c.ADDQ(operand.U32(uint32(4*blk)), rb)
			c.DECQ(cntr)
			c.JNZ(operand.LabelRef(top))
			rest = nil
			for _, p := range pieces[blocks*amd64.Unroll:] {
				rest = append(rest, amd64.Piece{Off: p.Off - blocks*blk, N: p.N})
			}
		}
		for i, p := range rest {
			var x operand.Op
			if !loop && t.hold[i] != nil {
				x = t.hold[i]
			} else {
				x = g.loadPiece(p, amd64.Mem(xb, 4*p.Off))
			}
			fma(p, x, rb, 0)
		}
	}
	return g.reduceRows(tree, accs)
}
