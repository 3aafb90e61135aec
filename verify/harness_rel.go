package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// RPEFullKernels are the exported functions of a generated rpe_full package
// (Shaw et al. 2018), as dispatched to the variant under test. Per head:
// q and k are [lq][HeadDim] and [lk][HeadDim], aK and aV the learned
// [2·r_max−1][HeadDim] tables; query i sits at position qOffset+i, key j at
// position j.
type RPEFullKernels struct {
	// Scores writes dst [lq][lk]: e_ij = q_i·(k_j + aK[b(i,j)])/√HeadDim.
	Scores func(dst, q, k, aK []float32, lq, lk, qOffset int)
	// Output writes dst [lq][HeadDim]: o_i = Σ_j weights_ij (v_j + aV[b(i,j)]),
	// weights [lq][lk], v [lk][HeadDim].
	Output func(dst, weights, v, aV []float32, lq, lk, qOffset int)
}

// XLKernels are the exported functions of a generated xl package (Dai et
// al. 2019), as dispatched to the variant under test.
type XLKernels struct {
	// Scores writes dst [lq][lk]: A_ij = (q_i+u)·k_j + (q_i+v)·r[lq−1−i+j],
	// r [lq+lk−1][HeadDim] with row m holding distance qOffset+lq−1−m
	// (0 rows when lq or lk is 0); u and v hold HeadDim values. No scale.
	Scores func(dst, q, k, r, u, v []float32, lq, lk, qOffset int)
	// Relative writes dst [n][HeadDim]: the sinusoid R of distance n−1−m in
	// row m.
	Relative func(dst []float32, n int)
}

// relShape is one (lq, lk, qOffset) of the rpe_full and xl cases: lq ≠ lk
// both ways, qOffset > 0 (up to 2^20 and 2^31−2), lengths that are not
// multiples of any vector width, empty calls.
type relShape struct{ lq, lk, qOffset int }

var relShapes = []relShape{
	{1, 1, 0}, {4, 4, 0}, {7, 11, 4}, {9, 5, 0}, {33, 17, 100}, {3, 65, 62},
	{17, 33, 0}, {5, 40, 1 << 20}, {2, 300, 298}, {1, 515, 514}, {3, 7, math.MaxInt32 - 3},
	{0, 5, 0}, {6, 0, 3},
}

// Rounding bounds. A float32 dot product of length n (or any sum of n
// float32 products, accumulated in any order) differs from the exact value
// by at most γ_n·Σ|terms| with γ_n = n·u/(1−n·u) ≈ n·2^−24 (Higham, Accuracy
// and Stability of Numerical Algorithms, §3.1). The kernels add a few more
// roundings (forming q+u, adding two partial sums, the 1/√d scale), counted
// as 4 extra terms, and the bound takes a factor 4 of slack for the constant
// in γ_n and the float32 rounding of the inputs the caller already holds:
//
//	scores: |got − ref| ≤ 4·(HeadDim+4)·2^−24·M + 1e-30,
//	        M = Σ_d |q_d|·(|k_d| + |a_d|)/√d (rpe_full) or
//	        Σ_d (|q_d|+|u_d|)·|k_d| + (|q_d|+|v_d|)·|r_d| (xl);
//	output: |got − ref| ≤ 4·(2·lk+4)·2^−24·M + 1e-30, M = Σ_j |α_ij|·(|v_jd| + |a_jd|),
//	        the 2·lk allowing a kernel that sums α·v over lk keys and α·a
//	        over up to lk distinct distances separately.
//
// The relative table is an absolute encoding: ≤ 2e-6·max(1, |ref|).
const ulp32 = 0x1p-24

func scoreTol(d int, mag float64) float64 { return 4*float64(d+4)*ulp32*mag + 1e-30 }
func outputTol(lk int, mag float64) float64 {
	return 4*float64(2*lk+4)*ulp32*mag + 1e-30
}

// xlRows is the number of rows of r an xl Scores call takes.
func xlRows(lq, lk int) int {
	if lq == 0 || lk == 0 {
		return 0
	}
	return lq + lk - 1
}

// randomWeights returns lq rows of lk non-negative weights summing to 1
// (attention probabilities); every fifth row puts all mass on one key.
func randomWeights(r *rand.Rand, lq, lk int) []float32 {
	w := make([]float32, lq*lk)
	for i := range lq {
		row := w[i*lk : (i+1)*lk]
		if i%5 == 4 && lk > 0 {
			row[r.IntN(lk)] = 1
			continue
		}
		var sum float64
		raw := make([]float64, lk)
		for j := range raw {
			raw[j] = r.ExpFloat64()
			sum += raw[j]
		}
		for j := range row {
			row[j] = float32(raw[j] / sum)
		}
	}
	return w
}

// relCall runs one kernel call on the guarded inputs gs (fresh copies, or
// a table guarded once and shared by every call) with a fresh guarded
// output of n elements, checks the guards and that no input changed, and
// returns the output (nil when the call panicked).
func relCall(c *check, n int, gs []*guarded, names []string, f func(dst []float32, in [][]float32)) []float32 {
	dst := guardUnset(n)
	args := make([][]float32, len(gs))
	prints := make([]fingerprint, len(gs))
	for i, g := range gs {
		args[i] = g.s
		if !g.shared {
			prints[i] = g.fingerprint()
		}
	}
	if !c.call(func() { f(dst.s, args) }) {
		return nil
	}
	dst.intact(c, "dst")
	for i, g := range gs {
		if g.shared {
			g.intact(c, names[i])
		} else {
			g.unchanged(c, names[i], prints[i])
		}
	}
	return dst.s
}

// guardRandom returns a guarded slice of n randomVector values, drawn in
// place (no second copy of a large table).
func guardRandom(r *rand.Rand, n int) *guarded {
	g := guard(make([]float32, n))
	fillRandom(r, g.s)
	return g
}

// guardAll guards each of vs.
func guardAll(vs ...[]float32) []*guarded {
	gs := make([]*guarded, len(vs))
	for i, v := range vs {
		gs[i] = guard(v)
	}
	return gs
}

// shortPanics checks, for each argument in turn, that a call with that
// argument one element short panics before writing anything. lens are the
// correct lengths (the first is dst's); an argument of length 0 is skipped.
// Inputs are copied from the front of pool (random values) when it is long
// enough, else drawn from r: redrawing a 256 MiB table per argument took
// longer than the whole rest of the harness.
func shortPanics(rep *Report, fn string, r *rand.Rand, pool []float32, names []string, lens []int, call func(args [][]float32)) {
	for a := range lens {
		if lens[a] == 0 {
			continue
		}
		gs := make([]*guarded, len(lens))
		args := make([][]float32, len(lens))
		for i, n := range lens {
			if i == a {
				n--
			}
			switch {
			case i == 0:
				gs[i] = guardUnset(n)
			case n <= len(pool):
				gs[i] = guard(pool[:n])
			default:
				gs[i] = guard(randomVector(r, n))
			}
			args[i] = gs[i].s
		}
		rep.expectPanic(fmt.Sprintf("%s with %s one element short", fn, names[a]), func() { call(args) }, gs...)
	}
}

// RunRPEFull checks an rpe_full variant against the float64 reference of
// Shaw et al. (2018): Scores within scoreTol and Output within outputTol
// (see above) over relShapes, on random inputs (some entries ±1e4·N(0,1),
// some tiny, some zero) in sentinel-guarded slices; every output element
// must be written, nothing outside dst and no input modified, and a call
// with any argument one element too short must panic before writing. A spec
// named like a case of testdata/golden_rel is also run on that case.
func RunRPEFull(s *spec.Spec, k RPEFullKernels) *Report {
	rep := &Report{Spec: s.Name}
	if s.Encoding != spec.RPEFull {
		rep.begin("kernels").fail("RunRPEFull: encoding %q is not rpe_full", s.Encoding)
		return rep
	}
	if k.Scores == nil || k.Output == nil {
		rep.begin("kernels").fail("RPEFullKernels has a nil function")
		return rep
	}
	d, rows := s.HeadDim, 2*s.RMax-1
	r := rand.New(rand.NewPCG(0x5a4e, 2018))
	// The tables are guarded once and shared by every call (each is up to
	// 256 MiB); relCall checks their sentinels after each call, and their
	// contents are checked once after all the calls.
	aKg, aVg := guardRandom(r, rows*d), guardRandom(r, rows*d)
	aK, aV := aKg.s, aVg.s
	aKg.shared, aVg.shared = true, true
	aKfp, aVfp := aKg.fingerprint(), aVg.fingerprint()
	for _, sh := range relShapes {
		lq, lk, qo := sh.lq, sh.lk, sh.qOffset
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)
		q, kk := randomVector(r, lq*d), randomVector(r, lk*d)

		c := rep.begin("Scores " + shape)
		got := relCall(c, lq*lk, append(guardAll(q, kk), aKg), []string{"q", "k", "aK"}, func(dst []float32, in [][]float32) {
			k.Scores(dst, in[0], in[1], in[2], lq, lk, qo)
		})
		if got != nil {
			want, mag := rpeFullScores(s, q, kk, aK, lq, lk, qo)
			for x, w := range want {
				c.near("dst", x, float64(got[x]), w, scoreTol(d, mag[x]))
			}
		}

		wts, v := randomWeights(r, lq, lk), randomVector(r, lk*d)
		c = rep.begin("Output " + shape)
		got = relCall(c, lq*d, append(guardAll(wts, v), aVg), []string{"weights", "v", "aV"}, func(dst []float32, in [][]float32) {
			k.Output(dst, in[0], in[1], in[2], lq, lk, qo)
		})
		if got != nil {
			want, mag := rpeFullOutput(s, wts, v, aV, lq, lk, qo)
			for x, w := range want {
				c.near("dst", x, float64(got[x]), w, outputTol(lk, mag[x]))
			}
		}
	}

	c := rep.begin("aK and aV unchanged by every Scores and Output call")
	aKg.unchanged(c, "aK", aKfp)
	aVg.unchanged(c, "aV", aVfp)
	if c.fails == 0 {
		rep.ratio(0, c.name)
	}

	rpeFullGolden(rep, s, k)

	const lq, lk, qo = 3, 5, 2
	shortPanics(rep, "Scores", r, aK, []string{"dst", "q", "k", "aK"}, []int{lq * lk, lq * d, lk * d, rows * d}, func(a [][]float32) {
		k.Scores(a[0], a[1], a[2], a[3], lq, lk, qo)
	})
	shortPanics(rep, "Output", r, aV, []string{"dst", "weights", "v", "aV"}, []int{lq * d, lq * lk, lk * d, rows * d}, func(a [][]float32) {
		k.Output(a[0], a[1], a[2], a[3], lq, lk, qo)
	})
	return rep
}

// xlBigRelative is the row count of the largest Relative case: 5000, or
// fewer for wide heads so that the case stays near 2^21 (row, pair) items,
// past the 2^20 at which the CUDA kernel's grid (4096 blocks of 256
// threads) strides, instead of 5000·HeadDim values (82 M at HeadDim
// 16384: over a GiB of output and reference, and minutes under qemu).
func xlBigRelative(headDim int) int {
	pairs := max(1, headDim/2)
	return min(5000, max(65, (1<<21+pairs-1)/pairs))
}

// RunXL checks an xl variant against the float64 reference of Dai et al.
// (2019): Scores within scoreTol over relShapes on random q, k, r, u, v
// (r is the caller's projected table, so any values), and Relative within
// 2e-6·max(1, |ref|) for n = 0, 1, 2, 7, 64 and xlBigRelative(HeadDim)
// rows, with the guards,
// untouched inputs and short-argument panics of RunRPEFull, and the
// golden_rel case named like the spec, if any.
func RunXL(s *spec.Spec, k XLKernels) *Report {
	rep := &Report{Spec: s.Name}
	if s.Encoding != spec.XL {
		rep.begin("kernels").fail("RunXL: encoding %q is not xl", s.Encoding)
		return rep
	}
	if k.Scores == nil || k.Relative == nil {
		rep.begin("kernels").fail("XLKernels has a nil function")
		return rep
	}
	d := s.HeadDim
	r := rand.New(rand.NewPCG(0xd1a1, 2019))
	u, v := randomVector(r, d), randomVector(r, d)
	for _, sh := range relShapes {
		lq, lk, qo := sh.lq, sh.lk, sh.qOffset
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)
		q, kk, rr := randomVector(r, lq*d), randomVector(r, lk*d), randomVector(r, xlRows(lq, lk)*d)
		c := rep.begin("Scores " + shape)
		got := relCall(c, lq*lk, guardAll(q, kk, rr, u, v), []string{"q", "k", "r", "u", "v"}, func(dst []float32, in [][]float32) {
			k.Scores(dst, in[0], in[1], in[2], in[3], in[4], lq, lk, qo)
		})
		if got != nil {
			want, mag := xlScores(s, q, kk, rr, u, v, lq, lk)
			for x, w := range want {
				c.near("dst", x, float64(got[x]), w, scoreTol(d, mag[x]))
			}
		}
	}
	for _, n := range []int{0, 1, 2, 7, 64, xlBigRelative(d)} {
		c := rep.begin(fmt.Sprintf("Relative n=%d", n))
		got := relCall(c, n*d, nil, nil, func(dst []float32, _ [][]float32) { k.Relative(dst, n) })
		if got != nil {
			for x, w := range XLRelative(s, n) {
				c.near("dst", x, float64(got[x]), w, 2e-6*math.Max(1, math.Abs(w)))
			}
		}
	}

	xlGolden(rep, s, k)

	const lq, lk, qo = 3, 5, 2
	shortPanics(rep, "Scores", r, nil, []string{"dst", "q", "k", "r", "u", "v"},
		[]int{lq * lk, lq * d, lk * d, xlRows(lq, lk) * d, d, d}, func(a [][]float32) {
			k.Scores(a[0], a[1], a[2], a[3], a[4], a[5], lq, lk, qo)
		})
	shortPanics(rep, "Relative", r, nil, []string{"dst"}, []int{7 * d}, func(a [][]float32) { k.Relative(a[0], 7) })
	return rep
}

// relGoldenFor returns the golden_rel case named like s when it is of s's
// encoding, or nil (as the other harnesses, a case of another kind is
// ignored); a case of s's encoding whose head_dim, r_max or base differ from
// s's is a failure, not a silent skip.
func relGoldenFor(rep *Report, s *spec.Spec) *RelGoldenCase {
	gc, err := relGoldenCase(s)
	if err != nil {
		rep.begin("golden").fail("%v", err)
		return nil
	}
	if gc == nil || gc.Kind != s.Encoding {
		return nil
	}
	if gc.HeadDim != s.HeadDim || (gc.Kind == spec.RPEFull && gc.RMax != s.RMax) || (gc.Kind == spec.XL && gc.Base != s.Base) {
		rep.begin("golden:"+gc.Name).fail("the golden case (%s, head_dim %d, r_max %d, base %g) does not fit spec %s", gc.Kind, gc.HeadDim, gc.RMax, gc.Base, s.Name)
		return nil
	}
	return gc
}

// rpeFullGolden runs Scores and Output on the golden_rel case named like s:
// the oracle's values are float64 results rounded to float32, so the bounds
// are scoreTol and outputTol plus that rounding, 2^−24·|want|.
func rpeFullGolden(rep *Report, s *spec.Spec, k RPEFullKernels) {
	gc := relGoldenFor(rep, s)
	if gc == nil {
		return
	}
	lq, lk, qo, d := gc.LQ, gc.LK, gc.QOffset, s.HeadDim
	c := rep.begin("golden:" + gc.Name + " Scores")
	got := relCall(c, lq*lk, guardAll(gc.Q, gc.K, gc.AK), []string{"q", "k", "aK"}, func(dst []float32, in [][]float32) {
		k.Scores(dst, in[0], in[1], in[2], lq, lk, qo)
	})
	if got != nil {
		_, mag := rpeFullScores(s, gc.Q, gc.K, gc.AK, lq, lk, qo)
		nearOracle(c, got, gc.WantScores, func(x int) float64 { return scoreTol(d, mag[x]) })
	}
	c = rep.begin("golden:" + gc.Name + " Output")
	got = relCall(c, lq*d, guardAll(gc.Weights, gc.V, gc.AV), []string{"weights", "v", "aV"}, func(dst []float32, in [][]float32) {
		k.Output(dst, in[0], in[1], in[2], lq, lk, qo)
	})
	if got != nil {
		_, mag := rpeFullOutput(s, gc.Weights, gc.V, gc.AV, lq, lk, qo)
		nearOracle(c, got, gc.WantOutput, func(x int) float64 { return outputTol(lk, mag[x]) })
	}
}

// nearOracle checks got[x] against the oracle's want[x] within tol(x) plus
// the oracle's own rounding to float32, 2^−24·|want[x]|.
func nearOracle(c *check, got, want []float32, tol func(x int) float64) {
	for x, w := range want {
		c.near("dst", x, float64(got[x]), float64(w), tol(x)+ulp32*math.Abs(float64(w)))
	}
}

// xlGolden runs Scores and Relative on the golden_rel case named like s:
// Scores within scoreTol plus the oracle's float32 rounding, Relative
// within the 2e-6·max(1, |want|) of an absolute encoding.
func xlGolden(rep *Report, s *spec.Spec, k XLKernels) {
	gc := relGoldenFor(rep, s)
	if gc == nil {
		return
	}
	lq, lk, qo, d := gc.LQ, gc.LK, gc.QOffset, s.HeadDim
	c := rep.begin("golden:" + gc.Name + " Scores")
	got := relCall(c, lq*lk, guardAll(gc.Q, gc.K, gc.R, gc.U, gc.V), []string{"q", "k", "r", "u", "v"}, func(dst []float32, in [][]float32) {
		k.Scores(dst, in[0], in[1], in[2], in[3], in[4], lq, lk, qo)
	})
	if got != nil {
		_, mag := xlScores(s, gc.Q, gc.K, gc.R, gc.U, gc.V, lq, lk)
		nearOracle(c, got, gc.WantScores, func(x int) float64 { return scoreTol(d, mag[x]) })
	}
	n := gc.RelN
	c = rep.begin(fmt.Sprintf("golden:%s Relative n=%d", gc.Name, n))
	got = relCall(c, n*d, nil, nil, func(dst []float32, _ [][]float32) { k.Relative(dst, n) })
	if got != nil {
		for x, w := range gc.WantRelative {
			c.near("dst", x, float64(got[x]), float64(w), 2e-6*math.Max(1, math.Abs(float64(w))))
		}
	}
}
