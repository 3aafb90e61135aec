package verify

import (
	"io/fs"
	"math"
	"path"
	"slices"
	"testing"

	"github.com/posenc/posenc/spec"
)

// relGoldenSpec parses a golden_rel case's spec text and checks that
// testdata/golden/specs holds the same text under the case's name (the spec
// internal/goldens generates the case's package from).
func relGoldenSpec(t *testing.T, c *RelGoldenCase) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("golden_rel/"+c.Name+".yaml", []byte(c.SpecYAML))
	if err != nil {
		t.Fatalf("golden_rel %s: %v", c.Name, err)
	}
	file, err := fs.ReadFile(goldenFS(), path.Join(goldenDir, "specs", c.Name+".yaml"))
	if err != nil {
		t.Errorf("golden_rel %s: %v", c.Name, err)
	} else if string(file) != c.SpecYAML {
		t.Errorf("golden_rel %s: specs/%s.yaml is %q, cases.json has %q", c.Name, c.Name, file, c.SpecYAML)
	}
	return s
}

// relGoldenTol bounds |ref − want| for a float64 reference value against
// the oracle's float64 value rounded to float32: the rounding, at most
// 2^−24·|want|, plus both float64 sums' own error, at most about
// n·2^−53·mag each for the n ≤ 140 products of these cases, taken as
// 2^−40·mag.
func relGoldenTol(want, mag float64) float64 {
	return ulp32*math.Abs(want) + 0x1p-40*mag + 1e-300
}

// TestReferenceReproducesRelGolden checks verify's float64 rpe_full and xl
// references (RPEFullScores, RPEFullOutput, XLScores, XLRelative) against
// every case of the independent PyTorch oracle in testdata/golden_rel: they
// must agree to the float32 rounding of the oracle's values.
func TestReferenceReproducesRelGolden(t *testing.T) {
	cases, err := RelGoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[c.Kind]++
	}
	if kinds[spec.RPEFull] != 5 || kinds[spec.XL] != 4 {
		t.Errorf("golden_rel has %v cases, want 5 rpe_full and 4 xl", kinds)
	}
	overall := 0.0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s := relGoldenSpec(t, c)
			worst, worstMag := 0.0, 0.0
			check := func(what string, got []float64, want []float32, mag func(int) float64) {
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, golden %d", what, len(got), len(want))
				}
				for x, w := range want {
					e := math.Abs(got[x] - float64(w))
					m := mag(x)
					r := e / relGoldenTol(float64(w), m)
					worst = max(worst, r)
					if m > 0 {
						worstMag = max(worstMag, e/m)
					}
					if !(r <= 1) {
						t.Errorf("%s[%d] = %v, golden %v (|err| %.3g, bound %.3g)", what, x, got[x], w, e, relGoldenTol(float64(w), m))
					}
				}
			}
			lq, lk, qo := c.LQ, c.LK, c.QOffset
			switch c.Kind {
			case spec.RPEFull:
				e, emag := rpeFullScores(s, c.Q, c.K, c.AK, lq, lk, qo)
				check("scores", e, c.WantScores, func(x int) float64 { return emag[x] })
				if !slices.Equal(RPEFullScores(s, c.Q, c.K, c.AK, lq, lk, qo), e) {
					t.Errorf("RPEFullScores differs from rpeFullScores")
				}
				o, omag := rpeFullOutput(s, c.Weights, c.V, c.AV, lq, lk, qo)
				check("output", o, c.WantOutput, func(x int) float64 { return omag[x] })
				if !slices.Equal(RPEFullOutput(s, c.Weights, c.V, c.AV, lq, lk, qo), o) {
					t.Errorf("RPEFullOutput differs from rpeFullOutput")
				}
			case spec.XL:
				a, amag := xlScores(s, c.Q, c.K, c.R, c.U, c.V, lq, lk)
				check("scores", a, c.WantScores, func(x int) float64 { return amag[x] })
				if !slices.Equal(XLScores(s, c.Q, c.K, c.R, c.U, c.V, lq, lk, qo), a) {
					t.Errorf("XLScores differs from xlScores")
				}
				// Each value is one sin or cos: its magnitude bound is 1.
				check("relative", XLRelative(s, c.RelN), c.WantRelative, func(int) float64 { return 1 })
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			overall = max(overall, worstMag)
			t.Logf("%s: worst |err|/bound %.3g, worst |err|/magnitude sum %.3g (2^%.1f)", c.Name, worst, worstMag, math.Log2(worstMag))
		})
	}
	t.Logf("all cases: worst |err|/magnitude sum %.3g", overall)
}

// TestRelGoldenDiscriminates checks that the golden_rel cases pin the
// conventions down: the references with a distance of key − query instead
// of query − key (the rpe_full table, the xl rows read in reverse), or with
// xl's R laid out as Dai et al.'s code does (all sines, then all cosines),
// miss the oracle by far more than the rounding bound.
func TestRelGoldenDiscriminates(t *testing.T) {
	cases, err := RelGoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	// misses reports whether some value of got is outside relGoldenTol
	// (with the magnitude sum bounded by 1e6, far above any of these cases').
	misses := func(got []float64, want []float32) bool {
		for x, w := range want {
			if math.Abs(got[x]-float64(w)) > relGoldenTol(float64(w), 1e6) {
				return true
			}
		}
		return false
	}
	for _, c := range cases {
		s := relGoldenSpec(t, c)
		d, lq, lk, qo := c.HeadDim, c.LQ, c.LK, c.QOffset
		switch c.Kind {
		case spec.RPEFull:
			if c.RMax == 1 { // one row: the sign cannot matter
				continue
			}
			// Row b of the reversed table is row 2(r_max−1)−b: b(−rel).
			flipK, flipV := reverseRows(c.AK, d), reverseRows(c.AV, d)
			if !misses(RPEFullScores(s, c.Q, c.K, flipK, lq, lk, qo), c.WantScores) {
				t.Errorf("%s: scores with key − query distances match the oracle", c.Name)
			}
			if !misses(RPEFullOutput(s, c.Weights, c.V, flipV, lq, lk, qo), c.WantOutput) {
				t.Errorf("%s: output with key − query distances match the oracle", c.Name)
			}
		case spec.XL:
			if lq+lk > 2 && !misses(XLScores(s, c.Q, c.K, reverseRows(c.R, d), c.U, c.V, lq, lk, qo), c.WantScores) {
				t.Errorf("%s: scores with r's rows in ascending distance match the oracle", c.Name)
			}
			rel := XLRelative(s, c.RelN)
			if c.RelN > 1 && !misses(reverseRows64(rel, d), c.WantRelative) {
				t.Errorf("%s: Relative with rows in ascending distance matches the oracle", c.Name)
			}
			if !misses(concatLayout(rel, d), c.WantRelative) {
				t.Errorf("%s: Relative with sines then cosines matches the oracle", c.Name)
			}
		}
	}
}

// reverseRows returns the rows of width d of v in reverse order.
func reverseRows(v []float32, d int) []float32 {
	out := make([]float32, 0, len(v))
	for m := len(v)/d - 1; m >= 0; m-- {
		out = append(out, v[m*d:(m+1)*d]...)
	}
	return out
}

// reverseRows64 is reverseRows for float64 rows.
func reverseRows64(v []float64, d int) []float64 {
	out := make([]float64, 0, len(v))
	for m := len(v)/d - 1; m >= 0; m-- {
		out = append(out, v[m*d:(m+1)*d]...)
	}
	return out
}

// concatLayout rewrites interleaved (sin, cos) pairs of each row of width d
// as d/2 sines followed by d/2 cosines.
func concatLayout(v []float64, d int) []float64 {
	out := make([]float64, len(v))
	for o := 0; o < len(v); o += d {
		for i := 0; 2*i < d; i++ {
			out[o+i], out[o+d/2+i] = v[o+2*i], v[o+2*i+1]
		}
	}
	return out
}
