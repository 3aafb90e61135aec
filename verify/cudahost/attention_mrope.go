package cudahost

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// The attention form of an M-RoPE spec: the launchers take qids and kids
// (rotated form: qids only) after v, as the Go API's Attention,
// AttentionRotated and AttentionPaged do; the driver passes them from the
// int arrays after the others' (attention.go's op codes).

// mropeAttentionOps returns the driver's cases of an M-RoPE spec's
// attention launchers: P2 qids and P3 kids after P0 qpos and P1 kpos
// (rotated: P2 qids); paged, P5 qids and P6 kids after the five arrays of
// the other specs' paged form.
func mropeAttentionOps(s *spec.Spec) []string {
	n := s.Name
	opts := "(int)I[0], (int)I[1], F, (int)I[3], (int)I[4], 0);"
	return []string{
		fmt.Sprintf("case %d: return posenc_%s_attention(F0, F1, F2, F3, P2, P3, P0, P1, NP0, NP1, %s", opAttention, n, opts),
		fmt.Sprintf("case %d: return posenc_%s_attention_rotated(F0, F1, F2, F3, P2, P0, P1, NP0, NP1, %s", opAttentionRotated, n, opts),
		fmt.Sprintf("case %d: return posenc_%s_attention_paged(F0, F1, F2, F3, P5, P6, P0, P1, P2, P3, P4, NP0, NP3, NP1 - 1, "+
			"(long long)I[5], %s", opAttentionPaged, n, opts),
	}
}

// checkIDs panics unless ids, argument arg of fn, holds axes ids for each
// of the n tokens of its position list posArg, tested by division as the
// generated Go API's attnCheckIDs.
func checkIDs(fn, arg, posArg string, ids []int32, axes, n int) {
	if len(ids)%axes != 0 || len(ids)/axes != n {
		panic(fmt.Sprintf("cudahost: %s: len(%s) = %d, want Axes·len(%s) = %d·%d", fn, arg, len(ids), posArg, axes, n))
	}
}

// attentionMRoPE is Attention for an M-RoPE spec: the launchers as
// AttentionMRoPE, AttentionRotatedMRoPE and AttentionPagedMRoPE (Attention,
// AttentionRotated and AttentionPaged nil), the ids checked after the
// options and lengths as the Go API checks them (the rotated form's qids
// first, as AttentionRotated's).
func (l *Lib) attentionMRoPE() verify.AttentionKernels {
	axes := verify.MRoPEAxes(l.spec)
	return verify.AttentionKernels{
		HeadDim: l.spec.HeadDim,
		AttentionMRoPE: func(out, q, k, v []float32, qids, kids, qpos, kpos []int32, o verify.AttentionOptions) {
			const fn = "attention"
			l.attnCheck(fn, out, q, k, v, nil, len(qpos), len(kpos), len(kpos), o)
			checkIDs(fn, "qids", "qpos", qids, axes, len(qpos))
			checkIDs(fn, "kids", "kpos", kids, axes, len(kpos))
			l.attnSend(fn, opAttention, out, q, k, v, nil, qpos, kpos, o, nil, [][]int32{qpos, kpos, qids, kids})
		},
		AttentionRotatedMRoPE: func(out, q, k, v []float32, qids, qpos, kpos []int32, o verify.AttentionOptions) {
			const fn = "attention_rotated"
			checkIDs(fn, "qids", "qpos", qids, axes, len(qpos))
			l.attnCheck(fn, out, q, k, v, nil, len(qpos), len(kpos), len(kpos), o)
			l.attnSend(fn, opAttentionRotated, out, q, k, v, nil, qpos, kpos, o, nil, [][]int32{qpos, kpos, qids})
		},
		AttentionPagedMRoPE: func(out, q, kc, vc []float32, qids, kids, qpos, qStart, slots, kpos, kStart []int32, o verify.AttentionOptions) {
			const fn = "attention_paged"
			nslots := l.attnCacheSlots(fn, kc, vc, o)
			l.attnCheck(fn, out, q, kc, vc, nil, len(qpos), len(kpos), nslots, o)
			checkIDs(fn, "qids", "qpos", qids, axes, len(qpos))
			checkIDs(fn, "kids", "kpos", kids, axes, len(kpos))
			checkPaged(fn, qStart, kStart, slots, len(qpos), len(kpos), nslots)
			l.attnSend(fn, opAttentionPaged, out, q, kc, vc, nil, qpos, kpos, o, []int64{int64(nslots)},
				[][]int32{qpos, qStart, slots, kpos, kStart, qids, kids})
		},
	}
}
