package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// mropeCases checks the M-RoPE forms of a spec with mrope_section against
// MRoPEApply: text tokens (every axis at one position, which must equal
// Apply bit for bit), vision grids (t fixed, h and w over a grid, as
// Qwen2-VL's get_rope_index lays an image out), and axes drawn from
// different RoPE position schemes, so that one token mixes table rows and
// exactly computed pairs; then Inverse, ApplyQK with GQA head counts, the
// panics before writing, and the golden case of kind "mrope" named like s
// (float32 storage only: its inputs are float32 values). Inputs are values
// of the storage type st and outputs are checked with st.near.
func mropeCases(rep *Report, s *spec.Spec, k RoPEKernels, st Storage) {
	if k.ApplyMRoPE == nil || k.ApplyQKMRoPE == nil || k.InverseMRoPE == nil {
		rep.begin("mrope kernels").fail("an M-RoPE spec needs ApplyMRoPE, ApplyQKMRoPE and InverseMRoPE")
		return
	}
	n := MRoPEAxes(s)
	hd := s.HeadDim
	r := rand.New(rand.NewPCG(0x6d726f7065, 15))
	schemes := ropeSchemes(s)

	// Text tokens: ApplyMRoPE with equal axes is Apply.
	for si, sch := range schemes {
		tokens := tokenCounts[si%len(tokenCounts)]
		heads := headCounts[si%len(headCounts)]
		p1 := sch.gen(r, tokens)
		pos := make([]int32, 0, n*tokens)
		for _, p := range p1 {
			for range n {
				pos = append(pos, p)
			}
		}
		x := st.vector(r, tokens*heads*hd)
		name := fmt.Sprintf("ApplyMRoPE text tokens=%d heads=%d %s", tokens, heads, sch.name)
		got := mropeCase(rep, s, st, name, pos, []ropeOperand{{x, heads}}, false, func(o []*guarded, pos []int32) {
			k.ApplyMRoPE(o[0].s, pos, heads)
		})
		if got == nil {
			continue
		}
		g := guard(x)
		c := rep.begin(name + " = Apply")
		if !c.call(func() { k.Apply(g.s, append([]int32(nil), p1...), heads) }) {
			continue
		}
		for i := range got[0] {
			c.same("x", i, got[0][i], g.s[i])
		}
	}

	// Vision grids and mixed axes.
	posSets := []struct {
		name string
		gen  func(tokens int) []int32
	}{
		{"grid", func(tokens int) []int32 { return mropeGrid(r, n, tokens) }},
	}
	for si := range schemes {
		posSets = append(posSets, struct {
			name string
			gen  func(tokens int) []int32
		}{"axes " + mropeSchemeNames(schemes, si, n), func(tokens int) []int32 {
			per := make([][]int32, n)
			for a := range n {
				per[a] = schemes[(si+a)%len(schemes)].gen(r, tokens)
			}
			pos := make([]int32, 0, n*tokens)
			for t := range tokens {
				for a := range n {
					pos = append(pos, per[a][t])
				}
			}
			return pos
		}})
	}
	for pi, ps := range posSets {
		for ti, tokens := range tokenCounts {
			if (pi+ti)%2 == 1 && tokens > 3 {
				continue
			}
			heads := headCounts[(pi+ti)%len(headCounts)]
			pos := ps.gen(tokens)
			x := st.vector(r, tokens*heads*hd)
			mropeCase(rep, s, st, fmt.Sprintf("ApplyMRoPE tokens=%d heads=%d %s", tokens, heads, ps.name), pos, []ropeOperand{{x, heads}}, false,
				func(o []*guarded, pos []int32) { k.ApplyMRoPE(o[0].s, pos, heads) })
			if ti%3 == 0 {
				x = st.vector(r, tokens*heads*hd)
				mropeCase(rep, s, st, fmt.Sprintf("InverseMRoPE tokens=%d heads=%d %s", tokens, heads, ps.name), pos, []ropeOperand{{x, heads}}, true,
					func(o []*guarded, pos []int32) { k.InverseMRoPE(o[0].s, pos, heads) })
			}
		}
		hk := gqaHeads[pi%len(gqaHeads)]
		tokens := tokenCounts[(pi*3+1)%len(tokenCounts)]
		pos := ps.gen(tokens)
		q, kk := st.vector(r, tokens*hk[0]*hd), st.vector(r, tokens*hk[1]*hd)
		mropeCase(rep, s, st, fmt.Sprintf("ApplyQKMRoPE tokens=%d qHeads=%d kHeads=%d %s", tokens, hk[0], hk[1], ps.name), pos,
			[]ropeOperand{{q, hk[0]}, {kk, hk[1]}}, false,
			func(o []*guarded, pos []int32) { k.ApplyQKMRoPE(o[0].s, o[1].s, pos, hk[0], hk[1]) })
	}

	// Bad arguments panic before anything is written.
	pos := mropeGrid(r, n, 3)
	full := func(heads int) *guarded { return guard(st.vector(r, 3*heads*hd)) }
	short := func(heads int) *guarded { return guard(st.vector(r, 3*heads*hd-1)) }
	g := short(2)
	rep.expectPanic("ApplyMRoPE with x one element short", func() { k.ApplyMRoPE(g.s, pos, 2) }, g)
	g2 := full(2)
	rep.expectPanic("ApplyMRoPE with len(pos) not a multiple of Axes", func() { k.ApplyMRoPE(g2.s, pos[:len(pos)-1], 2) }, g2)
	g3 := short(2)
	rep.expectPanic("InverseMRoPE with x one element short", func() { k.InverseMRoPE(g3.s, pos, 2) }, g3)
	q, kk := full(4), short(2)
	rep.expectPanic("ApplyQKMRoPE with k one element short", func() { k.ApplyQKMRoPE(q.s, kk.s, pos, 4, 2) }, q, kk)
	q2, kk2 := short(4), full(2)
	rep.expectPanic("ApplyQKMRoPE with q one element short", func() { k.ApplyQKMRoPE(q2.s, kk2.s, pos, 4, 2) }, q2, kk2)

	if st == StorageF32 {
		mropeGolden(rep, s, k)
	}
}

// mropeSchemeNames names the schemes the axes of a mixed case draw from.
func mropeSchemeNames(schemes []posScheme, si, n int) string {
	name := ""
	for a := range n {
		if a > 0 {
			name += " | "
		}
		name += schemes[(si+a)%len(schemes)].name
	}
	return name
}

// mropeGrid lays tokens out as Qwen2-VL's get_rope_index lays out an image
// or video: a start offset st, then for frame f, row y, column x the
// positions (st+f, st+y, st+x) on the first three axes (a 2-axis vision
// spec gets (y, x) from 0); grids of width 1 to 7.
func mropeGrid(r *rand.Rand, n, tokens int) []int32 {
	w := 1 + r.IntN(7)
	h := 1 + r.IntN(5)
	st := int32(r.IntN(3000))
	if n == 2 {
		st = 0
	}
	pos := make([]int32, 0, n*tokens)
	for t := range tokens {
		f, y, x := t/(w*h), t/w%h, t%w
		coords := []int32{int32(f), int32(y), int32(x)}
		if n == 2 {
			coords = coords[1:]
		}
		for a := range n {
			c := int32(0)
			if a < len(coords) {
				c = coords[a]
			}
			pos = append(pos, st+c)
		}
	}
	return pos
}

// mropeCase runs one M-RoPE call on guarded copies of the operands and
// checks every element against MRoPEApply under the RoPE bound of the
// token's largest |position| (st.near: for 16-bit storage, the reference
// rounded to st within one storage ulp plus that bound); it returns the
// outputs (nil when the call failed).
func mropeCase(rep *Report, s *spec.Spec, st Storage, name string, pos []int32, ops []ropeOperand, inverse bool, run func([]*guarded, []int32)) [][]float32 {
	c := rep.begin(name)
	gs := make([]*guarded, len(ops))
	for i, o := range ops {
		gs[i] = guard(o.x)
	}
	pcopy := append([]int32(nil), pos...)
	if !c.call(func() { run(gs, pcopy) }) {
		return nil
	}
	intsUnchanged(c, "pos", pcopy, pos)
	n := MRoPEAxes(s)
	hd, rd := s.HeadDim, rotaryDim(s)
	a := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	out := make([][]float32, len(ops))
	for oi, o := range ops {
		what := "x"
		if len(ops) == 2 {
			what = [2]string{"q", "k"}[oi]
		}
		gs[oi].intact(c, what)
		want := MRoPEApply(s, o.x, pos, o.heads, inverse)
		got := gs[oi].s
		for t := range len(pos) / n {
			var far int64
			for _, p := range pos[t*n : (t+1)*n] {
				far = max(far, abs64(int64(p)))
			}
			tol := ropeTol(far) * a
			for h := range o.heads {
				off := (t*o.heads + h) * hd
				for i := range pa {
					ia, ib := off+pa[i], off+pb[i]
					b := tol*(math.Abs(float64(o.x[ia]))+math.Abs(float64(o.x[ib]))) + 1e-30
					st.near(c, what, ia, float64(got[ia]), want[ia], b)
					st.near(c, what, ib, float64(got[ib]), want[ib], b)
				}
				for d := off + rd; d < off+hd; d++ {
					c.same(what, d, got[d], o.x[d])
				}
			}
		}
		out[oi] = append([]float32(nil), got...)
	}
	return out
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// mropeGolden runs ApplyMRoPE on the golden case of kind "mrope" named like
// s, if any: PyTorch float64 of Hugging Face's multimodal rotary.
func mropeGolden(rep *Report, s *spec.Spec, k RoPEKernels) {
	gc, err := goldenCase(s)
	if err != nil {
		rep.begin("golden").fail("%v", err)
		return
	}
	if gc == nil || gc.Kind != "mrope" {
		return
	}
	c := rep.begin("golden:" + gc.Name)
	n := MRoPEAxes(s)
	if len(gc.Pos) != n*gc.Tokens || len(gc.X) != gc.Tokens*gc.Heads*s.HeadDim || len(gc.Want) != len(gc.X) {
		c.fail("golden arrays do not match tokens %d, heads %d, %d axes", gc.Tokens, gc.Heads, n)
		return
	}
	g := guard(gc.X)
	if !c.call(func() { k.ApplyMRoPE(g.s, append([]int32(nil), gc.Pos...), gc.Heads) }) {
		return
	}
	g.intact(c, "x")
	a := RoPEAttentionFactor(s)
	for t := range gc.Tokens {
		var far int64
		for _, p := range gc.Pos[t*n : (t+1)*n] {
			far = max(far, abs64(int64(p)))
		}
		// The golden output is the float64 result rounded to float32: allow
		// the RoPE bound plus that rounding.
		tol := ropeTol(far) * a
		for i := t * gc.Heads * s.HeadDim; i < (t+1)*gc.Heads*s.HeadDim; i++ {
			want := float64(gc.Want[i])
			c.near("x", i, float64(g.s[i]), want, tol*gc.Scale*2+math.Abs(want)*0x1p-24)
		}
	}
}
