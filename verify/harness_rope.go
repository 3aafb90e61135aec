package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// RoPEKernels are the exported functions and constants of a generated rope
// package (docs/design, "Generated Go package"), as dispatched to the variant
// under test.
type RoPEKernels struct {
	Apply         func(x []float32, pos []int32, heads int)
	ApplyQK       func(q, k []float32, pos []int32, qHeads, kHeads int)
	Inverse       func(x []float32, pos []int32, heads int)
	Frequencies   func() []float64
	FrequenciesAt func(seqLen int) []float64
	// AttentionFactor is the package's AttentionFactor constant.
	AttentionFactor float64

	// The engine forms (harness_rope_forms.go); a nil one is not checked.
	ApplyStrided   func(x []float32, pos []int32, heads, stride, headStride int)
	ApplyHeadMajor func(x []float32, pos []int32, heads int)
	ApplyQKStrided func(qkv []float32, pos []int32, qHeads, kHeads, stride int)
	ApplyTo        func(dst, src []float32, pos []int32, heads int)
	ApplyToSlots   func(cache []float32, slots []int32, src []float32, pos []int32, heads int)
	Shift          func(x []float32, delta int32, heads, n int)

	// The M-RoPE forms of a spec with mrope_section (harness_mrope.go);
	// required for such a spec, ignored otherwise.
	ApplyMRoPE   func(x []float32, pos []int32, heads int)
	ApplyQKMRoPE func(q, k []float32, pos []int32, qHeads, kHeads int)
	InverseMRoPE func(x []float32, pos []int32, heads int)

	// ScaleQ is Llama 4's query temperature of a spec with
	// attn_temperature (harness_temperature.go); required for such a
	// spec, ignored otherwise.
	ScaleQ func(q []float32, pos []int32, heads int)
}

// ropeTol is the relative RoPE bound of docs/design at position p: 1e-6 up to
// |p| = 2^20, 1e-5 beyond.
func ropeTol(p int64) float64 {
	if p >= -(1<<20) && p <= 1<<20 {
		return 1e-6
	}
	return 1e-5
}

// freqTol bounds the relative error of the reported frequencies and the
// attention factor: a few float64 ulps of any reasonable evaluation order.
const freqTol = 1e-12

var (
	tokenCounts = []int{1, 2, 3, 7, 16, 17, 31, 33, 64}
	headCounts  = []int{1, 3, 5, 8, 12}
	gqaHeads    = [][2]int{{8, 2}, {1, 3}, {4, 4}, {5, 1}, {12, 3}}
)

// posScheme generates the positions of one case.
type posScheme struct {
	name string
	gen  func(r *rand.Rand, n int) []int32
}

// fill returns n positions: the fixed ones first, then draws of rnd.
func fill(r *rand.Rand, n int, fixed []int64, rnd func(*rand.Rand) int64) []int32 {
	p := make([]int32, n)
	for i := range p {
		if i < len(fixed) {
			p[i] = int32(fixed[i])
		} else {
			p[i] = int32(rnd(r))
		}
	}
	return p
}

// uniform draws from [lo, hi).
func uniform(lo, hi int64) func(*rand.Rand) int64 {
	return func(r *rand.Rand) int64 { return lo + r.Int64N(hi-lo) }
}

// ropeSchemes lists the position patterns of the RoPE cases.
func ropeSchemes(s *spec.Spec) []posScheme {
	mp := int64(s.MaxPosition)
	if mp <= 0 {
		mp = 4096
	}
	const big = math.MaxInt32
	schemes := []posScheme{
		{"pos=0…", func(r *rand.Rand, n int) []int32 {
			p := make([]int32, n)
			for i := range p {
				p[i] = int32(i)
			}
			return p
		}},
		{"pos≈max_position", func(r *rand.Rand, n int) []int32 {
			return fill(r, n, []int64{mp - 1, mp, mp + 1, 0, mp - 2}, uniform(0, mp))
		}},
		{"pos<max_position", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, uniform(0, mp)) }},
		{"pos≈2^20", func(r *rand.Rand, n int) []int32 {
			return fill(r, n, []int64{1 << 20, 1<<20 - 1, 1<<20 + 1}, uniform(1<<20-64, 1<<20+64))
		}},
		{"pos∈[2^20,2^31)", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, uniform(1<<20, big)) }},
		{"pos≈2^31", func(r *rand.Rand, n int) []int32 {
			return fill(r, n, []int64{big, big - 1, big - 2}, uniform(big-1000, big+1))
		}},
		{"pos<0", func(r *rand.Rand, n int) []int32 {
			return fill(r, n, []int64{-1, -big, -(1 << 20)}, func(r *rand.Rand) int64 {
				if r.IntN(2) == 0 {
					return -1 - r.Int64N(1<<20)
				}
				return -1 - r.Int64N(big)
			})
		}},
		{"pos mixed", func(r *rand.Rand, n int) []int32 {
			special := []int64{0, mp - 1, mp, mp + 1, 1 << 20, big, -1, -12345}
			return fill(r, n, nil, func(r *rand.Rand) int64 {
				switch r.IntN(3) {
				case 0:
					return special[r.IntN(len(special))]
				case 1:
					return r.Int64N(mp)
				}
				return r.Int64N(big)
			})
		}},
	}
	// Calls on either side of the runtime switch of dynamic and longrope
	// (and the context bound of yarn and llama3): max(pos)+1 = omp is not
	// scaled, max(pos)+1 = omp+1 is.
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 && sc.OriginalMaxPosition < big {
		omp := int64(sc.OriginalMaxPosition)
		schemes = append(schemes,
			posScheme{"max(pos)+1=omp", func(r *rand.Rand, n int) []int32 {
				return fill(r, n, []int64{omp - 1}, uniform(0, omp))
			}},
			posScheme{"max(pos)+1=omp+1", func(r *rand.Rand, n int) []int32 {
				return fill(r, n, []int64{omp, omp - 1}, uniform(0, omp))
			}})
	}
	return schemes
}

// randomVector returns n normal-ish float32 values, some of large and some
// of tiny magnitude, some exactly zero.
func randomVector(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	fillRandom(r, v)
	return v
}

// fillRandom fills v with randomVector's values.
func fillRandom(r *rand.Rand, v []float32) {
	for i := range v {
		x := r.NormFloat64()
		switch u := r.IntN(100); {
		case u < 4:
			x *= 1e4
		case u < 6:
			x *= 1e-4
		case u < 7:
			x = 0
		}
		v[i] = float32(x)
	}
}

// RunRoPE checks a rope variant against the reference: the attention
// factor and frequencies, then Apply, Inverse and ApplyQK on random inputs
// over the token counts, head counts (including GQA pairs) and position
// patterns of docs/design ("Verification"), plus calls larger than
// GroupedMaxBytes (the assembly's streaming loop order), within
// |y − ref| ≤ 1e-6·(|x0|+|x1|)·A (1e-5 beyond |p| = 2^20) per element and
// bit-identical dims ≥ RotaryDim; every call runs on slices inside
// sentinel-filled buffers, and a slice one element too short must panic
// before anything is written. Golden cases named like s are checked too.
func RunRoPE(s *spec.Spec, k RoPEKernels) *Report { return runRoPE(s, k, StorageF32) }

// runRoPE is RunRoPE for kernels that store st: inputs are values of st and
// every rotated output is checked with st.near (harness_rope16.go).
func runRoPE(s *spec.Spec, k RoPEKernels, st Storage) *Report {
	rep := &Report{Spec: s.Name}
	if k.Apply == nil || k.ApplyQK == nil || k.Inverse == nil || k.Frequencies == nil || k.FrequenciesAt == nil {
		rep.begin("kernels").fail("RoPEKernels has a nil function")
		return rep
	}
	ropeConstants(rep, s, k)
	r := rand.New(rand.NewPCG(0x9e3779b9, 1))
	hd := s.HeadDim
	schemes := ropeSchemes(s)
	for si, sch := range schemes {
		for ti, n := range tokenCounts {
			heads := headCounts[(si+ti)%len(headCounts)]
			pos := sch.gen(r, n)
			x := st.vector(r, n*heads*hd)
			name := fmt.Sprintf("Apply tokens=%d heads=%d %s", n, heads, sch.name)
			ropeCase(rep, s, st, name, pos, []ropeOperand{{x, heads}}, false, func(o []*guarded, pos []int32) {
				k.Apply(o[0].s, pos, heads)
			})
			if ti%2 == 0 {
				heads = headCounts[(si+ti+2)%len(headCounts)]
				x = st.vector(r, n*heads*hd)
				name = fmt.Sprintf("Inverse tokens=%d heads=%d %s", n, heads, sch.name)
				ropeCase(rep, s, st, name, pos, []ropeOperand{{x, heads}}, true, func(o []*guarded, pos []int32) {
					k.Inverse(o[0].s, pos, heads)
				})
			}
		}
		for gi, hk := range gqaHeads {
			n := tokenCounts[(si*len(gqaHeads)+gi)%len(tokenCounts)]
			pos := sch.gen(r, n)
			q, kk := st.vector(r, n*hk[0]*hd), st.vector(r, n*hk[1]*hd)
			name := fmt.Sprintf("ApplyQK tokens=%d qHeads=%d kHeads=%d %s", n, hk[0], hk[1], sch.name)
			ropeCase(rep, s, st, name, pos, []ropeOperand{{q, hk[0]}, {kk, hk[1]}}, false, func(o []*guarded, pos []int32) {
				k.ApplyQK(o[0].s, o[1].s, pos, hk[0], hk[1])
			})
		}
	}
	// Length mismatches: one element too short.
	pos := []int32{0, 5, int32(s.MaxPosition) + 3}
	short := func(heads int) *guarded { return guard(st.vector(r, len(pos)*heads*hd-1)) }
	full := func(heads int) *guarded { return guard(st.vector(r, len(pos)*heads*hd)) }
	g := short(3)
	rep.expectPanic("Apply with x one element short", func() { k.Apply(g.s, pos, 3) }, g)
	g2 := short(3)
	rep.expectPanic("Inverse with x one element short", func() { k.Inverse(g2.s, pos, 3) }, g2)
	q, kk := short(4), full(2)
	rep.expectPanic("ApplyQK with q one element short", func() { k.ApplyQK(q.s, kk.s, pos, 4, 2) }, q, kk)
	q2, kk2 := full(4), short(2)
	rep.expectPanic("ApplyQK with k one element short", func() { k.ApplyQK(q2.s, kk2.s, pos, 4, 2) }, q2, kk2)

	ropeLarge(rep, s, st, k, rand.New(rand.NewPCG(0x9e3779b9, 2)))
	ropeManyHeads(rep, s, st, k, rand.New(rand.NewPCG(0x9e3779b9, 3)))
	if st == StorageF32 {
		// The golden inputs are float32 values; a 16-bit package cannot hold them.
		ropeGolden(rep, s, k)
	}
	ropeForms(rep, s, k, st)
	if s.IsMRoPE() {
		mropeCases(rep, s, k, st)
	}
	if s.AttnTemperature != nil {
		temperatureCases(rep, s, k, st)
	}
	return rep
}

// ropeConstants checks AttentionFactor, Frequencies and FrequenciesAt.
func ropeConstants(rep *Report, s *spec.Spec, k RoPEKernels) {
	c := rep.begin("AttentionFactor")
	want := RoPEAttentionFactor(s)
	c.near("AttentionFactor", 0, k.AttentionFactor, want, freqTol*want)
	freqs := func(name string, got, want []float64) {
		c := rep.begin(name)
		if len(got) != len(want) {
			c.fail("%d frequencies, want %d", len(got), len(want))
			return
		}
		for i := range want {
			c.near("ω", i, got[i], want[i], freqTol*want[i])
		}
	}
	freqs("Frequencies()", k.Frequencies(), RoPEFrequencies(s, 0))
	lens := []int{0, 1, s.MaxPosition, s.MaxPosition + 1, 1 << 20, math.MaxInt32, CallSeqLen([]int32{math.MaxInt32})}
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 {
		omp := sc.OriginalMaxPosition
		lens = append(lens, omp-1, omp, omp+1, 2*omp, 3*omp+7)
	}
	for _, n := range lens {
		freqs(fmt.Sprintf("FrequenciesAt(%d)", n), k.FrequenciesAt(n), RoPEFrequencies(s, n))
	}
}

// ropeOperand is one input tensor of a RoPE call and its head count.
type ropeOperand struct {
	x     []float32
	heads int
}

// ropeCase runs one RoPE call on guarded copies of the operands and checks
// every element against RoPEApply.
func ropeCase(rep *Report, s *spec.Spec, st Storage, name string, pos []int32, ops []ropeOperand, inverse bool, run func([]*guarded, []int32)) {
	c := rep.begin(name)
	gs := make([]*guarded, len(ops))
	for i, o := range ops {
		gs[i] = guard(o.x)
	}
	pcopy := append([]int32(nil), pos...)
	if !c.call(func() { run(gs, pcopy) }) {
		return
	}
	intsUnchanged(c, "pos", pcopy, pos)
	for i, o := range ops {
		what := "x"
		if len(ops) == 2 {
			what = [2]string{"q", "k"}[i]
		}
		gs[i].intact(c, what)
		want := RoPEApply(s, o.x, pos, o.heads, inverse)
		checkRotated(c, s, st, what, o.x, gs[i].s, want, pos, o.heads)
	}
}

// checkRotated compares a kernel's rotated output with the reference under
// the per-pair bound of docs/design; dims ≥ RotaryDim must equal the
// input bits.
func checkRotated(c *check, s *spec.Spec, st Storage, what string, in, got []float32, want []float64, pos []int32, heads int) {
	hd, rd := s.HeadDim, rotaryDim(s)
	a := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	for t, p := range pos {
		tol := ropeTol(int64(p)) * a
		for h := range heads {
			o := (t*heads + h) * hd
			for i := range pa {
				ia, ib := o+pa[i], o+pb[i]
				b := tol*(math.Abs(float64(in[ia]))+math.Abs(float64(in[ib]))) + 1e-30
				st.near(c, what, ia, float64(got[ia]), want[ia], b)
				st.near(c, what, ib, float64(got[ib]), want[ib], b)
			}
			for d := o + rd; d < o+hd; d++ {
				c.same(what, d, got[d], in[d])
			}
		}
	}
}

// ropeGolden runs Apply on the golden case named like s, if any.
func ropeGolden(rep *Report, s *spec.Spec, k RoPEKernels) {
	gc, err := goldenCase(s)
	if err != nil {
		rep.begin("golden").fail("%v", err)
		return
	}
	if gc == nil || gc.Kind != "rope" {
		return
	}
	c := rep.begin("golden:" + gc.Name)
	g := guard(gc.X)
	if !c.call(func() { k.Apply(g.s, append([]int32(nil), gc.Pos...), gc.Heads) }) {
		return
	}
	g.intact(c, "x")
	want := make([]float64, len(gc.Want))
	for i, v := range gc.Want {
		want[i] = float64(v)
	}
	checkRotated(c, s, StorageF32, "x", gc.X, g.s, want, gc.Pos, gc.Heads)
}
