package attention

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/amd64"
)

// valuesKeyBlocks emits, while cnt ≥ 4, the blocks of four keys of
// valuesKV's streaming path; vj, pj and cnt advance. Each row's accumulator
// is loaded once per block, gains p·v of the four keys whose weight is not
// +0, and is stored. When grp is a multiple of R (scoreRows) the rows of a
// group go R at a time (valuesRows with R rows): each piece of a value row
// is loaded (and, for 16-bit storage, widened) once for the R rows instead
// of once per row, which is what a GQA decode step (4 query heads per KV
// head) spends its time on; otherwise row by row (valuesRows with one).
func (g gen) valuesKeyBlocks(pieces []amd64.Piece, vj, pj, vst, pst, cnt reg.GPVirtual) {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	R := g.scoreRows()
	top, done := g.NewLabel("vb_keys"), g.NewLabel("vb_keys_done")
	ar, pr, vg, v3 := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Label(top)
	c.CMPQ(cnt, operand.U8(scoreKeys))
	c.JL(operand.LabelRef(done))
	c.Load(c.Param("acc").Base(), ar)
	c.MOVQ(pj, pr)
	g.loop("vb_query", g.arg("nb"), func() {
		c.MOVQ(vj, vg)
		g.loop("vb_group", g.arg("groups"), func() {
			g.prefetchBlock(vg, vst, d)
			c.LEAQ(operand.Mem{Base: vg, Index: vst, Scale: 2}, v3)
			valMem := func(t, off int) operand.Mem {
				switch t {
				case 0:
					return amd64.Mem(vg, off)
				case 1:
					return operand.Mem{Base: vg, Index: vst, Scale: 1, Disp: off}
				case 2:
					return amd64.Mem(v3, off)
				}
				return operand.Mem{Base: v3, Index: vst, Scale: 1, Disp: off}
			}
			byRow, next := g.NewLabel("vb_by_row"), g.NewLabel("vb_group_next")
			hh := c.GP64()
			c.MOVQ(g.arg("grp"), hh)
			c.TESTQ(operand.U32(uint32(R-1)), hh)
			c.JNZ(operand.LabelRef(byRow))
			rows := g.NewLabel("vb_rows")
			c.Label(rows)
			g.valuesRows(pieces, R, ar, pr, pst, valMem)
			c.ADDQ(operand.U32(uint32(4*d*R)), ar)
			for b := 0; b < R; b++ {
				c.ADDQ(pst, pr)
			}
			c.SUBQ(operand.U8(uint8(R)), hh)
			c.JNZ(operand.LabelRef(rows))
			c.JMP(operand.LabelRef(next))
			c.Label(byRow)
			g.loop("vb_head", g.arg("grp"), func() {
				g.valuesRows(pieces, 1, ar, pr, pst, valMem)
				c.ADDQ(operand.U32(uint32(4*d)), ar)
				c.ADDQ(pst, pr)
			})
			c.Label(next)
			c.ADDQ(operand.U32(uint32(g.kvBytes()*d)), vg)
		})
	})
	c.LEAQ(operand.Mem{Base: vj, Index: vst, Scale: 4}, vj)
	c.ADDQ(operand.U8(4*scoreKeys), pj)
	c.SUBQ(operand.U8(scoreKeys), cnt)
	c.JMP(operand.LabelRef(top))
	c.Label(done)
}

// headBlockChunk is how many pieces of each of the R rows a head block
// (R > 1) holds at once: R·C accumulators, C value pieces and the weight fit
// the register file (AVX-512: 16 + 4 + 1 of 32; AVX2: 8 + 4 + 1 of 16).
const headBlockChunk = 4

// valuesRows emits R rows' share of a block of four keys: rows at ar,
// ar + 4·HeadDim, …, their weights at pr, pr + pst, …; key t's value pieces
// are at valMem(t, byte offset). For each chunk of pieces the R
// accumulators are loaded, every row whose weight w_t is not +0 gains
// w_t·v_t, and the accumulators are stored. One row (R = 1) takes chunks
// of valueChunk pieces and reads each value piece as the FMA's operand; a
// head block (R > 1) takes chunks of headBlockChunk and loads (for 16-bit
// storage, widens) each value piece once for its R rows.
func (g gen) valuesRows(pieces []amd64.Piece, R int, ar, pr, pst reg.GPVirtual, valMem func(t, off int) operand.Mem) {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	size, stem := g.valueChunk(), "vb_zero"
	if R > 1 {
		size, stem = headBlockChunk, "vh_zero"
	}
	w := c.GP32()
	for lo := 0; lo < len(pieces); lo += size {
		chunk := pieces[lo:min(len(pieces), lo+size)]
		acc := make([][]reg.VecVirtual, R)
		for b := range acc {
			acc[b] = make([]reg.VecVirtual, len(chunk))
			for i, p := range chunk {
				acc[b][i] = g.loadFull(p, amd64.Mem(ar, 4*d*b+4*p.Off))
			}
		}
		for t := 0; t < scoreKeys; t++ {
			// value is piece i of key t: loaded once for R rows, else the FMA's operand.
			value := func(i int) operand.Op { return g.kvOperand(chunk[i], valMem(t, g.kvBytes()*chunk[i].Off)) }
			if R > 1 {
				vv := make([]reg.VecVirtual, len(chunk))
				for i, p := range chunk {
					vv[i] = g.loadKV(p, valMem(t, g.kvBytes()*p.Off))
				}
				value = func(i int) operand.Op { return vv[i] }
			}
			for b := 0; b < R; b++ {
				wm := g.rowMem(pr, pst, b)
				wm.Disp = 4 * t
				skip := g.NewLabel(stem)
				c.MOVL(wm, w)
				c.TESTL(w, w)
				c.JZ(operand.LabelRef(skip)) // p = +0: the row does not meet this key
				wv := g.Vec()
				c.VBROADCASTSS(wm, wv)
				for i := range chunk {
					c.VFMADD231PS(value(i), wv, acc[b][i])
				}
				c.Label(skip)
			}
		}
		for b := range acc {
			for i, p := range chunk {
				g.storeFull(p, acc[b][i], amd64.Mem(ar, 4*d*b+4*p.Off))
			}
		}
	}
}
