package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// BiasPosKernels are the position forms of a generated alibi or rpe_bias
// package: scores [nh][len(qpos)][len(kpos)] for heads [h0, h0+nh), query
// row i at position qpos[i] ≥ 0, key j at kpos[j] (< 0: padding). table is
// the whole [Heads][Buckets] (nil for alibi).
type BiasPosKernels struct {
	Softmax func(scores, table []float32, qpos, kpos []int32, h0, nh int, scale float32)
	AddBias func(scores, table []float32, qpos, kpos []int32, h0, nh int)
	Bias    func(dst, table []float32, qpos, kpos []int32, h0, nh int)
}

// posOps returns the position forms of k with the table argument uniform,
// and whether the spec's encoding has them all.
func posOps(s *spec.Spec, k BiasKernels) (BiasPosKernels, bool) {
	if s.Encoding == spec.RPEBias {
		return BiasPosKernels{k.RPESoftmaxPos, k.RPEAddBiasPos, k.RPEBiasPos},
			k.RPESoftmaxPos != nil && k.RPEAddBiasPos != nil && k.RPEBiasPos != nil
	}
	if k.SoftmaxPos == nil || k.AddBiasPos == nil || k.BiasPos == nil {
		return BiasPosKernels{}, false
	}
	return BiasPosKernels{
		func(sc, _ []float32, q, kp []int32, h0, nh int, scale float32) {
			k.SoftmaxPos(sc, q, kp, h0, nh, scale)
		},
		func(sc, _ []float32, q, kp []int32, h0, nh int) { k.AddBiasPos(sc, q, kp, h0, nh) },
		func(d, _ []float32, q, kp []int32, h0, nh int) { k.BiasPos(d, q, kp, h0, nh) },
	}, true
}

// posCase is one call of the position forms: positions and a head range.
type posCase struct {
	name       string
	qpos, kpos []int32
	h0, nh     int
}

// posKinds are the key layouts of the position cases: one run (a sequence,
// or a paged cache's contiguous blocks: softmaxRamp's fast path for alibi,
// fillRel's for rpe_bias), a run with a padded tail, 16-key pages in
// shuffled order, and random positions with padding between them.
var posKinds = []string{"run", "run+pad", "paged", "random+pad"}

// posBands are the first key positions: small, 2^20, and near 2^31−1
// (every position stays ≤ 2^31−1).
var posBands = []int64{0, 1000, 1 << 20, math.MaxInt32}

// posCases builds the position cases for a spec with heads heads.
func posCases(r *rand.Rand, heads int) []posCase {
	shapes := [][2]int{{1, 1}, {1, 9}, {3, 67}, {2, 130}, {1, 4099}, {4, 33}}
	headSets := [][2]int{{0, heads}, {heads - 1, 1}}
	if heads >= 3 {
		headSets = append(headSets, [2]int{1, heads - 2})
	}
	var cs []posCase
	for si, sh := range shapes {
		lq, lk := sh[0], sh[1]
		for ki, kind := range posKinds {
			base := posBands[(si+ki)%len(posBands)]
			if base > math.MaxInt32-int64(2*lk+8) {
				base = math.MaxInt32 - int64(2*lk+8)
			}
			kpos := make([]int32, lk)
			switch kind {
			case "run":
				for j := range kpos {
					kpos[j] = int32(base + int64(j))
				}
			case "run+pad":
				for j := range kpos {
					kpos[j] = int32(base + int64(j))
					if j >= lk-lk/4 && j > 0 {
						kpos[j] = -1
					}
				}
			case "paged":
				pages := r.Perm((lk + 15) / 16)
				for j := range kpos {
					kpos[j] = int32(base + int64(16*pages[j/16]+j%16))
				}
			case "random+pad":
				for j := range kpos {
					kpos[j] = int32(base + r.Int64N(int64(2*lk)))
					if r.IntN(5) == 0 {
						kpos[j] = int32(-1 - r.IntN(3))
					}
				}
			}
			qpos := make([]int32, lq)
			for i := range qpos {
				switch (i + ki) % 3 {
				case 0: // decode: the query after the keys
					qpos[i] = int32(base + int64(lk-1))
				case 1: // among the keys
					qpos[i] = int32(base + r.Int64N(int64(lk)))
				default: // before every key: causal rows with no key
					qpos[i] = int32(max(base-1-r.Int64N(3), 0))
				}
			}
			for _, hs := range headSets {
				cs = append(cs, posCase{
					name: fmt.Sprintf("lq=%d lk=%d %s from %d heads [%d,+%d)", lq, lk, kind, base, hs[0], hs[1]),
					qpos: qpos, kpos: kpos, h0: hs[0], nh: hs[1],
				})
			}
		}
	}
	// Queries at 2^31−1 far after keys 0…99 (some padding): biases near
	// −slope·2^31, which only the per-row shift keeps exact in float32.
	far := make([]int32, 100)
	for j := range far {
		far[j] = int32(j)
		if j%7 == 3 {
			far[j] = -1
		}
	}
	cs = append(cs, posCase{name: "queries at 2^31−1 after keys 0…99", qpos: []int32{math.MaxInt32, math.MaxInt32 - 5}, kpos: far, h0: 0, nh: heads})
	// Every key padding: rows with no valid key.
	cs = append(cs, posCase{name: "all keys padding", qpos: []int32{5, 0}, kpos: []int32{-1, -1, -7}, h0: 0, nh: heads})
	return cs
}

// runBiasPos checks the position forms against PosBias and PosMask: BiasPos
// (≤ 1e-6 of the largest |bias|, 0 on padding keys), AddBiasPos (≤ 1e-6 of
// max(|bias|, |score|), exactly −Inf where masked) and SoftmaxPos (≤ 1e-6
// absolute, exactly 0 where masked), then the panics on a head range past
// Heads, a negative head or query position and a short buffer.
func runBiasPos(rep *Report, s *spec.Spec, k BiasPosKernels, table []float32) {
	r := rand.New(rand.NewPCG(0xb1a5, 3))
	for _, pc := range posCases(r, s.Heads) {
		lq, lk := len(pc.qpos), len(pc.kpos)
		n := pc.nh * lq * lk
		bias := PosBias(s, table, pc.qpos, pc.kpos, pc.h0, pc.nh)
		mb := maxAbs(bias)
		mask := PosMask(s, pc.qpos, pc.kpos)
		q0, k0 := append([]int32(nil), pc.qpos...), append([]int32(nil), pc.kpos...)

		c := rep.begin("BiasPos " + pc.name)
		dst, tg := guardUnset(n), guard(table)
		if c.call(func() { k.Bias(dst.s, tg.s, pc.qpos, pc.kpos, pc.h0, pc.nh) }) {
			dst.intact(c, "dst")
			tg.unchanged(c, "table", guard(table).fingerprint())
			for i, w := range bias {
				c.near("dst", i, float64(dst.s[i]), w, 1e-6*mb+1e-30)
			}
		}

		scores := uniformScores(r, n)
		c = rep.begin("AddBiasPos " + pc.name)
		sg, tg := guard(scores), guard(table)
		if c.call(func() { k.AddBias(sg.s, tg.s, pc.qpos, pc.kpos, pc.h0, pc.nh) }) {
			sg.intact(c, "scores")
			tg.unchanged(c, "table", guard(table).fingerprint())
			for i, w := range AddBias(scores, bias, mask, pc.nh, lq, lk) {
				if math.IsInf(w, -1) {
					if !math.IsInf(float64(sg.s[i]), -1) {
						c.fail("scores[%d] = %v, want −Inf (masked)", i, sg.s[i])
					}
					continue
				}
				c.near("scores", i, float64(sg.s[i]), w, 1e-6*math.Max(mb, math.Abs(float64(scores[i])))+1e-30)
			}
		}

		scores = uniformScores(r, n)
		c = rep.begin("SoftmaxPos " + pc.name)
		sg, tg = guard(scores), guard(table)
		if c.call(func() { k.Softmax(sg.s, tg.s, pc.qpos, pc.kpos, pc.h0, pc.nh, 0.125) }) {
			sg.intact(c, "scores")
			tg.unchanged(c, "table", guard(table).fingerprint())
			checkSoftmax(c, sg.s, Softmax(scores, bias, mask, pc.nh, lq, lk, 0.125), mask, pc.nh, lq, lk)
		}
		intsUnchanged(c, "qpos", pc.qpos, q0)
		intsUnchanged(c, "kpos", pc.kpos, k0)
	}

	qpos, kpos := []int32{3, 4}, []int32{0, 1, 2}
	n := s.Heads * len(qpos) * len(kpos)
	for _, bad := range []struct {
		name      string
		qpos      []int32
		h0, nh, n int
	}{
		{"heads past Heads", qpos, 1, s.Heads, n},
		{"negative h0", qpos, -1, 1, len(qpos) * len(kpos)},
		{"negative qpos", []int32{3, -1}, 0, s.Heads, n},
		{"scores one element short", qpos, 0, s.Heads, n - 1},
	} {
		sc, tg := guard(uniformScores(r, bad.n)), guard(table)
		rep.expectPanic("SoftmaxPos with "+bad.name, func() { k.Softmax(sc.s, tg.s, bad.qpos, kpos, bad.h0, bad.nh, 1) }, sc, tg)
		ad, tg2 := guard(uniformScores(r, bad.n)), guard(table)
		rep.expectPanic("AddBiasPos with "+bad.name, func() { k.AddBias(ad.s, tg2.s, bad.qpos, kpos, bad.h0, bad.nh) }, ad, tg2)
		d, tg3 := guardUnset(bad.n), guard(table)
		rep.expectPanic("BiasPos with "+bad.name, func() { k.Bias(d.s, tg3.s, bad.qpos, kpos, bad.h0, bad.nh) }, d, tg3)
	}
}
