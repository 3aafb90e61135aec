package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// BiasKernels are the exported functions of a generated alibi or rpe_bias
// package (docs/design, "Generated Go package"), as dispatched to the variant
// under test. Scores and biases are [Heads][lq][lk]; query i sits at
// position qOffset+i, key j at j. Only the fields of the spec's encoding
// are used.
type BiasKernels struct {
	// alibi
	AddBias func(scores []float32, lq, lk, qOffset int)
	Softmax func(scores []float32, lq, lk, qOffset int, scale float32)
	Bias    func(dst []float32, lq, lk, qOffset int)

	// rpe_bias: the same three, each taking the [Heads][Buckets] table
	// second, and Bucket (rel = query position − key position).
	RPEAddBias func(scores, table []float32, lq, lk, qOffset int)
	RPESoftmax func(scores, table []float32, lq, lk, qOffset int, scale float32)
	RPEBias    func(dst, table []float32, lq, lk, qOffset int)
	Bucket     func(rel int) int

	// The position forms (alibi), checked when set: scores
	// [nh][len(qpos)][len(kpos)] for heads [h0, h0+nh), query row i at
	// qpos[i] ≥ 0, key j at kpos[j] (< 0: padding).
	SoftmaxPos func(scores []float32, qpos, kpos []int32, h0, nh int, scale float32)
	AddBiasPos func(scores []float32, qpos, kpos []int32, h0, nh int)
	BiasPos    func(dst []float32, qpos, kpos []int32, h0, nh int)
	// The rpe_bias position forms, the table second.
	RPESoftmaxPos func(scores, table []float32, qpos, kpos []int32, h0, nh int, scale float32)
	RPEAddBiasPos func(scores, table []float32, qpos, kpos []int32, h0, nh int)
	RPEBiasPos    func(dst, table []float32, qpos, kpos []int32, h0, nh int)
}

// biasOps is BiasKernels with the table argument made uniform (alibi
// ignores it).
type biasOps struct {
	add     func(scores, table []float32, lq, lk, qOffset int)
	softmax func(scores, table []float32, lq, lk, qOffset int, scale float32)
	bias    func(dst, table []float32, lq, lk, qOffset int)
}

// biasShape is one (lq, lk, qOffset) of the bias cases.
type biasShape struct{ lq, lk, qOffset int }

var (
	biasShapes = []biasShape{
		{1, 1, 0}, {4, 4, 0}, {7, 11, 4}, {3, 65, 62}, {17, 33, 0},
		{9, 5, 0}, {5, 40, 1 << 20}, {2, 300, 298}, {1, 1000, 999},
		// Decode: one or a few query rows against many keys, the query at the
		// last key, before it (non-causal rows see keys on both sides) and far
		// beyond it (2^20 and 2^31−1−lq).
		{1, 4099, 4098}, {1, 517, 100}, {3, 2053, 2050}, {1, 263, 1<<31 - 2}, {2, 129, 1 << 20},
	}
	softmaxScales = []float32{1, 0.125, float32(1 / math.Sqrt(128))}
)

// RunBias checks an alibi or rpe_bias variant against the reference: Bias
// (≤ 1e-6 of the call's largest |bias|), AddBias (≤ 1e-6·max(largest
// |bias|, |score|), exactly −Inf where causal ALiBi masks), Softmax (≤ 1e-6
// absolute, exactly 0 where masked) for scales 1, 0.125 and 1/√128 with
// scores uniform in [−4, 4], over biasShapes (lq ≠ lk, qOffset > 0,
// qOffset = 2^20, odd lengths, decode rows), and, for rpe_bias, Bucket over
// [−3·span, 3·span] and ±(2^31−1). When k has the position forms they are
// checked too (runBiasPos).
// Every call runs on slices inside sentinel-filled buffers; a slice one
// element too short must panic before anything is written. Golden cases
// named like s are checked too.
func RunBias(s *spec.Spec, k BiasKernels) *Report {
	rep := &Report{Spec: s.Name}
	var ops biasOps
	rpe := s.Encoding == spec.RPEBias
	switch {
	case rpe:
		if k.RPEAddBias == nil || k.RPESoftmax == nil || k.RPEBias == nil || k.Bucket == nil {
			rep.begin("kernels").fail("BiasKernels lacks an rpe_bias function")
			return rep
		}
		ops = biasOps{k.RPEAddBias, k.RPESoftmax, k.RPEBias}
	case s.Encoding == spec.ALiBi:
		if k.AddBias == nil || k.Softmax == nil || k.Bias == nil {
			rep.begin("kernels").fail("BiasKernels lacks an alibi function")
			return rep
		}
		ops = biasOps{
			func(sc, _ []float32, lq, lk, qo int) { k.AddBias(sc, lq, lk, qo) },
			func(sc, _ []float32, lq, lk, qo int, scale float32) { k.Softmax(sc, lq, lk, qo, scale) },
			func(dst, _ []float32, lq, lk, qo int) { k.Bias(dst, lq, lk, qo) },
		}
	default:
		rep.begin("kernels").fail("RunBias: encoding %q is not alibi or rpe_bias", s.Encoding)
		return rep
	}
	r := rand.New(rand.NewPCG(0xa1b1, 2))
	heads := s.Heads
	var table []float32
	if rpe {
		table = randomVector(r, heads*s.NumBuckets())
	}
	refBias := func(lq, lk, qo int) []float64 {
		if rpe {
			return RPEBias(s, table, lq, lk, qo)
		}
		return ALiBiBias(s, lq, lk, qo)
	}
	for _, sh := range biasShapes {
		lq, lk, qo := sh.lq, sh.lk, sh.qOffset
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)
		n := heads * lq * lk
		bias := refBias(lq, lk, qo)
		mb := maxAbs(bias)
		mask := BiasMask(s, qo)

		// Bias: every element written, unmasked.
		c := rep.begin("Bias " + shape)
		dst := guardUnset(n)
		tg := guard(table)
		tfp := tg.fingerprint()
		if c.call(func() { ops.bias(dst.s, tg.s, lq, lk, qo) }) {
			dst.intact(c, "dst")
			tg.unchanged(c, "table", tfp)
			for i, w := range bias {
				c.near("dst", i, float64(dst.s[i]), w, 1e-6*mb+1e-30)
			}
		}

		// AddBias.
		scores := uniformScores(r, n)
		c = rep.begin("AddBias " + shape)
		sg, tg := guard(scores), guard(table)
		tfp = tg.fingerprint()
		if c.call(func() { ops.add(sg.s, tg.s, lq, lk, qo) }) {
			sg.intact(c, "scores")
			tg.unchanged(c, "table", tfp)
			want := AddBias(scores, bias, mask, heads, lq, lk)
			for i, w := range want {
				if math.IsInf(w, -1) {
					if !math.IsInf(float64(sg.s[i]), -1) {
						c.fail("scores[%d] = %v, want −Inf (masked)", i, sg.s[i])
					}
					continue
				}
				b := 1e-6*math.Max(mb, math.Abs(float64(scores[i]))) + 1e-30
				c.near("scores", i, float64(sg.s[i]), w, b)
			}
		}

		// Softmax.
		for _, scale := range softmaxScales {
			scores := uniformScores(r, n)
			c := rep.begin(fmt.Sprintf("Softmax %s scale=%.4g", shape, scale))
			sg, tg := guard(scores), guard(table)
			tfp := tg.fingerprint()
			if !c.call(func() { ops.softmax(sg.s, tg.s, lq, lk, qo, scale) }) {
				continue
			}
			sg.intact(c, "scores")
			tg.unchanged(c, "table", tfp)
			want := Softmax(scores, bias, mask, heads, lq, lk, float64(scale))
			checkSoftmax(c, sg.s, want, mask, heads, lq, lk)
		}
	}

	// Length mismatches: one element too short.
	const lq, lk, qo = 4, 4, 0
	n := heads * lq * lk
	short, full := guardUnset(n-1), guard(table)
	rep.expectPanic("Bias with dst one element short", func() { ops.bias(short.s, full.s, lq, lk, qo) }, short, full)
	sc, full2 := guard(uniformScores(r, n-1)), guard(table)
	rep.expectPanic("AddBias with scores one element short", func() { ops.add(sc.s, full2.s, lq, lk, qo) }, sc, full2)
	sc2, full3 := guard(uniformScores(r, n-1)), guard(table)
	rep.expectPanic("Softmax with scores one element short", func() { ops.softmax(sc2.s, full3.s, lq, lk, qo, 1) }, sc2, full3)
	if rpe {
		tshort := table[:len(table)-1]
		d, t1 := guardUnset(n), guard(tshort)
		rep.expectPanic("Bias with table one element short", func() { ops.bias(d.s, t1.s, lq, lk, qo) }, d, t1)
		s1, t2 := guard(uniformScores(r, n)), guard(tshort)
		rep.expectPanic("AddBias with table one element short", func() { ops.add(s1.s, t2.s, lq, lk, qo) }, s1, t2)
		s2, t3 := guard(uniformScores(r, n)), guard(tshort)
		rep.expectPanic("Softmax with table one element short", func() { ops.softmax(s2.s, t3.s, lq, lk, qo, 1) }, s2, t3)
		bucketCase(rep, s, k.Bucket)
	}
	if pk, ok := posOps(s, k); ok {
		runBiasPos(rep, s, pk, table)
	}
	biasGolden(rep, s, ops)
	return rep
}

// uniformScores draws n scores uniformly from [−4, 4].
func uniformScores(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(8*r.Float64() - 4)
	}
	return v
}

// checkSoftmax compares softmax outputs: ≤ 1e-6 absolute, exactly 0 where
// masked.
func checkSoftmax(c *check, got []float32, want []float64, mask Mask, heads, lq, lk int) {
	for h := range heads {
		for i := range lq {
			for j := range lk {
				x := (h*lq+i)*lk + j
				if mask != nil && mask(h, i, j) {
					if got[x] != 0 {
						c.fail("scores[%d] = %v, want 0 (masked)", x, got[x])
					}
					continue
				}
				c.near("scores", x, float64(got[x]), want[x], 1e-6)
			}
		}
	}
}

// bucketCase checks Bucket(rel) == RPEBucket(s, rel) over [−3·span,
// 3·span] and at ±(2^31−1).
func bucketCase(rep *Report, s *spec.Spec, bucket func(int) int) {
	c := rep.begin("Bucket")
	span := s.RMax
	if s.Buckets != nil {
		span = s.Buckets.MaxDistance
	}
	rels := []int{math.MaxInt32, -math.MaxInt32, math.MaxInt32 - 1, -math.MaxInt32 + 1, 1 << 20, -(1 << 20)}
	for rel := -3 * span; rel <= 3*span; rel++ {
		rels = append(rels, rel)
	}
	for _, rel := range rels {
		var got int
		if !c.call(func() { got = bucket(rel) }) {
			return
		}
		if want := RPEBucket(s, rel); got != want {
			c.fail("Bucket(%d) = %d, want %d", rel, got, want)
		}
	}
	if c.fails == 0 {
		rep.ratio(0, c.name)
	}
}

// biasGolden runs Bias (and Softmax for alibi) on the golden case named like
// s, if any.
func biasGolden(rep *Report, s *spec.Spec, ops biasOps) {
	gc, err := goldenCase(s)
	if err != nil {
		rep.begin("golden").fail("%v", err)
		return
	}
	if gc == nil || gc.Kind != s.Encoding {
		return
	}
	lq, lk, qo := gc.LQ, gc.LK, gc.QOffset
	c := rep.begin("golden:" + gc.Name + " Bias")
	dst := guardUnset(len(gc.WantBias))
	tg := guard(gc.Table)
	if c.call(func() { ops.bias(dst.s, tg.s, lq, lk, qo) }) {
		dst.intact(c, "dst")
		mb := 0.0
		for _, w := range gc.WantBias {
			mb = math.Max(mb, math.Abs(float64(w)))
		}
		for i, w := range gc.WantBias {
			c.near("dst", i, float64(dst.s[i]), float64(w), 1e-6*mb+1e-30)
		}
	}
	if gc.Kind != spec.ALiBi {
		return
	}
	c = rep.begin("golden:" + gc.Name + " Softmax")
	sg := guard(gc.Scores)
	if c.call(func() { ops.softmax(sg.s, nil, lq, lk, qo, float32(gc.Scale)) }) {
		sg.intact(c, "scores")
		want := make([]float64, len(gc.WantSoftmax))
		for i, w := range gc.WantSoftmax {
			want[i] = float64(w)
		}
		checkSoftmax(c, sg.s, want, BiasMask(s, qo), gc.Heads, lq, lk)
	}
}
