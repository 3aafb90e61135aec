package cudahost

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// TestAttentionZoo runs the CUDA attention form of zoo specs, host
// emulated, through verify.RunAttention alone (Lib.Verify merges it into
// the spec's row): ALiBi with 32 heads, T5's buckets, RoPE with GQA and with
// interleaved partial rotary of head_dim 256, LongRoPE (max_pos), Shaw et
// al.'s aK and aV (rpe_full), Transformer-XL's rel, u and v (xl) and
// M-RoPE's ids (Qwen3-VL's interleaved sections, Pixtral's two axes with
// alternate frequencies).
func TestAttentionZoo(t *testing.T) {
	for _, name := range []string{"bloom_7b1", "t5_base", "llama2_7b", "gptj_6b", "phi35_mini", "shaw2018_base", "transformer_xl_base",
		"qwen3_vl_8b", "pixtral_12b_vision"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each builds and runs its own library
			if _, ok := CXX(); !ok {
				t.Skip("no C++ compiler")
			}
			s, cu := zooCU(t, name)
			if !HasAttention(s) {
				t.Fatalf("%s: no attention form", name)
			}
			l, err := Build(s, cu)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := verify.RunAttention(s, l.Attention())
			r.Target = Target + "-attention"
			verify.Emit(t, r)
			if r.Cases < 40 || r.MaxRatio > 1 {
				t.Errorf("%s: %d cases, max ratio %g", name, r.Cases, r.MaxRatio)
			}
		})
	}
}

// TestAttentionLauncherErrors calls the launcher with arguments the Go
// adapter refuses: each must return cudaErrorInvalidValue (1) without
// launching, the output untouched.
func TestAttentionLauncherErrors(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	s, cu := zooCU(t, "bloom_7b1")
	l, err := Build(s, cu)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hd, h := s.HeadDim, s.Heads
	qpos, kpos := []int32{3}, []int32{0, 1}
	for _, c := range []struct {
		name            string
		qheads, kvheads int64
	}{
		{"kvheads 0", int64(h), 0},
		{"qheads not a multiple of kvheads", int64(h), int64(h - 1)},
		{"qheads not HEADS", int64(2 * h), int64(h)},
		{"qheads 0", 0, 1},
	} {
		out := make([]float32, 2*h*hd)
		for i := range out {
			out[i] = 7
		}
		q, k, v := make([]float32, 2*h*hd), make([]float32, 2*h*hd), make([]float32, 2*h*hd)
		st, err := l.call(opAttention, []int64{c.qheads, c.kvheads, 0, 1, 0}, 0.5, [][]float32{out, q, k, v}, [][]int32{qpos, kpos})
		if err != nil {
			t.Fatal(err)
		}
		if st != 1 {
			t.Errorf("%s: status %d (%s), want cudaErrorInvalidValue", c.name, st, statusText(st))
		}
		for i, x := range out {
			if x != 7 {
				t.Fatalf("%s: out[%d] = %g written", c.name, i, x)
			}
		}
	}
}

// TestAttentionPagedLauncher calls posenc_<name>_attention_paged with what
// the Go adapter refuses, as a caller of the C API could: the host-side
// errors must return cudaErrorInvalidValue with out untouched; slots
// outside the cache must make their keys padding (the same output, bit
// for bit, as those keys at kpos −1); starts that break the contract must
// not make the kernel write outside its arrays (the driver's guard bands).
// Each kernel that reads a paged cache takes the calls: llama2_7b's decode
// kernel (2 query heads a KV head: at most 4 rows per sequence) and main
// kernel (32: 64 rows), and the tensor-core kernel of a bf16 rope spec (8:
// 16 rows), each rotating its keys inside.
func TestAttentionPagedLauncher(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, c := range []struct {
		name, path string
		qh         int
	}{
		{"decode", "", 2},
		{"main", "", 32},
		{"mma", "verify/testdata/golden/specs/grope_llama31_bf16.yaml", 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each builds its own library
			var s *spec.Spec
			var cu string
			if c.path == "" {
				s, cu = zooCU(t, "llama2_7b")
			} else {
				s = repoSpec(t, c.path)
				cu = writeCU(t, s)
			}
			pagedLauncher(t, s, cu, c.qh)
		})
	}
}

// pagedLauncher runs TestAttentionPagedLauncher's calls on the library of
// s (generated at cu) with qh query heads over one KV head.
func pagedLauncher(t *testing.T, s *spec.Spec, cu string, qh int) {
	l, err := Build(s, cu)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hd := s.HeadDim
	const kvh, nslots = 1, 16
	r := rand.New(rand.NewPCG(24, 1))
	vec := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	// Two sequences: query {5} over keys 0…3, queries {6, 7} over keys 0…5.
	qpos := []int32{5, 6, 7}
	qStart, kStart := []int32{0, 1, 3}, []int32{0, 4, 10}
	kpos := []int32{0, 1, 2, 3, 0, 1, 2, 3, 4, 5}
	slots := []int32{9, 3, 14, 0, 7, 1, 12, 5, 10, 2}
	q, kc, vc := vec(len(qpos)*qh*hd), vec(nslots*kvh*hd), vec(nslots*kvh*hd)
	run := func(qStart, slots, kpos, kStart []int32, nslots int64) (int32, []float32) {
		out := make([]float32, len(qpos)*qh*hd)
		for i := range out {
			out[i] = 7
		}
		fa := [][]float32{out, append([]float32(nil), q...), append([]float32(nil), kc...), append([]float32(nil), vc...)}
		st, err := l.call(opAttentionPaged, []int64{int64(qh), kvh, 7, 1, 0, nslots}, 0.25, fa, [][]int32{qpos, qStart, slots, kpos, kStart})
		if err != nil {
			t.Fatal(err)
		}
		return st, out
	}
	untouched := func(name string, st int32, out []float32) {
		if st != 1 {
			t.Errorf("%s: status %d (%s), want cudaErrorInvalidValue", name, st, statusText(st))
		}
		for i, x := range out {
			if x != 7 {
				t.Fatalf("%s: out[%d] = %g written", name, i, x)
			}
		}
	}
	st, out := run([]int32{0}, slots, kpos, []int32{0}, nslots)
	untouched("nseq 0 with queries", st, out)
	st, out = run(qStart, slots, kpos, kStart, -1)
	untouched("negative cache_slots", st, out)
	st, out = run(qStart, slots, kpos, kStart, 1<<62)
	untouched("cache_slots·kvheads·HEAD_DIM past 2^63", st, out)

	// Keys 1 and 7 as padding, then the same keys through slots outside
	// the cache (−5, nslots, −2^31 on two calls).
	padded := append([]int32(nil), kpos...)
	padded[1], padded[7] = -1, -1
	st, want := run(qStart, slots, padded, kStart, nslots)
	if st != 0 {
		t.Fatalf("padded keys: status %d (%s)", st, statusText(st))
	}
	for _, bad := range [][2]int32{{-5, nslots}, {math.MinInt32, math.MaxInt32}} {
		sl := append([]int32(nil), slots...)
		sl[1], sl[7] = bad[0], bad[1]
		st, got := run(qStart, sl, kpos, kStart, nslots)
		if st != 0 {
			t.Fatalf("slots %v outside the cache: status %d (%s)", bad, st, statusText(st))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("slots %v outside the cache: out[%d] = %g, want %g (the keys as padding)", bad, i, got[i], want[i])
			}
		}
	}
	// Starts against the contract: past the lengths, decreasing, negative.
	for _, c := range [][2][]int32{
		{{0, 5, 2}, {0, -3, 99}},
		{{-7, 3, 3}, {10, 0, 4}},
		{{3, 0, math.MaxInt32}, {math.MinInt32, 10, 10}},
	} {
		if st, _ := run(c[0], slots, kpos, c[1], nslots); st != 0 {
			t.Errorf("starts %v, %v: status %d (%s), want 0 and no write outside the arrays", c[0], c[1], st, statusText(st))
		}
	}
}

// TestAttentionTermLauncherErrors calls the rpe_full and xl launchers with
// operands the Go adapter refuses (a null aV, aK, v_bias, u_bias or rel,
// n_rel < 1, n_rel·kvheads·HEAD_DIM beyond 63 bits): each must return
// cudaErrorInvalidValue with out untouched. A call with n_rel = 1 (every
// distance clamped to the one row) must match the reference.
func TestAttentionTermLauncherErrors(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, name := range []string{"shaw2018_base", "transformer_xl_base"} {
		t.Run(name, func(t *testing.T) {
			s, cu := zooCU(t, name)
			l, err := Build(s, cu)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			hd, qh := s.HeadDim, 2
			qpos, kpos := []int32{3, 9}, []int32{0, 1, 2, 7}
			r := rand.New(rand.NewPCG(5, 6))
			vec := func(n int) []float32 {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				return x
			}
			q, k, v := vec(len(qpos)*qh*hd), vec(len(kpos)*hd), vec(len(kpos)*hd)
			type bad struct {
				name  string
				terms [][]float32
				nRel  int64
			}
			var cases []bad
			// A float array the request leaves out is a null pointer (an
			// empty one is not: the driver allocates its guard bands).
			if s.Encoding == "rpe_full" {
				tab := vec((2*s.RMax - 1) * hd)
				cases = []bad{{"null aV", [][]float32{tab}, 0}, {"null aK and aV", nil, 0}}
			} else {
				rel, ub := vec(3*hd), vec(qh*hd)
				cases = []bad{
					{"null v_bias", [][]float32{rel, ub}, 3}, {"null u_bias and v_bias", [][]float32{rel}, 3},
					{"null rel, u_bias and v_bias", nil, 3}, {"n_rel 0", [][]float32{rel, ub, ub}, 0},
					{"n_rel -1", [][]float32{rel, ub, ub}, -1}, {"n_rel past 2^63 elements", [][]float32{rel, ub, ub}, math.MaxInt64/64 + 1},
				}
			}
			for _, c := range cases {
				out := make([]float32, len(qpos)*qh*hd)
				for i := range out {
					out[i] = 7
				}
				ints := []int64{int64(qh), 1, 0, 1, 0, 0, c.nRel}
				st, err := l.call(opAttention, ints, 0.125, append([][]float32{out, q, k, v}, c.terms...), [][]int32{qpos, kpos})
				if err != nil {
					t.Fatal(err)
				}
				if st != 1 {
					t.Errorf("%s: status %d (%s), want cudaErrorInvalidValue", c.name, st, statusText(st))
				}
				for i, x := range out {
					if x != 7 {
						t.Fatalf("%s: out[%d] = %g written", c.name, i, x)
					}
				}
			}
			if s.Encoding != "xl" {
				return
			}
			// One row of rel: every distance takes it.
			table := vec(2*qh*hd + hd)
			o := verify.AttentionOptions{QHeads: qh, KVHeads: 1, Scale: 0.125}
			out := make([]float32, len(qpos)*qh*hd)
			l.Attention().Attention(out, q, k, v, table, qpos, kpos, o)
			ref, bound := verify.AttentionRef(s, hd, q, k, v, table, qpos, kpos, o, false)
			for i := range out {
				if d := math.Abs(float64(out[i]) - ref[i]); !(d <= bound[i]) {
					t.Fatalf("n_rel 1: out[%d] = %g, want %g ± %g", i, out[i], ref[i], bound[i])
				}
			}
		})
	}
}

// TestRoPELauncherHeadsLimit calls the RoPE launchers with more heads than
// a token's work items fit (docs/internals.md, "CUDA launchers of rope":
// at most 2^30 / (RotaryDim/2 + HEAD_DIM − RotaryDim) heads a call): each
// must return cudaErrorInvalidValue before any launch, x untouched (a
// launch would run far past the small buffers).
func TestRoPELauncherHeadsLimit(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, name := range []string{"llama2_7b", "gptj_6b"} {
		s, cu := zooCU(t, name)
		l, err := Build(s, cu)
		if err != nil {
			t.Fatal(err)
		}
		limit := int64(1<<30) / int64(s.RotaryDim/2+s.HeadDim-s.RotaryDim)
		pos := []int32{3}
		for _, c := range []struct {
			name string
			op   int32
			ints []int64
		}{
			{"apply, limit+1 heads", opApply, []int64{limit + 1, 0, 3}},
			{"apply, 2^31−1 heads", opApply, []int64{1<<31 - 1, 0, 3}},
			{"apply_qk, limit q heads and 1 k head", opApplyQK, []int64{limit, 1, 3}},
			{"apply_qk, 1 q head and limit k heads", opApplyQK, []int64{1, limit, 3}},
		} {
			x, k := make([]float32, 64), make([]float32, 64)
			for i := range x {
				x[i], k[i] = 7, 7
			}
			st, err := l.call(c.op, c.ints, 0, [][]float32{x, k}, [][]int32{pos})
			if err != nil {
				t.Fatal(err)
			}
			if st != 1 {
				t.Errorf("%s %s: status %d (%s), want cudaErrorInvalidValue", name, c.name, st, statusText(st))
			}
			for i := range x {
				if x[i] != 7 || k[i] != 7 {
					t.Fatalf("%s %s: element %d written", name, c.name, i)
				}
			}
		}
		l.Close()
	}
}
