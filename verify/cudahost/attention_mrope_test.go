package cudahost

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/verify"
)

// TestAttentionMRoPEIDs runs the M-RoPE launchers, host emulated, with ids
// drawn apart from the mask positions (RunAttention derives them from the
// positions): qpos and kpos the tokens' order, every id of every axis
// independent, some near ±2^31. Attention and the paged form (two
// sequences, keys in permuted slots of a cache whose other rows hold NaN,
// kids indexed by key entry) must match verify.AttentionRefMRoPE within its
// bound: the paged reference is the unpaged one of each sequence, over its
// keys gathered from the cache.
func TestAttentionMRoPEIDs(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	s, cu := zooCU(t, "pixtral_12b_vision")
	l, err := Build(s, cu)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hd, axes := s.HeadDim, verify.MRoPEAxes(s)
	r := rand.New(rand.NewPCG(77, 3))
	vec := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	ids := func(n int) []int32 {
		x := make([]int32, n*axes)
		for i := range x {
			switch r.IntN(4) {
			case 0:
				x[i] = math.MaxInt32 - r.Int32N(1000)
			case 1:
				x[i] = math.MinInt32 + r.Int32N(1000)
			default:
				x[i] = r.Int32N(5000) - 100
			}
		}
		return x
	}
	seq := func(a, n int) []int32 {
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(a + i)
		}
		return x
	}
	check := func(name string, got []float32, ref, bound []float64) {
		t.Helper()
		for i := range got {
			if d := math.Abs(float64(got[i]) - ref[i]); !(d <= bound[i]) {
				t.Fatalf("%s: out[%d] = %g, want %g ± %g", name, i, got[i], ref[i], bound[i])
			}
		}
	}
	k := l.Attention()
	const qh, kvh = 4, 2
	o := verify.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.125, Causal: true}
	// Unpaged: 5 queries at the end of 70 keys (a split's worth of tiles).
	lq, lk := 5, 70
	qpos, kpos := seq(lk-lq, lq), seq(0, lk)
	q, kk, v, qids, kids := vec(lq*qh*hd), vec(lk*kvh*hd), vec(lk*kvh*hd), ids(lq), ids(lk)
	out := make([]float32, lq*qh*hd)
	k.AttentionMRoPE(out, q, kk, v, qids, kids, qpos, kpos, o)
	ref, bound := verify.AttentionRefMRoPE(s, hd, q, kk, v, qids, kids, qpos, kpos, o, false)
	check("attention", out, ref, bound)

	// Paged: sequence 0 has 2 queries over 9 keys, sequence 1 3 queries
	// over 40, in a 64-row cache.
	const nslots = 64
	qStart, kStart := []int32{0, 2, 5}, []int32{0, 9, 49}
	pq := append(seq(7, 2), seq(37, 3)...)
	pk := append(seq(0, 9), seq(0, 40)...)
	perm := r.Perm(nslots)
	slots := make([]int32, len(pk))
	for j := range slots {
		slots[j] = int32(perm[j])
	}
	kc, vc := vec(nslots*kvh*hd), vec(nslots*kvh*hd)
	for _, p := range perm[len(pk):] {
		for d := range kvh * hd {
			kc[p*kvh*hd+d], vc[p*kvh*hd+d] = float32(math.NaN()), float32(math.NaN())
		}
	}
	pqx, pqids, pkids := vec(len(pq)*qh*hd), ids(len(pq)), ids(len(pk))
	pout := make([]float32, len(pq)*qh*hd)
	k.AttentionPagedMRoPE(pout, pqx, kc, vc, pqids, pkids, pq, qStart, slots, pk, kStart, o)
	row := qh * hd
	for sq := range 2 {
		q0, q1, k0, k1 := int(qStart[sq]), int(qStart[sq+1]), int(kStart[sq]), int(kStart[sq+1])
		gk, gv := make([]float32, 0, (k1-k0)*kvh*hd), make([]float32, 0, (k1-k0)*kvh*hd)
		for j := k0; j < k1; j++ {
			sl := int(slots[j]) * kvh * hd
			gk, gv = append(gk, kc[sl:sl+kvh*hd]...), append(gv, vc[sl:sl+kvh*hd]...)
		}
		ref, bound := verify.AttentionRefMRoPE(s, hd, pqx[q0*row:q1*row], gk, gv, pqids[q0*axes:q1*axes], pkids[k0*axes:k1*axes],
			pq[q0:q1], pk[k0:k1], o, false)
		check("attention_paged", pout[q0*row:q1*row], ref, bound)
	}
}

// TestAttentionMRoPELauncherErrors calls the M-RoPE launchers with null
// ids the call would read (the driver passes null for an int array the
// request leaves out): each must return cudaErrorInvalidValue with out
// untouched, where the same calls with the ids succeed. The ids a call does
// not read may be null: kids with lk = 0
// (every query gets zeros) and both with lq = 0.
func TestAttentionMRoPELauncherErrors(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	s, cu := zooCU(t, "qwen25_vl_7b")
	l, err := Build(s, cu)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hd, axes := s.HeadDim, verify.MRoPEAxes(s)
	const qh = 2
	qpos, kpos := []int32{3, 4}, []int32{0, 1, 2}
	qids, kids := make([]int32, len(qpos)*axes), make([]int32, len(kpos)*axes)
	qStart, kStart, slots := []int32{0, 2}, []int32{0, 3}, []int32{2, 0, 1}
	q, kk, v := make([]float32, len(qpos)*qh*hd), make([]float32, len(kpos)*hd), make([]float32, len(kpos)*hd)
	ints := []int64{qh, 1, 0, 1, 0, int64(len(kpos))}
	run := func(name string, op int32, kk, v []float32, ia [][]int32, want int32) []float32 {
		t.Helper()
		out := make([]float32, len(q))
		for i := range out {
			out[i] = 7
		}
		st, err := l.call(op, ints, 0.5, [][]float32{out, q, kk, v}, ia)
		if err != nil {
			t.Fatal(err)
		}
		if st != want {
			t.Errorf("%s: status %d (%s), want %d", name, st, statusText(st), want)
		}
		return out
	}
	untouched := func(name string, out []float32) {
		t.Helper()
		for i, x := range out {
			if x != 7 {
				t.Fatalf("%s: out[%d] = %g written", name, i, x)
			}
		}
	}
	for _, c := range []struct {
		name string
		op   int32
		ia   [][]int32
	}{
		{"attention: null kids", opAttention, [][]int32{qpos, kpos, qids}},
		{"attention: null qids and kids", opAttention, [][]int32{qpos, kpos}},
		{"attention_rotated: null qids", opAttentionRotated, [][]int32{qpos, kpos}},
		{"attention_paged: null kids", opAttentionPaged, [][]int32{qpos, qStart, slots, kpos, kStart, qids}},
		{"attention_paged: null qids and kids", opAttentionPaged, [][]int32{qpos, qStart, slots, kpos, kStart}},
	} {
		untouched(c.name, run(c.name, c.op, kk, v, c.ia, 1))
	}
	// The same calls with the ids succeed (the nulls above are what fails).
	run("attention", opAttention, kk, v, [][]int32{qpos, kpos, qids, kids}, 0)
	run("attention_rotated", opAttentionRotated, kk, v, [][]int32{qpos, kpos, qids}, 0)
	run("attention_paged", opAttentionPaged, kk, v, [][]int32{qpos, qStart, slots, kpos, kStart, qids, kids}, 0)
	// lk = 0: kids unread (null), every query sees no key.
	none := []int32{}
	for _, c := range []struct {
		name string
		op   int32
		ia   [][]int32
	}{
		{"attention: lk 0, null kids", opAttention, [][]int32{qpos, none, qids}},
		{"attention_paged: lk 0, null kids", opAttentionPaged, [][]int32{qpos, qStart, none, none, {0, 0}, qids}},
	} {
		for i, x := range run(c.name, c.op, nil, nil, c.ia, 0) {
			if x != 0 {
				t.Fatalf("%s: out[%d] = %g, want 0 (no key)", c.name, i, x)
			}
		}
	}
	// lq = 0: a no-op whatever the ids.
	st, err := l.call(opAttention, ints, 0.5, [][]float32{{}, {}, kk, v}, [][]int32{none, kpos})
	if err != nil {
		t.Fatal(err)
	}
	if st != 0 {
		t.Errorf("attention: lq 0, null ids: status %d (%s), want 0", st, statusText(st))
	}
}
