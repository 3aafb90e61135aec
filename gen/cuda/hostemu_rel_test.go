package cuda_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// The rpe_full and xl bounds of verify/harness_rel.go (scoreTol,
// outputTol): a float32 sum of n products is within γ_n·Σ|terms|, γ_n ≈
// n·2^−24 (Higham, Accuracy and Stability of Numerical Algorithms, §3.1),
// with 4 extra roundings and a factor 4 of slack.
func relScoreTol(d int, mag float64) float64 { return 4*float64(d+4)*0x1p-24*mag + 1e-30 }
func relOutputTol(lk int, mag float64) float64 {
	return 4*float64(2*lk+4)*0x1p-24*mag + 1e-30
}

// rpeScoresMag returns Σ_x |q_x|·(|k_x| + |aK_x|)/√d per score, the
// magnitude relScoreTol scales (verify/harness_rel.go, rpeFullScores).
func rpeScoresMag(s *spec.Spec, q, k, aK []float32, lq, lk, qOffset int) []float64 {
	d := s.HeadDim
	mag := make([]float64, lq*lk)
	for i := range lq {
		for j := range lk {
			b := verify.RPEFullRow(s, qOffset+i-j)
			var m float64
			for x := range d {
				m += math.Abs(float64(q[i*d+x])) * (math.Abs(float64(k[j*d+x])) + math.Abs(float64(aK[b*d+x])))
			}
			mag[i*lk+j] = m / math.Sqrt(float64(d))
		}
	}
	return mag
}

// rpeOutputMag returns Σ_j |w_ij|·(|v_jx| + |aV_bx|) per output element
// (verify/harness_rel.go, rpeFullOutput).
func rpeOutputMag(s *spec.Spec, w, v, aV []float32, lq, lk, qOffset int) []float64 {
	d := s.HeadDim
	mag := make([]float64, lq*d)
	for i := range lq {
		for j := range lk {
			b := verify.RPEFullRow(s, qOffset+i-j)
			a := math.Abs(float64(w[i*lk+j]))
			for x := range d {
				mag[i*d+x] += a * (math.Abs(float64(v[j*d+x])) + math.Abs(float64(aV[b*d+x])))
			}
		}
	}
	return mag
}

// xlScoresMag returns Σ_x (|q_x|+|u_x|)·|k_x| + (|q_x|+|v_x|)·|r_x| per
// score (verify/harness_rel.go, xlScores).
func xlScoresMag(s *spec.Spec, q, k, r, u, v []float32, lq, lk int) []float64 {
	d := s.HeadDim
	mag := make([]float64, lq*lk)
	for i := range lq {
		for j := range lk {
			row := lq - 1 - i + j
			var m float64
			for x := range d {
				qa := math.Abs(float64(q[i*d+x]))
				m += (qa+math.Abs(float64(u[x])))*math.Abs(float64(k[j*d+x])) + (qa+math.Abs(float64(v[x])))*math.Abs(float64(r[row*d+x]))
			}
			mag[i*lk+j] = m
		}
	}
	return mag
}

// randWeights returns lq rows of lk non-negative weights summing to about
// 1, rounded to the storage type.
func randWeights(l *cudahost.Lib, r *rand.Rand, lq, lk int) []float32 {
	w := make([]float32, lq*lk)
	for i := range lq {
		var sum float64
		for j := range lk {
			e := r.ExpFloat64()
			w[i*lk+j] = float32(e)
			sum += e
		}
		for j := range lk {
			w[i*lk+j] = float32(float64(w[i*lk+j]) / sum)
		}
	}
	return l.RoundTrip(w)
}

// relShape is one (lq, lk, qOffset) call shape.
type relShape struct{ lq, lk, qOffset int }

// checkRel runs the spec's kernels (rpe_full Scores and Output, or xl
// Scores) once per shape on random inputs rounded to the storage type, and
// xl's Relative for each n, against the float64 reference of package
// verify, with bound u·|ref| + the f32 bound (u = 0 for f32 storage).
func checkRel(t *testing.T, l *cudahost.Lib, r *rand.Rand, ck *checker, u float64, shapes []relShape, relN []int) {
	t.Helper()
	s := l.Spec()
	d := s.HeadDim
	for _, sh := range shapes {
		lq, lk, qo := sh.lq, sh.lk, sh.qOffset
		switch s.Encoding {
		case spec.RPEFull:
			k := l.RPEFull()
			rows := 2*s.RMax - 1
			q, kk, aK := randn(l, r, lq*d), randn(l, r, lk*d), randn(l, r, rows*d)
			got := make([]float32, lq*lk)
			k.Scores(got, q, kk, aK, lq, lk, qo)
			want := verify.RPEFullScores(s, q, kk, aK, lq, lk, qo)
			mag := rpeScoresMag(s, q, kk, aK, lq, lk, qo)
			ck.check("scores", got, want, func(i int) float64 { return u*math.Abs(want[i]) + relScoreTol(d, mag[i]) })

			w, v, aV := randWeights(l, r, lq, lk), randn(l, r, lk*d), randn(l, r, rows*d)
			got = make([]float32, lq*d)
			for i := range got {
				got[i] = float32(math.NaN()) // every element must be written
			}
			k.Output(got, w, v, aV, lq, lk, qo)
			want = verify.RPEFullOutput(s, w, v, aV, lq, lk, qo)
			mag = rpeOutputMag(s, w, v, aV, lq, lk, qo)
			ck.check("output", got, want, func(i int) float64 { return u*math.Abs(want[i]) + relOutputTol(lk, mag[i]) })
		case spec.XL:
			k := l.XL()
			rows := 0
			if lq > 0 && lk > 0 {
				rows = lq + lk - 1
			}
			q, kk, rr := randn(l, r, lq*d), randn(l, r, lk*d), randn(l, r, rows*d)
			uu, vv := randn(l, r, d), randn(l, r, d)
			got := make([]float32, lq*lk)
			k.Scores(got, q, kk, rr, uu, vv, lq, lk, qo)
			want := verify.XLScores(s, q, kk, rr, uu, vv, lq, lk, qo)
			mag := xlScoresMag(s, q, kk, rr, uu, vv, lq, lk)
			ck.check("scores", got, want, func(i int) float64 { return u*math.Abs(want[i]) + relScoreTol(d, mag[i]) })
		}
	}
	if s.Encoding == spec.XL {
		for _, n := range relN {
			got := make([]float32, n*d)
			l.XL().Relative(got, n)
			want := verify.XLRelative(s, n)
			ck.check("relative", got, want, func(i int) float64 { return u*math.Abs(want[i]) + 2e-6*math.Max(1, math.Abs(want[i])) })
		}
	}
}

// relReducedPrecision is TestHostEmulationReducedPrecision's rpe_full and
// xl case.
func relReducedPrecision(t *testing.T, l *cudahost.Lib, r *rand.Rand, ck *checker, u float64) {
	checkRel(t, l, r, ck, u, []relShape{{1, 1, 0}, {5, 9, 4}, {7, 40, 100}, {3, 300, 0}, {2, 70, 1 << 20}, {0, 5, 0}, {4, 0, 2}}, []int{0, 1, 7, 3000})
}

// relWideSpecs exercise the kernels' paths that verify's shapes (lk ≤ 515,
// head_dim ≤ 64) do not reach: several 1024-key tiles with the middle
// range straddling a tile boundary and both clipped ranges present
// (rpefull64 at lk = 2100), several 256-dim chunks of Output (head_dim 300),
// a query row too wide to stage in shared memory (head_dim 4100), and an
// xl head too wide for the __constant__ divisor table (head_dim 8200: the
// divisors come from pow on the device).
var relWideSpecs = []struct {
	yaml   string
	shapes []relShape
	relN   []int
}{
	{"name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		[]relShape{{3, 2100, 1000}, {2, 1500, 0}, {2, 1100, 5000}, {1, 3000, math.MaxInt32 - 1}}, nil},
	{"name: rpe_wide300\nencoding: rpe_full\nhead_dim: 300\nr_max: 40\n",
		[]relShape{{3, 1300, 600}, {2, 0, 0}, {1, 90, 45}}, nil},
	{"name: rpe_wide4100\nencoding: rpe_full\nhead_dim: 4100\nr_max: 3\n",
		[]relShape{{2, 40, 20}, {1, 7, 0}}, nil},
	{"name: xl_wide8200\nencoding: xl\nhead_dim: 8200\nbase: 10000\n",
		[]relShape{{2, 30, 7}, {1, 5, 0}}, []int{0, 1, 3}},
}

// TestHostEmulationRelWide runs relWideSpecs' shapes on the host-emulated
// rpe_full and xl kernels against the float64 reference, and compiles
// them to PTX.
func TestHostEmulationRelWide(t *testing.T) {
	for _, w := range relWideSpecs {
		c := derive(t, w.yaml)
		t.Run(c.Input().Name, func(t *testing.T) {
			if _, ok := cuda.Clang(); ok {
				if _, err := cuda.CompilePTX(write(t, c), c.Input().Name+".cu"); err != nil {
					t.Error(err)
				}
			}
			l := buildLib(t, w.yaml)
			ck := &checker{t: t, name: c.Input().Name}
			checkRel(t, l, rand.New(rand.NewPCG(7, 11)), ck, 0, w.shapes, w.relN)
			t.Logf("%s/%s: max error/bound %.3g", c.Input().Name, cudahost.Target, ck.worst)
		})
	}
}

// relMutations are deliberate bugs in the generated rpe_full and xl
// kernels, each a replacement of one line of the emitted .cu, that the
// verify harness (Lib.Verify) must catch.
var relMutations = []struct {
	name, yaml, old, new string
}{
	{"scores middle row sign (p−j read as j−p)", "name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		"aK + (size_t)(kSpan + p - (ja + r)) * kHeadDim", "aK + (size_t)(kSpan - p + (ja + r)) * kHeadDim"},
	{"scores clipped rows swapped", "name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		"j < nh ? s_end[0] : j >= fl ? s_end[1]", "j < nh ? s_end[1] : j >= fl ? s_end[0]"},
	{"output drops the row-0 end bucket", "name: rpefull_r1\nencoding: rpe_full\nhead_dim: 5\nr_max: 1\n",
		"acc = fmaf(wl, ld(aV + x), acc);", "(void)wl;"},
	{"output middle row off by one", "name: rpefull_wide\nencoding: rpe_full\nhead_dim: 12\nr_max: 700\n",
		"ld(aV + (size_t)(kSpan + p - j) * kHeadDim + x)", "ld(aV + (size_t)(kSpan + p - j - 1) * kHeadDim + x)"},
	{"scores write one past the row", "name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		"for (int j = j0 + tid; j < j1; j += nt) {", "for (int j = j0 + tid; j <= j1; j += nt) {"},
	{"128-bit path uses the wrong element", "name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
		"acc[j & 3] = fmaf(q(x + j), v[j], acc[j & 3]);", "acc[j & 3] = fmaf(q(x + j), v[j & 1], acc[j & 3]);"},
	{"xl u and v swapped", "name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
		"s_qu[x] = qx + ld(u + x);", "s_qu[x] = qx + ld(v + x);"},
	{"xl relative row off by one", "name: xl6\nencoding: xl\nhead_dim: 6\nbase: 500\n",
		"const store_t *ri = r + (size_t)(lq - 1 - i) * kHeadDim;", "const store_t *ri = r + (size_t)(lq - i) * kHeadDim;"},
	{"xl relative angle in f32", "name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
		"sincos_angle((double)(n - 1 - m) / divisor(i), &s, &c);", "sincosf((float)(n - 1 - m) / (float)divisor(i), &s, &c);"},
}

// TestHostEmulationRelBroken checks that the harness catches each of
// relMutations: the mutated .cu still builds, and Lib.Verify reports
// failures.
func TestHostEmulationRelBroken(t *testing.T) {
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, m := range relMutations {
		t.Run(m.name, func(t *testing.T) {
			c := derive(t, m.yaml)
			dir := write(t, c)
			cu := filepath.Join(dir, c.Input().Name+".cu")
			src, err := os.ReadFile(cu)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(src), m.old); n != 1 {
				t.Fatalf("%s.cu has %d copies of %q, want 1: update the mutation", c.Input().Name, n, m.old)
			}
			if err := os.WriteFile(cu, []byte(strings.Replace(string(src), m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := cudahost.Build(c.Input(), cu)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := l.Verify()
			if r.OK() {
				t.Fatalf("the harness passed the broken kernel (%d cases, max error/bound %.3g)", r.Cases, r.MaxRatio)
			}
			t.Logf("caught: %d failures, first: %s", len(r.Failures), r.Failures[0])
		})
	}
}
