package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// attnSeq is a sequence of a paged call: its position scheme
// (attnPositions), queries and keys.
type attnSeq struct {
	scheme string
	lq, lk int
}

// attnMixedPaged are seven sequences — a prefill chunk, an empty one, a
// decode row, a prefill from 0 with padding, a sequence with keys but no
// query, one near 2^31−1 and a decode row over 300 keys (441 keys in all:
// enough for a GPU kernel to split the keys, as in flash-decoding).
var attnMixedPaged = []attnSeq{{"prefill", 3, 40}, {"prefill", 0, 0}, {"decode", 1, 70}, {"prefill", 5, 5}, {"random", 0, 9}, {"near 2^31−1", 2, 17}, {"decode", 1, 300}}

// attnLongPaged are a prefill chunk of 70 queries over 80 keys and a
// decode row over 30.
var attnLongPaged = []attnSeq{{"prefill", 70, 80}, {"decode", 1, 30}}

// attnPaged runs the paged form on seqs (attnMixedPaged when none are
// given) in a cache with 41 unused slots holding NaN, the used ones
// permuted.
func attnPaged(rep *Report, s *spec.Spec, k AttentionKernels, r *rand.Rand, table []float32, o AttentionOptions, what string, st Storage, seqs ...attnSeq) {
	hd := k.HeadDim
	if len(seqs) == 0 {
		seqs = attnMixedPaged
	}
	var qpos, kpos []int32
	qStart, kStart := []int32{0}, []int32{0}
	for _, sq := range seqs {
		qp, kp := attnPositions(r, sq.scheme, sq.lq, sq.lk)
		if sq.lq == 5 {
			kp[2] = -1
		}
		qpos, kpos = append(qpos, qp...), append(kpos, kp...)
		qStart = append(qStart, int32(len(qpos)))
		kStart = append(kStart, int32(len(kpos)))
	}
	nk := len(kpos)
	nSlots := nk + 41
	row := o.KVHeads * hd
	perm := r.Perm(nSlots)
	slots := make([]int32, nk)
	for j := range slots {
		slots[j] = int32(perm[j])
	}
	ac := attnCase{qpos: qpos, kpos: kpos, o: o, qs: 1, ks: 1, st: st}
	q := attnInputs(r, ac, hd)[0]
	kc, vc := make([]float32, nSlots*row), make([]float32, nSlots*row)
	nan := float32(math.NaN())
	for i := range kc {
		kc[i], vc[i] = nan, nan
	}
	for j, sl := range slots {
		for t := range row {
			kc[int(sl)*row+t] = float32(st.Round(r.NormFloat64()))
			vc[int(sl)*row+t] = float32(st.Round(r.NormFloat64()))
		}
		if k.PagedKRotated && s.Encoding == spec.RoPE {
			kr := ropeRotateAt(s, kc[int(sl)*row:int(sl+1)*row], kpos[j:j+1], o.KVHeads, attentionSeqLen(qpos, kpos))
			copy(kc[int(sl)*row:], st.narrow(kr))
		}
	}
	c := rep.begin(fmt.Sprintf("AttentionPaged %d sequences %s QHeads=%d KVHeads=%d", len(seqs), what, o.QHeads, o.KVHeads))
	out := guardUnset(len(qpos) * o.QHeads * hd)
	ins := []*guarded{guard(q), guard(kc), guard(vc), guard(table)}
	prints := make([]fingerprint, len(ins))
	for i, g := range ins {
		prints[i] = g.fingerprint()
	}
	ints := [][]int32{qpos, qStart, slots, kpos, kStart}
	cp := make([][]int32, len(ints))
	for i, x := range ints {
		cp[i] = append([]int32(nil), x...)
	}
	if !c.call(func() {
		k.AttentionPaged(out.s, ins[0].s, ins[1].s, ins[2].s, ins[3].s, cp[0], cp[1], cp[2], cp[3], cp[4], o)
	}) {
		return
	}
	out.intact(c, "out")
	for i, what := range []string{"q", "kCache", "vCache", "table"} {
		ins[i].unchanged(c, what, prints[i])
	}
	for i, what := range []string{"qpos", "qStart", "slots", "kpos", "kStart"} {
		intsUnchanged(c, what, cp[i], ints[i])
	}
	want, bound := attentionPagedRef(s, hd, q, kc, vc, table, qpos, qStart, slots, kpos, kStart, o, k.PagedKRotated && s.Encoding == spec.RoPE, st, attnIDs(s, qpos, kpos))
	checkAttnOut(c, out.s, want, bound)
}
