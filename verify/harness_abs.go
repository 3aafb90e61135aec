package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// AbsoluteKernels are the exported functions of a generated absolute
// encoding package (docs/design, "Generated Go package"), as dispatched to the
// variant under test; x is [token][DModel]. Only the fields of the spec's
// encoding are used: Add and Encode for sinusoidal, algebraic and binary,
// LearnedAdd for learned (the package's Add), MixtureAdd for mixture (the
// package's Add).
type AbsoluteKernels struct {
	Add        func(x []float32, pos []int32)
	Encode     func(dst []float32, pos int)
	LearnedAdd func(x, table []float32, pos []int32)
	MixtureAdd func(x, table []float32, pos []int32, alpha float32)
}

// absTol is the absolute-encoding bound of docs/design: 2e-6·max(1, |expected|).
func absTol(want float64) float64 { return 2e-6 * math.Max(1, math.Abs(want)) }

// mixtureAlphas are the α of the mixture cases.
var mixtureAlphas = []float32{0, 0.25, 1}

// RunAbsolute checks a sinusoidal, algebraic, binary, learned or mixture
// variant against the reference within 2e-6·max(1, |expected|): Add over
// the token counts of the RoPE cases (tokenCounts) with positions 0,
// max_len−1, max_len, 2^20, 2^31−1, negative and random ones (learned and
// mixture: table rows only, with a [MaxLen][DModel] table), Add with x
// cancelling the added encoding (x ≈ −PE, so that rounding PE to float32
// before the add fails the bound), and Encode at those positions. Every call runs on slices inside sentinel-filled
// buffers; a slice one element too short must panic before anything is
// written. Golden cases named like s are checked too.
func RunAbsolute(s *spec.Spec, k AbsoluteKernels) *Report {
	rep := &Report{Spec: s.Name}
	r := rand.New(rand.NewPCG(0xab5, 3))
	d, ml := s.DModel, s.MaxLen
	const big = math.MaxInt32
	special := []int64{0, int64(ml) - 1, int64(ml), 1 << 20, big, -1, -(1 << 20) - 3, -big}
	switch s.Encoding {
	case spec.Sinusoidal, spec.Algebraic, spec.Binary:
		if k.Add == nil || k.Encode == nil {
			rep.begin("kernels").fail("AbsoluteKernels lacks Add or Encode")
			return rep
		}
		schemes := []posScheme{
			{"pos=0…", func(r *rand.Rand, n int) []int32 { return fill(r, n, []int64{0}, uniform(0, int64(ml))) }},
			{"pos special", func(r *rand.Rand, n int) []int32 { return fill(r, n, special, uniform(0, int64(ml))) }},
			{"pos<max_len", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, uniform(0, int64(ml))) }},
			{"pos∈[max_len,2^31)", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, uniform(int64(ml), big)) }},
			{"pos<0", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, uniform(-big, 0)) }},
		}
		for _, sch := range schemes {
			for _, n := range tokenCounts {
				pos := sch.gen(r, n)
				x := randomVector(r, n*d)
				absCase(rep, fmt.Sprintf("Add tokens=%d %s", n, sch.name), x, pos, nil, func(xg *guarded, _ []float32, p []int32) {
					k.Add(xg.s, p)
				}, func() []float64 { return AbsoluteAdd(s, x, pos) })
			}
		}
		absCancelCases(rep, r, s, k.Add)
		for _, p := range special {
			c := rep.begin(fmt.Sprintf("Encode pos=%d", p))
			dst := guardUnset(d)
			if !c.call(func() { k.Encode(dst.s, int(p)) }) {
				continue
			}
			dst.intact(c, "dst")
			for i, w := range AbsoluteEncoding(s, int(p)) {
				c.near("dst", i, float64(dst.s[i]), w, absTol(w))
			}
		}
		xs := guard(randomVector(r, 3*d-1))
		rep.expectPanic("Add with x one element short", func() { k.Add(xs.s, []int32{0, 1, 2}) }, xs)
		ds := guardUnset(d - 1)
		rep.expectPanic("Encode with dst one element short", func() { k.Encode(ds.s, 1) }, ds)
	case spec.Learned, spec.Mixture:
		mixture := s.Encoding == spec.Mixture
		if (!mixture && k.LearnedAdd == nil) || (mixture && k.MixtureAdd == nil) {
			rep.begin("kernels").fail("AbsoluteKernels lacks the %s Add", s.Encoding)
			return rep
		}
		// The table (up to 256 MiB) is guarded once and shared by every
		// call; absCase checks its sentinels after each call, and its
		// contents are checked once after all the Add cases.
		tg := guardRandom(r, ml*d)
		table := tg.s
		tfp := tg.fingerprint()
		add := func(x, table []float32, pos []int32, alpha float32) {
			if mixture {
				k.MixtureAdd(x, table, pos, alpha)
			} else {
				k.LearnedAdd(x, table, pos)
			}
		}
		alphas := []float32{1}
		if mixture {
			alphas = mixtureAlphas
		}
		for _, n := range tokenCounts {
			pos := fill(r, n, []int64{int64(ml) - 1, 0}, uniform(0, int64(ml)))
			for _, alpha := range alphas {
				x := randomVector(r, n*d)
				name := fmt.Sprintf("Add tokens=%d", n)
				if mixture {
					name += fmt.Sprintf(" alpha=%g", alpha)
				}
				absCase(rep, name, x, pos, tg, func(xg *guarded, tb []float32, p []int32) {
					add(xg.s, tb, p, alpha)
				}, func() []float64 {
					if mixture {
						return MixtureAdd(s, x, table, pos, alpha)
					}
					return LearnedAdd(s, x, table, pos)
				})
			}
		}
		for _, alpha := range alphas {
			tableCancelCase(rep, r, s, tg, alpha, mixture, add)
		}
		c := rep.begin("table unchanged by every Add")
		tg.unchanged(c, "table", tfp)
		if c.fails == 0 {
			rep.ratio(0, c.name)
		}
		pos := []int32{0, int32(ml) - 1}
		xs, tf := guard(randomVector(r, 2*d-1)), tg
		rep.expectPanic("Add with x one element short", func() { add(xs.s, tf.s, pos, 0.5) }, xs, tf)
		xf, ts := guard(randomVector(r, 2*d)), guard(table[:len(table)-1])
		rep.expectPanic("Add with table one element short", func() { add(xf.s, ts.s, pos, 0.5) }, xf, ts)
	default:
		rep.begin("kernels").fail("RunAbsolute: encoding %q is not an absolute encoding", s.Encoding)
		return rep
	}
	absGolden(rep, s, k)
	return rep
}

// absCase runs one Add call on a guarded copy of x (and on the shared
// guarded table tg when not nil, whose sentinels it checks after the call;
// the caller checks its contents after all the cases) and compares x with
// want().
func absCase(rep *Report, name string, x []float32, pos []int32, tg *guarded, run func(*guarded, []float32, []int32), want func() []float64) {
	c := rep.begin(name)
	xg := guard(x)
	var tb []float32
	if tg != nil {
		tb = tg.s
	}
	pcopy := append([]int32(nil), pos...)
	if !c.call(func() { run(xg, tb, pcopy) }) {
		return
	}
	xg.intact(c, "x")
	intsUnchanged(c, "pos", pcopy, pos)
	if tg != nil {
		tg.intact(c, "table")
	}
	for i, w := range want() {
		c.near("x", i, float64(xg.s[i]), w, absTol(w))
	}
}

// absGolden runs Add on the golden case named like s, if any.
func absGolden(rep *Report, s *spec.Spec, k AbsoluteKernels) {
	gc, err := goldenCase(s)
	if err != nil {
		rep.begin("golden").fail("%v", err)
		return
	}
	if gc == nil || gc.Kind != s.Encoding || k.Add == nil {
		return
	}
	c := rep.begin("golden:" + gc.Name)
	xg := guard(gc.X)
	if !c.call(func() { k.Add(xg.s, append([]int32(nil), gc.Pos...)) }) {
		return
	}
	xg.intact(c, "x")
	for i, w := range gc.Want {
		c.near("x", i, float64(xg.s[i]), float64(w), absTol(float64(w)))
	}
}
