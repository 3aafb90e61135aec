package cudahost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/verify"
)

// The f16/bf16 check of the RoPE engine forms, run by VerifyStorage for
// every RoPE spec. The harness of package verify bounds
// float32 kernels; a kernel with 16-bit storage rounds each f32 result once
// more on the way out. So here every input is rounded to the storage type
// first (Lib.RoundTrip), the float64 reference is computed from the rounded
// inputs, and each output element is allowed u·|ref| on top of the f32
// bound of docs/design, u = 2^−11 (f16) or 2^−8 (bf16), the relative half
// ulp of round to nearest even: for RoPE tol(p)·(|x_a|+|x_b|)·A per pair
// (tol 1e-6 up to |p| = 2^20, 1e-5 beyond), for biases 1e-6·max|bias|, for
// softmax 1e-6, for absolute encodings 2e-6·max(1, |ref|). Elements a
// kernel must not change (dims beyond RotaryDim, v heads, gaps between
// strided heads, cache slots not written) must keep their bits, and the
// driver's guard bands catch writes outside the arrays.

// storageRoPEForms checks every RoPE launcher (Apply, ApplyQK, Inverse and the
// engine forms) with 16-bit storage, untouched elements bit for bit. Its
// bounds add u·|ref| (ck.u) to the float32 bounds, without ck.abs.
func (l *Lib) storageRoPEForms(ck *storageCheck, r *rand.Rand) {
	s := l.spec
	u := ck.u
	randn := func(n int) []float32 { return l.randStorage(r, n) }
	k := l.RoPE()
	hd := s.HeadDim
	a := verify.RoPEAttentionFactor(s)
	pa, pb := verify.RoPEPairs(s)
	rd := 2 * len(pa)
	tol := func(p int64) float64 {
		if p >= -(1<<20) && p <= 1<<20 {
			return 1e-6
		}
		return 1e-5
	}
	// check compares the heads of got at at(t, h) with want (the
	// reference of the gathered source heads xs) and every other element
	// of got with before.
	check := func(what string, got, before, xs []float32, want []float64, tokens, heads int, at func(t, h int) int, bound func(t int) float64) {
		covered := make([]bool, len(got))
		for t := range tokens {
			for h := range heads {
				o, g := at(t, h), (t*heads+h)*hd
				for d := range hd {
					covered[o+d] = true
				}
				for i := range pa {
					b := bound(t) * (math.Abs(float64(xs[g+pa[i]])) + math.Abs(float64(xs[g+pb[i]])))
					ck.near(what, o+pa[i], got[o+pa[i]], want[g+pa[i]], u*math.Abs(want[g+pa[i]])+b+1e-30)
					ck.near(what, o+pb[i], got[o+pb[i]], want[g+pb[i]], u*math.Abs(want[g+pb[i]])+b+1e-30)
				}
				for d := rd; d < hd; d++ {
					ck.same(what, o+d, got[o+d], xs[g+d])
				}
			}
		}
		for i, c := range covered {
			if !c {
				ck.same(what, i, got[i], before[i])
			}
		}
	}
	gather := func(x []float32, tokens, heads int, at func(t, h int) int) []float32 {
		g := make([]float32, 0, tokens*heads*hd)
		for t := range tokens {
			for h := range heads {
				g = append(g, x[at(t, h):at(t, h)+hd]...)
			}
		}
		return g
	}
	posSets := [][]int32{
		{0, 1, 63, 64, 4095, 1 << 20, math.MaxInt32, -5, 77, 1000},
		{int32(s.MaxPosition) - 1, int32(s.MaxPosition), 3},
		{5, 9, 2},
	}
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 {
		// Both sides of a run-time switch (dynamic NTK, LongRoPE).
		posSets = append(posSets, []int32{int32(sc.OriginalMaxPosition) - 2, 1, int32(sc.OriginalMaxPosition) - 1})
	}
	for pi, pos := range posSets {
		n := len(pos)
		heads := []int{1, 3, 4}[pi%3]
		bound := func(t int) float64 { return tol(int64(pos[t])) * a }
		contig := func(hs int) func(t, h int) int { return func(t, h int) int { return (t*hs + h) * hd } }
		name := func(f string) string { return fmt.Sprintf("%s tokens=%d heads=%d pos[0]=%d", f, n, heads, pos[0]) }

		// Apply, Inverse, ApplyTo.
		for _, f := range []string{"Apply", "Inverse", "ApplyTo"} {
			ck.begin(name(f))
			x := randn(n * heads * hd)
			got := append([]float32(nil), x...)
			ok := ck.call(func() {
				switch f {
				case "Apply":
					k.Apply(got, pos, heads)
				case "Inverse":
					k.Inverse(got, pos, heads)
				default:
					for i := range got {
						got[i] = float32(math.NaN())
					}
					k.ApplyTo(got, x, pos, heads)
				}
			})
			if ok {
				check("x", got, got, x, verify.RoPEApply(s, x, pos, heads, f == "Inverse"), n, heads, contig(heads), bound)
			}
		}
		// ApplyQK (GQA).
		ck.begin(name("ApplyQK"))
		q, kk := randn(n*heads*hd), randn(n*2*hd)
		gq, gk := append([]float32(nil), q...), append([]float32(nil), kk...)
		if ck.call(func() { k.ApplyQK(gq, gk, pos, heads, 2) }) {
			check("q", gq, gq, q, verify.RoPEApply(s, q, pos, heads, false), n, heads, contig(heads), bound)
			check("k", gk, gk, kk, verify.RoPEApply(s, kk, pos, 2, false), n, 2, contig(2), bound)
		}
		// ApplyStrided, token-major with gaps, and head-major in a cache.
		for _, hm := range []bool{false, true} {
			hs, st, off := hd+3, heads*(hd+3)+5, 0
			if hm {
				hs, st, off = (n+3)*hd, hd, 2*hd
			}
			at := func(t, h int) int { return off + t*st + h*hs }
			ck.begin(name(fmt.Sprintf("ApplyStrided stride=%d headStride=%d", st, hs)))
			x := randn(at(n-1, heads-1) + hd + 3)
			got := append([]float32(nil), x...)
			if ck.call(func() { k.ApplyStrided(got[off:], pos, heads, st, hs) }) {
				xs := gather(x, n, heads, at)
				check("x", got, x, xs, verify.RoPEApply(s, xs, pos, heads, false), n, heads, at, bound)
			}
		}
		// ApplyHeadMajor.
		ck.begin(name("ApplyHeadMajor"))
		x := randn(n * heads * hd)
		got := append([]float32(nil), x...)
		hmAt := func(t, h int) int { return (h*n + t) * hd }
		if ck.call(func() { k.ApplyHeadMajor(got, pos, heads) }) {
			xs := gather(x, n, heads, hmAt)
			check("x", got, x, xs, verify.RoPEApply(s, xs, pos, heads, false), n, heads, hmAt, bound)
		}
		// ApplyQKStrided: packed q | k | v rows, padded.
		st := (heads+2*2)*hd + 3
		ck.begin(name(fmt.Sprintf("ApplyQKStrided kHeads=2 stride=%d", st)))
		qkv := randn((n-1)*st + (heads+4)*hd)
		got = append([]float32(nil), qkv...)
		qAt := func(t, h int) int { return t*st + h*hd }
		kAt := func(t, h int) int { return t*st + (heads+h)*hd }
		if ck.call(func() { k.ApplyQKStrided(got, pos, heads, 2, st) }) {
			qs, ks := gather(qkv, n, heads, qAt), gather(qkv, n, 2, kAt)
			// The k heads are checked by the second call; the first one
			// sees them as changed, so its "before" holds got's k heads.
			before := append([]float32(nil), qkv...)
			for t := range n {
				for h := range 2 {
					copy(before[kAt(t, h):kAt(t, h)+hd], got[kAt(t, h):kAt(t, h)+hd])
				}
			}
			check("q", got, before, qs, verify.RoPEApply(s, qs, pos, heads, false), n, heads, qAt, bound)
			check("k", got, got, ks, verify.RoPEApply(s, ks, pos, 2, false), n, 2, kAt, bound)
		}
		// ApplyToSlots: a cache of n+3 slots, tokens in reversed slots.
		ck.begin(name("ApplyToSlots"))
		src, cache := randn(n*heads*hd), randn((n+3)*heads*hd)
		slots := make([]int32, n)
		for t := range slots {
			slots[t] = int32(n + 2 - t)
		}
		got = append([]float32(nil), cache...)
		if ck.call(func() { k.ApplyToSlots(got, slots, src, pos, heads) }) {
			at := func(t, h int) int { return (int(slots[t])*heads + h) * hd }
			check("cache", got, cache, src, verify.RoPEApply(s, src, pos, heads, false), n, heads, at, bound)
		}
	}
	// Shift, deltas in every band, frequencies on both sides of a switch.
	lens := []int{0, s.MaxPosition + 1}
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 {
		lens = append(lens, sc.OriginalMaxPosition+1)
	}
	for i, d := range []int32{0, 7, -1000, 1<<20 + 3, math.MaxInt32, math.MinInt32 + 1} {
		ln, heads, tokens := lens[i%len(lens)], 1+i%3, 1+2*i
		ck.begin(fmt.Sprintf("Shift tokens=%d heads=%d delta=%d n=%d", tokens, heads, d, ln))
		x := randn(tokens * heads * hd)
		got := append([]float32(nil), x...)
		if ck.call(func() { k.Shift(got, d, heads, ln) }) {
			at := func(t, h int) int { return (t*heads + h) * hd }
			check("x", got, x, x, verify.RoPEShift(s, x, d, heads, ln), tokens, heads, at, func(int) float64 { return tol(int64(d)) })
		}
	}
}
