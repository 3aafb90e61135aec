package verify

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/spec"
)

// The per-family setup of the attention reference (attention.go): the
// checks of a call's shapes and its inputs in the form the reference works
// on, with each family's term.

// attnCtx holds one call's inputs in the form the reference works on: q and
// k rotated (rope) in float64, with the per-element bound of their rotation
// error, and the family's bias.
type attnCtx struct {
	hd     int
	o      AttentionOptions
	qr, qe []float64 // [lq][QHeads][hd] and its rotation error bound (nil: none)
	kr, ke []float64 // [lk][KVHeads][hd] and its rotation error bound (nil: none)
	v      []float32 // [lk][KVHeads][hd]
	// bias is bias_h(qp, kp) of an unmasked key; nil for rope.
	bias func(h int, qp, kp int32) float64
	// rawBias: the kernel may add the bias as it is (rpe_bias: a table
	// value), not only relative to the row's largest (alibi's per-row shift).
	rawBias bool
	// aK and aV (rpe_full, else nil) are Shaw et al.'s [Buckets][hd] tables,
	// row(qp, kp) the row of a (query, key) pair: the score gains
	// scale·q·aK[row], the value aV[row].
	aK, aV []float64
	row    func(qp, kp int32) int
	// xlU, xlV and xlRel (xl, else nil): Transformer-XL's u and v
	// ([QHeads][hd]) and the projected relative rows ([nRel][KVHeads][hd],
	// row m for distance nRel−1−m); the score is
	// scale·((q+u)·k + (q+v)·rel[row]), row from the clamped distance.
	xlU, xlV, xlRel []float64
	xlRows          int64
	// extraDot and extraAcc are the roundings an rpe_full kernel adds to
	// each score (the sum of its two dot products) and to each output
	// element's accumulation (the bucket sums of the weights, their
	// products with aV and the sum over the Buckets rows).
	extraDot, extraAcc int
	// st is the kernel's storage: f16 or bf16 rounds the rotated q and k
	// (rope) and the output once each (storageRound).
	st Storage
}

// checkAttnArgs panics, naming the argument, unless the shapes are those of
// the contract.
func checkAttnArgs(s *spec.Spec, hd int, q, k, v, table []float32, lq, lk int, o AttentionOptions) {
	switch {
	case hd < 1:
		panic(fmt.Sprintf("verify: attention: headDim %d < 1", hd))
	case o.KVHeads < 1:
		panic(fmt.Sprintf("verify: attention: KVHeads %d < 1", o.KVHeads))
	case o.QHeads < 1 || o.QHeads%o.KVHeads != 0:
		panic(fmt.Sprintf("verify: attention: QHeads %d is not a positive multiple of KVHeads %d", o.QHeads, o.KVHeads))
	case len(q) != lq*o.QHeads*hd:
		panic("verify: attention: len(q) does not match len(qpos)·QHeads·headDim")
	case len(k) != lk*o.KVHeads*hd:
		panic("verify: attention: len(k) does not match keys·KVHeads·headDim")
	case len(v) != lk*o.KVHeads*hd:
		panic("verify: attention: len(v) does not match keys·KVHeads·headDim")
	}
	switch s.Encoding {
	case spec.RoPE:
		if hd != s.HeadDim {
			panic(fmt.Sprintf("verify: attention: headDim %d, the rope spec has %d", hd, s.HeadDim))
		}
	case spec.RPEFull:
		if hd != s.HeadDim {
			panic(fmt.Sprintf("verify: attention: headDim %d, the rpe_full spec has %d", hd, s.HeadDim))
		}
		if len(table) != 2*(2*s.RMax-1)*hd {
			panic("verify: attention: len(table) is not 2·Buckets·headDim (aK then aV)")
		}
	case spec.XL:
		if hd != s.HeadDim {
			panic(fmt.Sprintf("verify: attention: headDim %d, the xl spec has %d", hd, s.HeadDim))
		}
		if n := len(table) - 2*o.QHeads*hd; n < o.KVHeads*hd || n%(o.KVHeads*hd) != 0 {
			panic("verify: attention: len(table) is not 2·QHeads·headDim + nRel·KVHeads·headDim, nRel ≥ 1 (u, v, then rel)")
		}
	case spec.ALiBi, spec.RPEBias:
		if o.QHeads != s.Heads {
			panic(fmt.Sprintf("verify: attention: QHeads %d, the spec has %d heads", o.QHeads, s.Heads))
		}
		if s.Encoding == spec.RPEBias && len(table) != s.Heads*s.NumBuckets() {
			panic("verify: attention: len(table) does not match Heads·NumBuckets")
		}
	default:
		panic("verify: attention: encoding " + s.Encoding + " has no attention form")
	}
}

// newAttnCtx prepares a call: keys are the rows of k and v at positions kpos
// (already gathered for the paged form); seqLen picks the rope frequencies.
func newAttnCtx(s *spec.Spec, hd int, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions, kRotated bool, seqLen int, st Storage, ids mropeIDs) *attnCtx {
	a := &attnCtx{hd: hd, o: o, v: v, st: st}
	switch s.Encoding {
	case spec.RoPE:
		// What rotates each token (its position, or its M-RoPE ids), the
		// position whose bound covers its rotation (for M-RoPE its farthest
		// id) and the rotation.
		qrot, krot, qb, kb := qpos, kpos, qpos, kpos
		rotate := func(x []float32, p []int32, heads int) []float64 { return ropeRotateAt(s, x, p, heads, seqLen) }
		if n := MRoPEAxes(s); n > 0 {
			if len(ids.q) != n*len(qpos) || len(ids.k) != n*len(kpos) {
				panic("verify: attention: M-RoPE ids are not MRoPEAxes·len(qpos) and MRoPEAxes·len(kpos)")
			}
			qrot, krot, qb, kb = ids.q, ids.k, mropeFarthest(ids.q, n), mropeFarthest(ids.k, n)
			rotate = func(x []float32, p []int32, heads int) []float64 { return MRoPEApply(s, x, p, heads, false) }
		}
		a.qr = rotate(q, qrot, o.QHeads)
		a.qe = st.roundTo(a.qr, ropeElemErr(s, q, qb, o.QHeads))
		if kRotated {
			a.kr = widen(k)
		} else {
			a.kr = rotate(k, krot, o.KVHeads)
			a.ke = st.roundTo(a.kr, ropeElemErr(s, k, kb, o.KVHeads))
		}
	case spec.ALiBi:
		a.qr, a.kr = widen(q), widen(k)
		sl := ALiBiSlopes(s)
		a.bias = func(h int, qp, kp int32) float64 {
			return -sl[h] * math.Abs(float64(int64(qp)-int64(kp)))
		}
	case spec.RPEFull:
		a.qr, a.kr = widen(q), widen(k)
		n := len(table) / 2
		a.aK, a.aV = widen(table[:n]), widen(table[n:])
		a.row = func(qp, kp int32) int { return RPEFullRow(s, int(max(min(int64(qp)-int64(kp), 1<<30), -1<<30))) }
		a.extraDot, a.extraAcc = 1, 2*s.RMax+1
	case spec.XL:
		a.qr, a.kr = widen(q), widen(k)
		n := o.QHeads * hd
		a.xlU, a.xlV, a.xlRel = widen(table[:n]), widen(table[n:2*n]), widen(table[2*n:])
		a.xlRows = int64(len(a.xlRel) / (o.KVHeads * hd))
		// q+u and q+v are rounded to float32 before their dot products, and
		// the two dot products are added.
		a.extraDot = 2
	case spec.RPEBias:
		a.qr, a.kr = widen(q), widen(k)
		nb := s.NumBuckets()
		a.bias = func(h int, qp, kp int32) float64 {
			return float64(table[h*nb+RPEBucket(s, int(int64(qp)-int64(kp)))])
		}
		a.rawBias = true
	}
	return a
}

// mropeIDs are the M-RoPE ids of a call's queries and keys (both nil for
// every other encoding).
type mropeIDs struct{ q, k []int32 }

// mropeFarthest returns, per token of ids (n per token), the id of largest
// magnitude: the position whose rotation bound covers the token's.
func mropeFarthest(ids []int32, n int) []int32 {
	far := make([]int32, len(ids)/n)
	for t := range far {
		for _, p := range ids[t*n : (t+1)*n] {
			if abs64(int64(p)) > abs64(int64(far[t])) {
				far[t] = p
			}
		}
	}
	return far
}
