package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// The engine forms of a rope package (issue 14) against the reference:
// strided and head-major tensors, packed QKV rows (vLLM's layout), ApplyTo,
// ApplyToSlots (paged KV-cache append) and Shift (a pure rotation by a
// position delta). Every case lays random heads out with strides that are
// not multiples of any vector width, gathers them into the contiguous
// [token][head][HeadDim] order, and compares the form's output with
// RoPEApply (or RoPEShift) of the gathered heads; every float outside the
// heads must keep its bits.

// headAt maps token t, head h to the offset of the head's first float.
type headAt func(t, h int) int

// gather copies the heads at at into [tokens][heads][HeadDim].
func gather(hd int, x []float32, tokens, heads int, at headAt) []float32 {
	g := make([]float32, 0, tokens*heads*hd)
	for t := range tokens {
		for h := range heads {
			g = append(g, x[at(t, h):at(t, h)+hd]...)
		}
	}
	return g
}

// checkLaid compares got, the buffer after a call, with want (the reference
// of the gathered source heads xs) at the heads at places, under the bound
// tol(t)·(|x_a|+|x_b|) per pair; dims ≥ RotaryDim must be the source's bits
// and every float of got at no head must equal before's.
func checkLaid(c *check, s *spec.Spec, st Storage, what string, got, before, xs []float32, want []float64, tokens, heads int, at headAt, tol func(t int) float64) {
	hd, rd := s.HeadDim, rotaryDim(s)
	pa, pb := RoPEPairs(s)
	covered := make([]bool, len(got))
	for t := range tokens {
		for h := range heads {
			o, g := at(t, h), (t*heads+h)*hd
			for d := range hd {
				covered[o+d] = true
			}
			for i := range pa {
				b := tol(t)*(math.Abs(float64(xs[g+pa[i]]))+math.Abs(float64(xs[g+pb[i]]))) + 1e-30
				st.near(c, what, o+pa[i], float64(got[o+pa[i]]), want[g+pa[i]], b)
				st.near(c, what, o+pb[i], float64(got[o+pb[i]]), want[g+pb[i]], b)
			}
			for d := rd; d < hd; d++ {
				c.same(what, o+d, got[o+d], xs[g+d])
			}
		}
	}
	for i, cv := range covered {
		if !cv && math.Float32bits(got[i]) != math.Float32bits(before[i]) {
			c.fail("%s: float %d, at no head, changed", what, i)
			return
		}
	}
}

// applyTol is the Apply bound of position pos[t], times the attention factor.
func applyTol(s *spec.Spec, pos []int32) func(int) float64 {
	a := RoPEAttentionFactor(s)
	return func(t int) float64 { return ropeTol(int64(pos[t])) * a }
}

// ropeForms runs every engine form the package has (a nil field is a form
// it lacks) over the position schemes of RunRoPE.
func ropeForms(rep *Report, s *spec.Spec, k RoPEKernels, st Storage) {
	r := rand.New(rand.NewPCG(0x5eed14, 14))
	hd := s.HeadDim
	for si, sch := range ropeSchemes(s) {
		for ci, n := range []int{1, 3, 17, 33} {
			heads := headCounts[(si+ci)%len(headCounts)]
			pos := sch.gen(r, n)
			gap := 1 + 2*((si+ci)%3) // odd: no head starts on a vector boundary twice
			if k.ApplyStrided != nil {
				// Token-major with gaps between heads and tokens.
				hs := hd + gap
				stride := heads*hs + 5
				stridedCase(rep, s, st, r, fmt.Sprintf("ApplyStrided token-major tokens=%d heads=%d stride=%d headStride=%d %s", n, heads, stride, hs, sch.name),
					pos, heads, stride, hs, 0, k.ApplyStrided)
				// Head-major inside a cache of capacity n+3, starting at slot 2.
				cp := n + 3
				stridedCase(rep, s, st, r, fmt.Sprintf("ApplyStrided head-major tokens=%d heads=%d capacity=%d %s", n, heads, cp, sch.name),
					pos, heads, hd, cp*hd, 2*hd, k.ApplyStrided)
			}
			if k.ApplyHeadMajor != nil {
				at := func(t, h int) int { return (h*n + t) * hd }
				x := st.vector(r, n*heads*hd)
				c := rep.begin(fmt.Sprintf("ApplyHeadMajor tokens=%d heads=%d %s", n, heads, sch.name))
				g := guard(x)
				if c.call(func() { k.ApplyHeadMajor(g.s, append([]int32(nil), pos...), heads) }) {
					g.intact(c, "x")
					xs := gather(hd, x, n, heads, at)
					checkLaid(c, s, st, "x", g.s, x, xs, RoPEApply(s, xs, pos, heads, false), n, heads, at, applyTol(s, pos))
				}
			}
			if k.ApplyTo != nil {
				src := st.vector(r, n*heads*hd)
				c := rep.begin(fmt.Sprintf("ApplyTo tokens=%d heads=%d %s", n, heads, sch.name))
				gs, gd := guard(src), guardUnset(len(src))
				if c.call(func() { k.ApplyTo(gd.s, gs.s, append([]int32(nil), pos...), heads) }) {
					gs.intact(c, "src")
					gd.intact(c, "dst")
					for i := range src {
						c.same("src", i, gs.s[i], src[i])
					}
					at := func(t, h int) int { return (t*heads + h) * hd }
					checkLaid(c, s, st, "dst", gd.s, gd.s, src, RoPEApply(s, src, pos, heads, false), n, heads, at, applyTol(s, pos))
				}
			}
			if k.ApplyToSlots != nil {
				slotsCase(rep, s, st, r, fmt.Sprintf("ApplyToSlots tokens=%d heads=%d %s", n, heads, sch.name), pos, heads, k.ApplyToSlots)
			}
		}
		if k.ApplyQKStrided != nil {
			for gi, hk := range gqaHeads {
				n := tokenCounts[(si*len(gqaHeads)+gi)%len(tokenCounts)]
				pos := sch.gen(r, n)
				stride := (hk[0] + 2*hk[1]) * hd // vLLM's packed row: q, k, v
				if gi%2 == 1 {
					stride += 3 // rows padded to an odd stride
				}
				packedCase(rep, s, st, r, fmt.Sprintf("ApplyQKStrided tokens=%d qHeads=%d kHeads=%d stride=%d %s", n, hk[0], hk[1], stride, sch.name),
					pos, hk[0], hk[1], stride, k.ApplyQKStrided)
			}
		}
	}
	if k.Shift != nil {
		shiftCases(rep, s, st, r, k.Shift)
	}
	formPanics(rep, s, st, r, k)
}

// stridedCase runs ApplyStrided on heads at off + t·stride + h·headStride of
// a random buffer.
func stridedCase(rep *Report, s *spec.Spec, st Storage, r *rand.Rand, name string, pos []int32, heads, stride, headStride, off int, fn func([]float32, []int32, int, int, int)) {
	hd, n := s.HeadDim, len(pos)
	at := func(t, h int) int { return off + t*stride + h*headStride }
	size := at(n-1, heads-1) + hd + 3
	x := st.vector(r, size)
	c := rep.begin(name)
	g := guard(x)
	if !c.call(func() { fn(g.s[off:], append([]int32(nil), pos...), heads, stride, headStride) }) {
		return
	}
	g.intact(c, "x")
	xs := gather(hd, x, n, heads, at)
	checkLaid(c, s, st, "x", g.s, x, xs, RoPEApply(s, xs, pos, heads, false), n, heads, at, applyTol(s, pos))
}

// packedCase runs ApplyQKStrided on packed [token][q heads | k heads | v heads]
// rows stride floats apart; the v heads must keep their bits.
func packedCase(rep *Report, s *spec.Spec, st Storage, r *rand.Rand, name string, pos []int32, qh, kh, stride int, fn func([]float32, []int32, int, int, int)) {
	hd, n := s.HeadDim, len(pos)
	x := st.vector(r, (n-1)*stride+(qh+2*kh)*hd)
	qAt := func(t, h int) int { return t*stride + h*hd }
	kAt := func(t, h int) int { return t*stride + (qh+h)*hd }
	c := rep.begin(name)
	g := guard(x)
	if !c.call(func() { fn(g.s, append([]int32(nil), pos...), qh, kh, stride) }) {
		return
	}
	g.intact(c, "qkv")
	qs, ks := gather(hd, x, n, qh, qAt), gather(hd, x, n, kh, kAt)
	// Check q, then k; each check treats the other's heads as "no head",
	// so merge: q's pass sees k's floats as rotated; compare against a
	// buffer where k's heads already hold got's values.
	before := append([]float32(nil), x...)
	for t := range n {
		for h := range kh {
			copy(before[kAt(t, h):kAt(t, h)+hd], g.s[kAt(t, h):kAt(t, h)+hd])
		}
	}
	checkLaid(c, s, st, "q", g.s, before, qs, RoPEApply(s, qs, pos, qh, false), n, qh, qAt, applyTol(s, pos))
	checkLaid(c, s, st, "k", g.s, g.s, ks, RoPEApply(s, ks, pos, kh, false), n, kh, kAt, applyTol(s, pos))
}

// slotsCase runs ApplyToSlots into a cache of len(pos)+5 slots; the slots
// come in runs of consecutive slots (as within a page) and single ones.
func slotsCase(rep *Report, s *spec.Spec, st Storage, r *rand.Rand, name string, pos []int32, heads int, fn func(cache []float32, slots []int32, src []float32, pos []int32, heads int)) {
	hd, n := s.HeadDim, len(pos)
	nSlots := n + 5
	// Runs of consecutive slots (as within a page) and jumps to unused ones.
	free := r.Perm(nSlots)
	taken := make([]bool, nSlots)
	slots := make([]int32, n)
	for t := range slots {
		if t > 0 && r.IntN(3) > 0 {
			if nx := int(slots[t-1]) + 1; nx < nSlots && !taken[nx] {
				slots[t], taken[nx] = int32(nx), true
				continue
			}
		}
		for taken[free[0]] {
			free = free[1:]
		}
		slots[t], taken[free[0]] = int32(free[0]), true
	}
	src := st.vector(r, n*heads*hd)
	cache := st.vector(r, nSlots*heads*hd)
	c := rep.begin(name)
	gc, gs := guard(cache), guard(src)
	sl := append([]int32(nil), slots...)
	if !c.call(func() { fn(gc.s, sl, gs.s, append([]int32(nil), pos...), heads) }) {
		return
	}
	gc.intact(c, "cache")
	intsUnchanged(c, "slots", sl, slots)
	for i := range src {
		c.same("src", i, gs.s[i], src[i])
	}
	at := func(t, h int) int { return (int(slots[t])*heads + h) * hd }
	checkLaid(c, s, st, "cache", gc.s, cache, src, RoPEApply(s, src, pos, heads, false), n, heads, at, applyTol(s, pos))
}

// shiftCases runs Shift for deltas in every band and sequence lengths on
// both sides of original_max_position.
func shiftCases(rep *Report, s *spec.Spec, st Storage, r *rand.Rand, fn func(x []float32, delta int32, heads, n int)) {
	hd := s.HeadDim
	lens := []int{0, s.MaxPosition + 1}
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 {
		lens = append(lens, sc.OriginalMaxPosition, sc.OriginalMaxPosition+1, 3*sc.OriginalMaxPosition)
	}
	deltas := []int32{0, 1, -1, -10, 100, int32(s.MaxPosition), -(1 << 20), 1<<20 + 3, math.MaxInt32, math.MinInt32 + 1}
	for i, d := range deltas {
		ln := lens[i%len(lens)]
		heads := headCounts[i%len(headCounts)]
		tokens := []int{1, 5, 64, 65, 130}[i%5]
		x := st.vector(r, tokens*heads*hd)
		c := rep.begin(fmt.Sprintf("Shift tokens=%d heads=%d delta=%d n=%d", tokens, heads, d, ln))
		g := guard(x)
		if !c.call(func() { fn(g.s, d, heads, ln) }) {
			continue
		}
		g.intact(c, "x")
		at := func(t, h int) int { return (t*heads + h) * hd }
		tol := func(int) float64 { return ropeTol(int64(d)) }
		checkLaid(c, s, st, "x", g.s, x, x, RoPEShift(s, x, d, heads, ln), tokens, heads, at, tol)
	}
}

// formPanics checks that bad arguments panic before anything is written.
func formPanics(rep *Report, s *spec.Spec, st Storage, r *rand.Rand, k RoPEKernels) {
	hd := s.HeadDim
	pos := []int32{0, 5, int32(s.MaxPosition) + 3}
	if k.ApplyStrided != nil {
		g := guard(st.vector(r, 3*2*hd))
		rep.expectPanic("ApplyStrided with overlapping heads", func() { k.ApplyStrided(g.s, pos, 2, 2*hd, hd-1) }, g)
		g2 := guard(st.vector(r, 3*2*hd-1))
		rep.expectPanic("ApplyStrided with x one element short", func() { k.ApplyStrided(g2.s, pos, 2, 2*hd, hd) }, g2)
	}
	if k.ApplyQKStrided != nil {
		stride := (3 + 2*1) * hd
		g := guard(st.vector(r, 2*stride+4*hd-1))
		rep.expectPanic("ApplyQKStrided with qkv one element short", func() { k.ApplyQKStrided(g.s, pos, 3, 1, stride) }, g)
		g2 := guard(st.vector(r, 3*stride))
		rep.expectPanic("ApplyQKStrided with stride < (qHeads+kHeads)*HeadDim", func() { k.ApplyQKStrided(g2.s, pos, 3, 1, 4*hd-1) }, g2)
	}
	if k.ApplyTo != nil {
		src, dst := guard(st.vector(r, 3*2*hd)), guard(st.vector(r, 3*2*hd-1))
		rep.expectPanic("ApplyTo with dst one element short", func() { k.ApplyTo(dst.s, src.s, pos, 2) }, src, dst)
	}
	if k.ApplyToSlots != nil {
		src, cache := guard(st.vector(r, 3*2*hd)), guard(st.vector(r, 4*2*hd))
		rep.expectPanic("ApplyToSlots with a slot outside the cache", func() { k.ApplyToSlots(cache.s, []int32{0, 1, 4}, src.s, pos, 2) }, src, cache)
		src2, cache2 := guard(st.vector(r, 3*2*hd)), guard(st.vector(r, 4*2*hd-1))
		rep.expectPanic("ApplyToSlots with a cache not a whole number of slots", func() { k.ApplyToSlots(cache2.s, []int32{0, 1, 2}, src2.s, pos, 2) }, src2, cache2)
	}
	if k.Shift != nil {
		g := guard(st.vector(r, 3*2*hd-1))
		rep.expectPanic("Shift with x not a whole number of tokens", func() { k.Shift(g.s, 7, 2, 0) }, g)
	}
}
