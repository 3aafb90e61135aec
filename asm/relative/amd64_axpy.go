package relative

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// axpyRows emits axpyRows<ISA>(dst, w, rows) for HeadDim d:
// dst[x] += Σ_r w[r]·rows[r·d+x].
//
// dst is cut into chunks of at most axpyChunk pieces, each accumulated in
// registers over all rows: S sets of accumulators take S rows per iteration
// (S chosen so that about 8 multiply-add chains run in parallel), then the
// sets are added and stored. Up to four chunks are straight-line code; more
// loop over full chunks.
func (g gen) axpyRows(d int) {
	c := g.Ctx
	name := "axpyRows" + g.ISA.Suffix
	g.Begin(abi.AxpyRows, name+" is the "+g.ISA.Name+" kernels.axpyRows for HeadDim "+strconv.Itoa(d)+": dst += Σ_r w[r]·rows[r].",
		"It trusts its arguments: len(dst) >= HeadDim, len(rows) >= len(w)·HeadDim, no overlap with dst.")
	dst, w, rows, n := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), dst)
	c.Load(c.Param("w").Base(), w)
	c.Load(c.Param("rows").Base(), rows)
	c.Load(c.Param("w").Len(), n)
	g.SetupMasks(d)

	pieces := g.Split(d)
	pc := g.axpyChunk()
	chunks := (len(pieces) + pc - 1) / pc
	if chunks <= 4 {
		for i := 0; i < len(pieces); i += pc {
			g.axpyChunkAt(pieces[i:min(i+pc, len(pieces))], dst, rows, w, n, 4*d)
		}
	} else {
		// for ch := range full { chunk at dst+ch·pc·L, rows+ch·pc·L }, then the rest
		full := d / g.ISA.Lanes / pc
		dc, rc, cnt := c.GP64(), c.GP64(), c.GP64()
		c.MOVQ(dst, dc)
		c.MOVQ(rows, rc)
		c.MOVQ(operand.U32(uint32(full)), cnt)
		top := g.NewLabel("axpy_chunk")
		c.Label(top)
		g.axpyChunkAt(pieces[:pc], dc, rc, w, n, 4*d)
		step := uint32(4 * pc * g.ISA.Lanes)
		c.ADDQ(operand.U32(step), dc)
		c.ADDQ(operand.U32(step), rc)
		c.DECQ(cnt)
		c.JNZ(operand.LabelRef(top))
		base := full * pc * g.ISA.Lanes
		var rest []amd64.Piece
		for _, p := range pieces[full*pc:] {
			rest = append(rest, amd64.Piece{Off: p.Off - base, N: p.N})
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
func (g gen) axpyChunk() int { return g.ISA.Regs - 4 }

// axpySets is how many rows one iteration takes for a chunk of np pieces:
// enough accumulator sets for about 8 independent multiply-add chains,
// within the registers.
func (g gen) axpySets(np int) int {
	s := min(4, (8+np-1)/np)
	return max(1, min(s, (g.ISA.Regs-3)/np))
}

// axpyChunkAt emits dst[p] += Σ_r w[r]·rows[r][p] for the pieces ps (offsets
// from dst and rows, which it leaves unchanged), over the n rows at w.
func (g gen) axpyChunkAt(ps []amd64.Piece, dst, rows, w, n reg.GPVirtual, rowBytes int) {
	c := g.Ctx
	S := g.axpySets(len(ps))
	acc := make([][]reg.VecVirtual, S)
	for s := range acc {
		acc[s] = make([]reg.VecVirtual, len(ps))
		for i, p := range ps {
			if s == 0 {
				acc[s][i] = g.loadPiece(p, amd64.Mem(dst, 4*p.Off))
				continue
			}
			v := g.Vec()
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
	//	VFMADD231PS  (s·D + p.Off)·4(rc), B, ACC[set][p]   for every amd64.Piece p
	row := func(s, set int) {
		b := g.Vec()
		c.VBROADCASTSS(amd64.Mem(wc, 4*s), b)
		for i, p := range ps {
			c.VFMADD231PS(g.pieceOperand(p, amd64.Mem(rc, s*rowBytes+4*p.Off)), b, acc[set][i])
		}
	}
	// for cnt >= S { rows wc[0..S) into sets 0..S−1 }; then for cnt >= 1 { one row into set 0 }
	steps := []int{S}
	if S > 1 {
		steps = append(steps, 1)
	}
	for _, step := range steps {
		top, end := g.NewLabel("axpy_rows"), g.NewLabel("axpy_rows_end")
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
		g.Store(p, g.relView(p, v), amd64.Mem(dst, 4*p.Off))
	}
}
