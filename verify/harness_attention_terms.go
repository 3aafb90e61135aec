package verify

import (
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// The operands RunAttention gives the families whose attention form takes
// more than a table: M-RoPE's ids and Transformer-XL's u, v and rel rows.

// attnMRoPEIDs returns the M-RoPE ids RunAttention gives tokens at
// positions pos (nil unless s is an M-RoPE spec): MRoPEAxes(s) per token,
// a function of the position only, so that a kernel call and the reference
// agree without passing them around. A third of the positions are text
// tokens (every axis at the position); the others vision patches: axis 0
// at the position, each other axis up to 64 from it (a hash of the
// position picks which and how far), clamped to the int32 range.
func attnMRoPEIDs(s *spec.Spec, pos []int32) []int32 {
	n := MRoPEAxes(s)
	if n == 0 {
		return nil
	}
	ids := make([]int32, 0, n*len(pos))
	for _, p := range pos {
		h := uint64(int64(p)) * 0x9e3779b97f4a7c15
		for a := range n {
			d := int64(0)
			if a > 0 && (h>>61)%3 != 0 {
				d = int64(h>>(10*a)&0x7f) - 64
			}
			ids = append(ids, int32(min(max(int64(p)+d, math.MinInt32), math.MaxInt32)))
		}
	}
	return ids
}

// attnIDs returns the M-RoPE ids of a call's queries and keys
// (attnMRoPEIDs; empty for other encodings).
func attnIDs(s *spec.Spec, qpos, kpos []int32) mropeIDs {
	return mropeIDs{attnMRoPEIDs(s, qpos), attnMRoPEIDs(s, kpos)}
}

// mropeForms returns k with Attention, AttentionRotated and AttentionPaged
// calling the M-RoPE forms with the ids of attnMRoPEIDs, so that the rest
// of the harness runs them as any rope package's.
func (k AttentionKernels) mropeForms(s *spec.Spec) AttentionKernels {
	if k.AttentionMRoPE != nil {
		at := k.AttentionMRoPE
		k.Attention = func(out, q, kk, v, _ []float32, qpos, kpos []int32, o AttentionOptions) {
			at(out, q, kk, v, attnMRoPEIDs(s, qpos), attnMRoPEIDs(s, kpos), qpos, kpos, o)
		}
	}
	if k.AttentionRotatedMRoPE != nil {
		rot := k.AttentionRotatedMRoPE
		k.AttentionRotated = func(out, q, kk, v []float32, qpos, kpos []int32, o AttentionOptions) {
			rot(out, q, kk, v, attnMRoPEIDs(s, qpos), qpos, kpos, o)
		}
	}
	if k.AttentionPagedMRoPE != nil {
		pg := k.AttentionPagedMRoPE
		k.AttentionPaged = func(out, q, kc, vc, _ []float32, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions) {
			pg(out, q, kc, vc, attnMRoPEIDs(s, qpos), attnMRoPEIDs(s, kpos), qpos, qStart, slots, kpos, kStart, o)
		}
	}
	return k
}

// attnXLTable returns xl's packed operands for a call with options o at
// positions qpos, kpos: u and v ([QHeads][hd] each), then nRel rows of
// KVHeads·hd, nRel cycling with x through D+1 (every distance D of the call
// has its own row), D/2+1 (the far half clamps, as Transformer-XL's
// clamp_len) and 1, D = the largest qpos − kpos over non-negative kpos,
// at most 700.
func attnXLTable(r *rand.Rand, hd int, o AttentionOptions, qpos, kpos []int32, x int) []float32 {
	d := int64(0)
	for _, qp := range qpos {
		for _, kp := range kpos {
			if kp >= 0 {
				d = max(d, int64(qp)-int64(kp))
			}
		}
	}
	d = min(d, 699)
	nrel := [3]int64{d + 1, d/2 + 1, 1}[x%3]
	t := make([]float32, 2*o.QHeads*hd+int(nrel)*o.KVHeads*hd)
	for i := range t {
		t[i] = float32(r.NormFloat64())
	}
	return t
}
