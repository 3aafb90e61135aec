package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// relVariant is the harness's RelVariant (an alias of the same struct type).
type relVariant = struct {
	Name        string
	Available   bool
	DotRows     func(dst, x, rows []float32)
	ScoresRow   func(dst, q, k, bias []float32, scale float32)
	AxpyRows    func(dst, w, rows []float32)
	XLScoresRow func(dst, qu, k, qv, r []float32)
}

// relCase is one generated rpe_full (xl false) or xl package.
type relCase struct {
	name     string
	xl       bool
	headDim  int
	variants []relVariant
}

// relRows are the row counts of the rpe_full and xl kernels: below, at and
// around both block sizes (8, 16), and long rows whose last block overlaps
// the one before.
var relRows = []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 100, 255}

// dotTol bounds the rounding error of a float32 sum of n products whose
// magnitudes add up to mag (γ_n with slack, as verify's bounds).
func dotTol(n int, mag float64) float64 { return 4*float64(n+4)*0x1p-24*mag + 1e-30 }

// relInput returns a guarded copy of src (ending at a PROT_NONE page) and
// a function failing the test when it or its guard words changed.
func relInput(t *testing.T, src []float32, what string) ([]float32, func(string)) {
	g, check := guardedF32(t, len(src))
	copy(g, src)
	return g, func(name string) {
		t.Helper()
		check(name + " " + what)
		for i := range src {
			if math.Float32bits(g[i]) != math.Float32bits(src[i]) {
				t.Fatalf("%s: input %s changed at %d", name, what, i)
			}
		}
	}
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	fill(r, v, -2, 2)
	return v
}

// relCall is one kernel call of TestRelDots and the float64 value and
// magnitude sum of row j it should give.
type relCall struct {
	what string
	run  func()
	ref  func(j int) (want, mag float64)
}

// TestRelDots checks dotRows and scoresRow (rpe_full) and the xl scoresRow
// against float64 sums: every row count of relRows, inputs ending at
// PROT_NONE pages, dst's guard words and untouched inputs.
func TestRelDots(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	for _, rc := range relCases {
		d := rc.headDim
		for _, v := range rc.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", rc.name, v.Name)
				continue
			}
			worst := 0.0
			for _, n := range relRows {
				name := fmt.Sprintf("%s/%s/rows%d", rc.name, v.Name, n)
				x0, m0 := randVec(r, d), randVec(r, n*d)
				x1, m1 := randVec(r, d), randVec(r, n*d)
				bias0 := randVec(r, n)
				const scale = float32(0.3)
				x, checkX := relInput(t, x0, "x")
				m, checkM := relInput(t, m0, "rows")
				xb, checkXB := relInput(t, x1, "x2")
				mb, checkMB := relInput(t, m1, "rows2")
				bias, checkBias := relInput(t, bias0, "bias")
				dst, checkDst := guardedF32(t, n)
				for i := range dst {
					dst[i] = float32(math.NaN())
				}
				// want[j], mag[j]: the float64 result and its magnitude sum.
				want, mag := make([]float64, n), make([]float64, n)
				dot := func(j int, a, rows []float32) {
					for c := range d {
						p := float64(a[c]) * float64(rows[j*d+c])
						want[j] += p
						mag[j] += math.Abs(p)
					}
				}
				for j := range n {
					dot(j, x0, m0)
				}
				var kernels []relCall
				if rc.xl {
					kernels = append(kernels, relCall{"xl scoresRow", func() { v.XLScoresRow(dst, x, m, xb, mb) }, func(j int) (float64, float64) {
						w, g := want[j], mag[j]
						want[j], mag[j] = 0, 0
						dot(j, x1, m1)
						w, g, want[j], mag[j] = w+want[j], g+mag[j], w, g
						return w, g
					}})
				} else {
					kernels = append(kernels,
						relCall{"dotRows", func() { v.DotRows(dst, x, m) }, func(j int) (float64, float64) { return want[j], mag[j] }},
						relCall{"scoresRow", func() { v.ScoresRow(dst, x, m, bias, scale) }, func(j int) (float64, float64) {
							return (want[j] + float64(bias0[j])) * float64(scale), (mag[j] + math.Abs(float64(bias0[j]))) * float64(scale)
						}})
				}
				for _, k := range kernels {
					for i := range dst {
						dst[i] = float32(math.NaN())
					}
					k.run()
					checkDst(name + " " + k.what + " dst")
					for _, check := range []func(string){checkX, checkM, checkXB, checkMB, checkBias} {
						check(name + " " + k.what)
					}
					for j := range n {
						w, g := k.ref(j)
						e := math.Abs(float64(dst[j]) - w)
						if !(e <= dotTol(2*d, g)) {
							t.Fatalf("%s %s: row %d: got %v want %v", name, k.what, j, dst[j], w)
						}
						worst = math.Max(worst, e/dotTol(2*d, g))
					}
				}
			}
			t.Logf("rel dots %s/%s: max error %.3f of the bound", rc.name, v.Name, worst)
		}
	}
}

// TestRelAxpy checks the rpe_full axpyRows: dst += Σ_r w[r]·rows[r] for
// every row count of relRows, against float64.
func TestRelAxpy(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, rc := range relCases {
		if rc.xl {
			continue
		}
		d := rc.headDim
		for _, v := range rc.variants {
			if !v.Available {
				continue
			}
			worst := 0.0
			for _, n := range relRows {
				name := fmt.Sprintf("axpyRows %s/%s/rows%d", rc.name, v.Name, n)
				w0, m0, dst0 := randVec(r, n), randVec(r, n*d), randVec(r, d)
				w, checkW := relInput(t, w0, "w")
				m, checkM := relInput(t, m0, "rows")
				dst, checkDst := guardedF32(t, d)
				copy(dst, dst0)
				v.AxpyRows(dst, w, m)
				checkDst(name + " dst")
				checkW(name)
				checkM(name)
				for c := range d {
					want, mag := float64(dst0[c]), math.Abs(float64(dst0[c]))
					for j := range n {
						p := float64(w0[j]) * float64(m0[j*d+c])
						want += p
						mag += math.Abs(p)
					}
					e := math.Abs(float64(dst[c]) - want)
					if !(e <= dotTol(n, mag)) {
						t.Fatalf("%s: element %d: got %v want %v", name, c, dst[c], want)
					}
					worst = math.Max(worst, e/dotTol(n, mag))
				}
			}
			t.Logf("axpyRows %s/%s: max error %.3f of the bound", rc.name, v.Name, worst)
		}
	}
}
