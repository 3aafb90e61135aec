package attention

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/amd64"
)

// valueKeys is the keys of a valuesKV block: each row's accumulator is
// loaded and stored once per block. AVX-512's 16-bit kernel, bound by its
// arithmetic, takes eight (on AMD Zen 4 the stores of the accumulators took
// half of valuesKV16's time with blocks of four; eight took a bf16 decode
// step over 8 KV heads from 32.5 to 29 ns per key and KV head, together
// with the pair order); the float32 kernels, bound by memory, and AVX2's
// keep four (eight cost them 2–10%: one process, alternating builds).
func (g gen) valueKeys() int {
	if g.st != "" && g.ISA.Lanes == 16 {
		return 8
	}
	return 4
}

// valuesKeyBlocks emits, while cnt ≥ n = valueKeys(), the blocks of n
// keys of valuesKV's streaming path; vj, pj and cnt advance. Each row's
// accumulator is loaded once per block, gains p·v of the keys whose weight
// is not +0, and is stored. When grp is a multiple of R (scoreRows) the rows
// of a group go R at a time (valuesRows with R rows): each piece of a value
// row is loaded (and, for 16-bit storage, widened) once for the R rows
// instead of once per row, which is what a GQA decode step (4 query heads
// per KV head) spends its time on; otherwise row by row (valuesRows with
// one).
func (g gen) valuesKeyBlocks(pieces []amd64.Piece, vj, pj, vst, pst, cnt reg.GPVirtual) {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	R, n := g.scoreRows(), g.valueKeys()
	top, done := g.NewLabel("vb_keys"), g.NewLabel("vb_keys_done")
	// Key t's row is vg + t·vst for t < 4 and v4 + (t−4)·vst after (v4 =
	// vg + 4·vst, vst3 = 3·vst): up to eight rows from two bases.
	ar, pr, vg, v4, vst3 := c.GP64(), c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.LEAQ(operand.Mem{Base: vst, Index: vst, Scale: 2}, vst3)
	c.Label(top)
	c.CMPQ(cnt, operand.U8(uint8(n)))
	c.JL(operand.LabelRef(done))
	c.Load(c.Param("acc").Base(), ar)
	c.MOVQ(pj, pr)
	g.loop("vb_query", g.arg("nb"), func() {
		c.MOVQ(vj, vg)
		g.loop("vb_group", g.arg("groups"), func() {
			g.prefetchBlock(vg, vst, d, n)
			if n > 4 {
				c.LEAQ(operand.Mem{Base: vg, Index: vst, Scale: 4}, v4)
			}
			valMem := func(t, off int) operand.Mem {
				base := vg
				if t >= 4 {
					base, t = v4, t-4
				}
				switch t {
				case 0:
					return amd64.Mem(base, off)
				case 3:
					return operand.Mem{Base: base, Index: vst3, Scale: 1, Disp: off}
				}
				return operand.Mem{Base: base, Index: vst, Scale: uint8(t), Disp: off}
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
	c.LEAQ(operand.Mem{Base: vj, Index: vst, Scale: uint8(n)}, vj)
	c.ADDQ(operand.U8(uint8(4*n)), pj)
	c.SUBQ(operand.U8(uint8(n)), cnt)
	c.JMP(operand.LabelRef(top))
	c.Label(done)
}

// headBlockChunk is how many pieces of each of the R rows a head block
// (R > 1) holds at once: R·C accumulators, C value pieces and the weight fit
// the register file (AVX-512: 16 + 4 + 1 of 32; AVX2: 8 + 4 + 1 of 16).
const headBlockChunk = 4

// valuesRows emits R rows' share of a block of valueKeys() keys: rows at ar,
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
		for t := 0; t < g.valueKeys(); t++ {
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
