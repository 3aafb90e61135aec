package verify

import (
	"fmt"
	"sync"

	"github.com/posenc/posenc/spec"
)

// RelGoldenCase is one case of testdata/golden_rel/cases.json, with its
// arrays loaded. Kind is "rpe_full" or "xl"; query i sits at position
// QOffset+i, key j at position j; vectors are one head's [l][HeadDim] rows.
type RelGoldenCase struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// SpecYAML is the YAML text of the case's spec.
	SpecYAML string `json:"spec"`

	HeadDim int     `json:"head_dim"`
	RMax    int     `json:"r_max"` // rpe_full
	Base    float64 `json:"base"`  // xl
	LQ      int     `json:"lq"`
	LK      int     `json:"lk"`
	QOffset int     `json:"qoffset"`
	// RelN is the row count of the xl Relative case (WantRelative).
	RelN int `json:"rel_n"`

	// Q [lq][HeadDim] and K [lk][HeadDim], both kinds.
	Q, K []float32 `json:"-"`
	// V: rpe_full's values [lk][HeadDim]; xl's position bias v [HeadDim].
	V []float32 `json:"-"`
	// rpe_full: the tables aK, aV [2·r_max−1][HeadDim] and the attention
	// weights [lq][lk] (softmax of the scores, rounded to float32).
	AK, AV, Weights []float32 `json:"-"`
	// xl: r [lq+lk−1][HeadDim] (row m at distance QOffset+lq−1−m) and u
	// [HeadDim].
	R, U []float32 `json:"-"`
	// WantScores = Scores(…) [lq][lk]; WantOutput = rpe_full
	// Output(dst, Weights, V, AV, …) [lq][HeadDim]; WantRelative = xl
	// Relative(dst, RelN) [RelN][HeadDim].
	WantScores, WantOutput, WantRelative []float32 `json:"-"`
}

func (c *RelGoldenCase) caseName() string { return c.Name }

// arrays maps each array's cases.json key to its field.
func (c *RelGoldenCase) arrays() map[string]any {
	return map[string]any{
		"q": &c.Q, "k": &c.K, "v": &c.V, "a_k": &c.AK, "a_v": &c.AV,
		"weights": &c.Weights, "r": &c.R, "u": &c.U,
		"want_scores": &c.WantScores, "want_output": &c.WantOutput,
		"want_relative": &c.WantRelative,
	}
}

// RelGoldenCases returns every rpe_full and xl golden case with its arrays
// loaded, in the order of cases.json. The cases are loaded once and shared:
// callers must not modify them.
func RelGoldenCases() ([]*RelGoldenCase, error) { return loadRelGolden() }

var loadRelGolden = sync.OnceValues(func() ([]*RelGoldenCase, error) { return readCases[RelGoldenCase](relGoldenDir) })

// checkShapes reports an array whose length does not match the case.
func (c *RelGoldenCase) checkShapes() error {
	d, lq, lk := c.HeadDim, c.LQ, c.LK
	want := map[string]int{"q": lq * d, "k": lk * d, "want_scores": lq * lk}
	switch c.Kind {
	case "rpe_full":
		rows := 2*c.RMax - 1
		want["a_k"], want["a_v"], want["v"] = rows*d, rows*d, lk*d
		want["weights"], want["want_output"] = lq*lk, lq*d
	case "xl":
		want["r"], want["u"], want["v"] = xlRows(lq, lk)*d, d, d
		want["want_relative"] = c.RelN * d
	default:
		return fmt.Errorf("unknown kind %q", c.Kind)
	}
	arrays := c.arrays()
	for key, n := range want {
		if got := len(*arrays[key].(*[]float32)); got != n {
			return fmt.Errorf("%s has %d values, want %d", key, got, n)
		}
	}
	return nil
}

// relGoldenCase returns the rpe_full or xl golden case of spec s, or nil;
// like goldenCase, a golden spec without its case is an error.
func relGoldenCase(s *spec.Spec) (*RelGoldenCase, error) {
	cases, err := RelGoldenCases()
	c, err := findCase(cases, err, s.Name)
	if err == nil && c == nil && isGoldenSpec(s) {
		return nil, fmt.Errorf("golden spec %s: no golden case %s (run inside a posenc checkout)", s.File, s.Name)
	}
	return c, err
}
