package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/spec"
)

// This file checks AttentionRef against a direct computation written
// differently, and proves RunAttention passes a correct float32 kernel and
// fails wrong ones.

const (
	attnRopeYAML = `name: attnrope
encoding: rope
head_dim: 32
rotary_dim: 24
layout: half
max_position: 4096
`
	attnDynYAML = `name: attndyn
encoding: rope
head_dim: 16
layout: interleaved
scaling:
  type: dynamic
  factor: 4
  original_max_position: 64
`
	attnALiBiYAML = `name: attnalibi
encoding: alibi
heads: 8
`
	attnT5YAML = `name: attnt5
encoding: rpe_bias
heads: 4
buckets:
  num: 32
  max_distance: 128
`
	attnClampYAML = `name: attnclamp
encoding: rpe_bias
heads: 6
r_max: 9
`
)

// attnKnobs break one thing of the direct computation.
type attnKnobs struct {
	biasSign  float64 // −1: bias negated (0 means +1)
	causalOff int     // keys up to qpos+causalOff are visible when causal
	noScale   bool    // scale ignored
	windowOff int     // the window masks at distance ≥ Window+windowOff
	f32       bool    // float32 arithmetic (the naive two-pass kernel)
	gqaModulo bool    // query head h reads KV head h % KVHeads
}

// attnRotate rotates x as RoPEApply would for a call whose largest
// position is seqLen−1: a zero token at seqLen−1 is appended, so
// RoPEApply's own CallSeqLen is seqLen, then dropped.
func attnRotate(s *spec.Spec, x []float32, pos []int32, heads, seqLen int) []float64 {
	if seqLen == 0 {
		return RoPEApply(s, x, pos, heads, false)
	}
	xx := append(append([]float32(nil), x...), make([]float32, heads*s.HeadDim)...)
	pp := append(append([]int32(nil), pos...), int32(seqLen-1))
	return RoPEApply(s, xx, pp, heads, false)[:len(x)]
}

// directAttention computes the attention form directly: per query and head
// the list of visible keys, their logits and math.Exp of each minus the
// largest over the sum. With kn.f32 it is the naive float32 kernel
// (float32 dot products, exp, sums and division; the alibi bias formed
// relative to the row's nearest key).
func directAttention(s *spec.Spec, hd int, out []float64, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions, kRotated bool, kn attnKnobs) {
	seqLen := 0
	for _, p := range append(append([]int32(nil), qpos...), kpos...) {
		if int(p)+1 > seqLen {
			seqLen = int(p) + 1
		}
	}
	var qr, kr []float64
	if s.Encoding == spec.RoPE {
		qr = attnRotate(s, q, qpos, o.QHeads, seqLen)
		if kRotated {
			kr = widen(k)
		} else {
			kr = attnRotate(s, k, kpos, o.KVHeads, seqLen)
		}
	} else {
		qr, kr = widen(q), widen(k)
	}
	if kn.f32 { // the kernel works on float32 rotated values
		qr, kr = widen(narrow(qr)), widen(narrow(kr))
	}
	var slopes []float64
	if s.Encoding == spec.ALiBi {
		slopes = ALiBiSlopes(s)
	}
	sign := 1.0
	if kn.biasSign != 0 {
		sign = kn.biasSign
	}
	scale := float64(o.Scale)
	if kn.noScale {
		scale = 1
	}
	for i, qp := range qpos {
		for h := range o.QHeads {
			g := h / (o.QHeads / o.KVHeads)
			if kn.gqaModulo {
				g = h % o.KVHeads
			}
			var keys []int
			dmin := int64(math.MaxInt64)
			for j, kp := range kpos {
				d := int64(qp) - int64(kp)
				if kp < 0 || (o.Causal && d < -int64(kn.causalOff)) || (o.Window > 0 && d >= int64(o.Window+kn.windowOff)) {
					continue
				}
				keys = append(keys, j)
				dmin = min(dmin, max(d, -d))
			}
			row := out[(i*o.QHeads+h)*hd : (i*o.QHeads+h+1)*hd]
			clear(row)
			if len(keys) == 0 {
				continue
			}
			logit := make([]float64, len(keys))
			for n, j := range keys {
				qv := qr[(i*o.QHeads+h)*hd:]
				kv := kr[(j*o.KVHeads+g)*hd:]
				d := int64(qp) - int64(kpos[j])
				if kn.f32 {
					var dot float32
					for t := range hd {
						dot += float32(qv[t]) * float32(kv[t])
					}
					var b float32
					switch s.Encoding {
					case spec.ALiBi:
						b = float32(sign) * -float32(slopes[h]) * float32(max(d, -d)-dmin)
					case spec.RPEBias:
						b = float32(sign) * table[h*s.NumBuckets()+RPEBucket(s, int(d))]
					}
					logit[n] = float64(float32(scale)*dot + b)
					continue
				}
				dot := 0.0
				for t := range hd {
					dot += qv[t] * kv[t]
				}
				b := 0.0
				switch s.Encoding {
				case spec.ALiBi:
					b = -slopes[h] * math.Abs(float64(d))
				case spec.RPEBias:
					b = float64(table[h*s.NumBuckets()+RPEBucket(s, int(d))])
				}
				logit[n] = scale*dot + sign*b
			}
			mx := logit[0]
			for _, x := range logit {
				mx = math.Max(mx, x)
			}
			if kn.f32 {
				var l float32
				p := make([]float32, len(keys))
				for n, x := range logit {
					p[n] = float32(math.Exp(float64(float32(x) - float32(mx))))
					l += p[n]
				}
				for d := range hd {
					var acc float32
					for n, j := range keys {
						acc += p[n] * v[(j*o.KVHeads+g)*hd+d]
					}
					row[d] = float64(acc / l)
				}
				continue
			}
			sum := 0.0
			for _, x := range logit {
				sum += math.Exp(x - mx)
			}
			for n, j := range keys {
				wt := math.Exp(logit[n]-mx) / sum
				for d := range hd {
					row[d] += wt * float64(v[(j*o.KVHeads+g)*hd+d])
				}
			}
		}
	}
}

// attnArgs panics like a generated package on a misuse, naming the argument.
func attnArgs(s *spec.Spec, hd int, out, q, k, v, table []float32, lq, lk int, o AttentionOptions) {
	switch {
	case o.KVHeads < 1:
		panic("attention: KVHeads < 1")
	case o.QHeads%o.KVHeads != 0:
		panic("attention: QHeads is not a multiple of KVHeads")
	case s.Encoding != spec.RoPE && o.QHeads != s.Heads:
		panic("attention: QHeads != Heads")
	}
	mustLen("out", len(out), lq*o.QHeads*hd)
	mustLen("q", len(q), lq*o.QHeads*hd)
	mustLen("k", len(k), lk*o.KVHeads*hd)
	mustLen("v", len(v), lk*o.KVHeads*hd)
	if s.Encoding == spec.RPEBias {
		mustLen("table", len(table), s.Heads*s.NumBuckets())
	}
}

// attnTestKernels builds AttentionKernels on directAttention with knobs kn.
func attnTestKernels(s *spec.Spec, hd int, kn attnKnobs) AttentionKernels {
	run := func(out, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions, kRot bool) {
		attnArgs(s, hd, out, q, k, v, table, len(qpos), len(kpos), o)
		res := make([]float64, len(out))
		directAttention(s, hd, res, q, k, v, table, qpos, kpos, o, kRot, kn)
		store(out, res)
	}
	ks := AttentionKernels{
		HeadDim: hd,
		Attention: func(out, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions) {
			run(out, q, k, v, table, qpos, kpos, o, false)
		},
		AttentionPaged: func(out, q, kCache, vCache, table []float32, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions) {
			mustLen("out", len(out), len(qpos)*o.QHeads*hd)
			row := o.KVHeads * hd
			checkPaged(len(qpos), len(kpos), len(kCache), row, qStart, slots, kStart)
			// Per sequence, with the whole call's seqLen: a sequence's own
			// positions would pick other dynamic frequencies.
			for t := range len(qStart) - 1 {
				q0, q1, k0, k1 := int(qStart[t]), int(qStart[t+1]), int(kStart[t]), int(kStart[t+1])
				var kk, vv []float32
				for _, sl := range slots[k0:k1] {
					kk = append(kk, kCache[int(sl)*row:int(sl+1)*row]...)
					vv = append(vv, vCache[int(sl)*row:int(sl+1)*row]...)
				}
				res := make([]float64, (q1-q0)*o.QHeads*hd)
				qp := append(append([]int32(nil), qpos[q0:q1]...), attnPad(qpos, kpos)...)
				qq := append(append([]float32(nil), q[q0*o.QHeads*hd:q1*o.QHeads*hd]...), make([]float32, (len(qp)-(q1-q0))*o.QHeads*hd)...)
				full := make([]float64, len(qq))
				directAttention(s, hd, full, qq, kk, vv, table, qp, kpos[k0:k1], o, false, kn)
				copy(res, full)
				store(out[q0*o.QHeads*hd:q1*o.QHeads*hd], res)
			}
		},
	}
	if s.Encoding == spec.RoPE {
		ks.AttentionRotated = func(out, q, k, v []float32, qpos, kpos []int32, o AttentionOptions) {
			run(out, q, k, v, nil, qpos, kpos, o, true)
		}
	}
	return ks
}

// attnPad returns one extra query position at the call's largest position
// (none when there is no non-negative one), so a per-sequence direct call
// rotates with the whole call's frequencies.
func attnPad(qpos, kpos []int32) []int32 {
	if n := attentionSeqLen(qpos, kpos); n > 0 {
		return []int32{int32(n - 1)}
	}
	return nil
}

// attnSpecs are the specs of the tests with their head dims.
func attnSpecs(t *testing.T) []struct {
	s  *spec.Spec
	hd int
} {
	return []struct {
		s  *spec.Spec
		hd int
	}{
		{parse(t, attnRopeYAML), 32}, {parse(t, attnDynYAML), 16},
		{parse(t, attnALiBiYAML), 24}, {parse(t, attnT5YAML), 16}, {parse(t, attnClampYAML), 8},
	}
}

func TestAttentionRefDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sp := range attnSpecs(t) {
		s, hd := sp.s, sp.hd
		heads := [2]int{4, 2}
		if s.Encoding != spec.RoPE {
			heads = [2]int{s.Heads, s.Heads / 2}
		}
		for ci, c := range []struct {
			qpos, kpos []int32
			o          AttentionOptions
		}{
			{[]int32{0, 1, 2, 3}, []int32{0, 1, 2, 3}, AttentionOptions{Causal: true}},
			{[]int32{70, 200}, []int32{5, -1, 150, 199, 200, 201, 64}, AttentionOptions{Window: 60}},
			{[]int32{0, 9}, []int32{3, -2, 9, 1}, AttentionOptions{Causal: true, Window: 1}}, // query 0: nothing
			{[]int32{math.MaxInt32}, []int32{0, 1, math.MaxInt32 - 3, -1}, AttentionOptions{}},
		} {
			o := c.o
			o.QHeads, o.KVHeads, o.Scale = heads[0], heads[1], 0.3
			ac := attnCase{qpos: c.qpos, kpos: c.kpos, o: o, qs: 1, ks: 1, st: StorageF32}
			in := attnInputs(r, ac, hd)
			var table []float32
			if s.Encoding == spec.RPEBias {
				table = narrow(widen(randomVector(r, s.Heads*s.NumBuckets())))
			}
			for _, kRot := range []bool{false, s.Encoding == spec.RoPE} {
				got, bound := AttentionRef(s, hd, in[0], in[1], in[2], table, c.qpos, c.kpos, o, kRot)
				want := make([]float64, len(got))
				directAttention(s, hd, want, in[0], in[1], in[2], table, c.qpos, c.kpos, o, kRot, attnKnobs{})
				for i := range want {
					if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
						t.Fatalf("%s case %d kRot=%v: out[%d] = %v, direct %v", s.Name, ci, kRot, i, got[i], want[i])
					}
					if (bound[i] == 0) != (want[i] == 0 && ci == 2 && i < o.QHeads*hd) {
						t.Fatalf("%s case %d: bound[%d] = %g (zero only on the fully masked row)", s.Name, ci, i, bound[i])
					}
				}
			}
		}
	}
}

func TestAttentionPagedRefDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sp := range attnSpecs(t) {
		s, hd := sp.s, sp.hd
		qh := 3
		if s.Encoding != spec.RoPE {
			qh = s.Heads
		}
		o := AttentionOptions{QHeads: qh, KVHeads: 1, Scale: 0.25, Causal: true}
		qpos := []int32{9, 10, 0, 80}
		qStart, kStart := []int32{0, 2, 2, 3, 4}, []int32{0, 11, 13, 14, 19}
		kpos := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1, 5, 1, 78, 79, -1, 80}
		slots := make([]int32, len(kpos))
		for j, p := range r.Perm(30)[:len(kpos)] {
			slots[j] = int32(p)
		}
		kc, vc := make([]float32, 30*hd), make([]float32, 30*hd)
		for i := range kc {
			kc[i], vc[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		q := make([]float32, len(qpos)*qh*hd)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		var table []float32
		if s.Encoding == spec.RPEBias {
			table = randomVector(r, s.Heads*s.NumBuckets())
		}
		got, bound := attentionPagedRef(s, hd, q, kc, vc, table, qpos, qStart, slots, kpos, kStart, o, false, StorageF32, mropeIDs{})
		out := make([]float32, len(got))
		attnTestKernels(s, hd, attnKnobs{}).AttentionPaged(out, q, kc, vc, table, qpos, qStart, slots, kpos, kStart, o)
		for i := range got {
			if math.Abs(float64(out[i])-got[i]) > 1e-6*(1+math.Abs(got[i])) {
				t.Fatalf("%s: out[%d] = %v, direct %v", s.Name, i, got[i], out[i])
			}
		}
		// Query 2 (sequence 2, position 0) sees only key 5 > 0: masked.
		for i := 2 * qh * hd; i < 3*qh*hd; i++ {
			if got[i] != 0 || bound[i] != 0 {
				t.Fatalf("%s: fully masked query: out[%d] = %v, bound %v", s.Name, i, got[i], bound[i])
			}
		}
	}
}

func TestAttentionHarnessPassesFloat32(t *testing.T) {
	for _, sp := range attnSpecs(t) {
		t.Run(sp.s.Name, func(t *testing.T) {
			rep := RunAttention(sp.s, attnTestKernels(sp.s, sp.hd, attnKnobs{f32: true}))
			expectPass(t, rep)
			t.Logf("%d cases, max ratio %.3g (%s)", rep.Cases, rep.MaxRatio, rep.Worst)
		})
	}
}

func TestAttentionHarnessPassesFloat64(t *testing.T) {
	for _, sp := range attnSpecs(t)[:3] {
		expectPass(t, RunAttention(sp.s, attnTestKernels(sp.s, sp.hd, attnKnobs{})))
	}
}

func TestAttentionHarnessCatchesBugs(t *testing.T) {
	specs := attnSpecs(t)
	rope, alibi, t5 := specs[0], specs[2], specs[3]
	for _, c := range []struct {
		name string
		sp   struct {
			s  *spec.Spec
			hd int
		}
		kn   attnKnobs
		want string
	}{
		{"alibi bias sign flipped", alibi, attnKnobs{biasSign: -1}, "out["},
		{"rpe_bias bias sign flipped", t5, attnKnobs{biasSign: -1}, "out["},
		{"causal mask off by one (rope)", rope, attnKnobs{causalOff: 1}, "out["},
		{"causal mask off by one (alibi)", alibi, attnKnobs{causalOff: 1, f32: true}, "out["},
		{"causal mask excluding the diagonal", t5, attnKnobs{causalOff: -1}, "out["},
		{"window off by one", rope, attnKnobs{windowOff: 1}, "window="},
		{"scale missing", rope, attnKnobs{noScale: true}, "out["},
		{"GQA head mapping h % KVHeads", alibi, attnKnobs{gqaModulo: true}, "KVHeads="},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := RunAttention(c.sp.s, attnTestKernels(c.sp.s, c.sp.hd, c.kn))
			expectFail(t, rep, c.want)
			t.Logf("max ratio %.3g (%s)", rep.MaxRatio, rep.Worst)
			if rep.MaxRatio < 100 {
				t.Errorf("max ratio %g: the bug is caught by less than two orders of magnitude", rep.MaxRatio)
			}
		})
	}
}

func TestAttentionHarnessCatchesMisuse(t *testing.T) {
	sp := attnSpecs(t)[2]
	good := attnTestKernels(sp.s, sp.hd, attnKnobs{})
	// A kernel that writes out before checking anything.
	bad := good
	bad.Attention = func(out, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions) {
		if len(out) > 0 {
			out[0] = 1
		}
		good.Attention(out, q, k, v, table, qpos, kpos, o)
	}
	expectFail(t, RunAttention(sp.s, bad), "argument 1 modified")
	// A kernel whose panics name no argument.
	vague := good
	vague.Attention = func(out, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions) {
		defer func() {
			if e := recover(); e != nil {
				panic("bad call")
			}
		}()
		good.Attention(out, q, k, v, table, qpos, kpos, o)
	}
	expectFail(t, RunAttention(sp.s, vague), "names none of")
	// A paged kernel that reads an unused (NaN) slot: every slot shifted by one.
	shifted := good
	shifted.AttentionPaged = func(out, q, kc, vc, table []float32, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions) {
		sl := make([]int32, len(slots))
		n := int32(len(kc) / (o.KVHeads * sp.hd))
		for i, x := range slots {
			sl[i] = (x + 1) % n
		}
		good.AttentionPaged(out, q, kc, vc, table, qpos, qStart, sl, kpos, kStart, o)
	}
	expectFail(t, RunAttention(sp.s, shifted), "AttentionPaged")
}
