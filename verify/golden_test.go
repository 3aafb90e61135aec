package verify

import (
	"math"
	"testing"

	"github.com/posenc/posenc/spec"
)

// goldenSpec parses a golden case's spec text.
func goldenSpec(t *testing.T, c *GoldenCase) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("golden/"+c.Name+".yaml", []byte(c.SpecYAML))
	if err != nil {
		t.Fatalf("golden %s: %v", c.Name, err)
	}
	return s
}

// TestReferenceReproducesGolden checks the float64 reference against every
// case of the independent PyTorch oracle, with the verification bounds of
// docs/design.
func TestReferenceReproducesGolden(t *testing.T) {
	cases, err := GoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 26 {
		t.Errorf("%d golden cases, want 26", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s := goldenSpec(t, c)
			worst := 0.0
			check := func(what string, k int, got, want, bound float64) {
				r := math.Abs(got-want) / bound
				worst = max(worst, r)
				if !(r <= 1) {
					t.Errorf("%s[%d] = %v, golden %v (|err| %.3g > bound %.3g)", what, k, got, want, math.Abs(got-want), bound)
				}
			}
			switch c.Kind {
			case "rope":
				y := RoPEApply(s, c.X, c.Pos, c.Heads, false)
				a := RoPEAttentionFactor(s)
				pa, pb := RoPEPairs(s)
				hd := s.HeadDim
				for tok, p := range c.Pos {
					tol := ropeTol(int64(p))
					for h := range c.Heads {
						o := (tok*c.Heads + h) * hd
						for i := range pa {
							b := tol*(math.Abs(float64(c.X[o+pa[i]]))+math.Abs(float64(c.X[o+pb[i]])))*a + 1e-30
							check("y", o+pa[i], y[o+pa[i]], float64(c.Want[o+pa[i]]), b)
							check("y", o+pb[i], y[o+pb[i]], float64(c.Want[o+pb[i]]), b)
						}
						for d := rotaryDim(s); d < hd; d++ {
							if y[o+d] != float64(c.Want[o+d]) {
								t.Errorf("dim %d beyond rotary_dim: %v, golden %v", d, y[o+d], c.Want[o+d])
							}
						}
					}
				}
			case "mrope":
				mropeGoldenCheck(s, c, check)
			case "alibi":
				bias := ALiBiBias(s, c.LQ, c.LK, c.QOffset)
				mb := maxAbs(bias)
				for k, w := range c.WantBias {
					check("bias", k, bias[k], float64(w), 1e-6*mb)
				}
				sm := Softmax(c.Scores, bias, BiasMask(s, c.QOffset), s.Heads, c.LQ, c.LK, c.Scale)
				for k, w := range c.WantSoftmax {
					check("softmax", k, sm[k], float64(w), 1e-6)
				}
			case "rpe_bias":
				bias := RPEBias(s, c.Table, c.LQ, c.LK, c.QOffset)
				for k, w := range c.WantBias {
					if bias[k] != float64(w) {
						t.Errorf("bias[%d] = %v, golden %v", k, bias[k], w)
					}
				}
			case "sinusoidal":
				y := AbsoluteAdd(s, c.X, c.Pos)
				for k, w := range c.Want {
					check("y", k, y[k], float64(w), 2e-6*math.Max(1, math.Abs(float64(w))))
				}
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			t.Logf("%s: worst |err|/bound %.3g", c.Name, worst)
		})
	}
}
