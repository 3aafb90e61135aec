package plot

import (
	"fmt"
	"math"
	"slices"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"gonum.org/v1/plot/vg"
)

// ErrorCurve is one implementation's error at each of ErrorCurves.Positions.
type ErrorCurve struct {
	Label string    // legend label, e.g. "generated (go)"
	Naive bool      // the float32-angle baseline (drawn dashed)
	Err   []float64 // verify.RoPERelativeError at each position
}

// ErrorCurves is what `posenc plot -kind error` measures: at positions
// ≥ 1, the largest error of each implementation in the units of the
// verification bound of docs/design (verify.RoPERelativeError:
// |y − ref| / ((|x0|+|x1|)·A)).
type ErrorCurves struct {
	Positions []int64
	Curves    []ErrorCurve
}

// ErrorFloor is the smallest error drawn: smaller ones (an exact result
// has error 0) are drawn at ErrorFloor, since the error axis is logarithmic.
const ErrorFloor = 1e-10

// ErrorPositions returns the positions of the error curve: 8 log-spaced
// positions per octave from 1 to 2^31−1, plus max_position−1, max_position
// (the first one past the cached table) and 2^20, 2^20+1 (where the
// bound steps from 1e-6 to 1e-5), sorted.
func ErrorPositions(s *spec.Spec) []int64 {
	set := map[int64]bool{math.MaxInt32: true, 1 << 20: true, 1<<20 + 1: true}
	if mp := int64(s.MaxPosition); mp > 1 {
		set[mp-1], set[mp] = true, true
	}
	for k := 0; k < 31*8; k++ {
		set[int64(math.Round(math.Exp2(float64(k)/8)))] = true
	}
	var ps []int64
	for p := range set {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// boundSeries is the RoPE verification bound over the positions
// (verify.RoPEBound), as a step at 2^20.
func boundSeries(pos []int64) series {
	var x, y []float64
	for _, p := range pos {
		x = append(x, float64(p))
		y = append(y, verify.RoPEBound(p))
	}
	return series{label: "verification bound", x: x, y: y, color: gray, dashes: dashed, step: true}
}

// generatedDashes are the dash patterns of the generated curves in order
// (the generic variant, then avx2 and avx512, or neon); the naive baseline is
// dash-dotted and the bound dashed, so that every line differs from the
// others in dash pattern as well as colour.
var generatedDashes = [][]vg.Length{solid, dotted, longDot}

// RenderError draws the error curves against position (both axes
// logarithmic) with the verification bound as a third, dashed line.
func RenderError(s *spec.Spec, c *ErrorCurves) (*Figure, error) {
	if err := CheckKind(s, KindError); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	if len(c.Positions) == 0 || len(c.Curves) == 0 {
		return nil, fmt.Errorf("plot: no error measurements")
	}
	x := make([]float64, len(c.Positions))
	for i, p := range c.Positions {
		if p < 1 {
			return nil, fmt.Errorf("plot: error at position %d: positions must be ≥ 1 on a log axis", p)
		}
		x[i] = float64(p)
	}
	var ss []series
	generated := 0
	for _, cv := range c.Curves {
		if len(cv.Err) != len(x) {
			return nil, fmt.Errorf("plot: curve %q has %d values for %d positions", cv.Label, len(cv.Err), len(x))
		}
		y := make([]float64, len(x))
		for i, e := range cv.Err {
			if math.IsNaN(e) {
				return nil, fmt.Errorf("plot: curve %q is NaN at position %d", cv.Label, c.Positions[i])
			}
			y[i] = max(e, ErrorFloor)
		}
		sr := series{label: cv.Label, x: x, y: y, dashes: dashDot}
		if !cv.Naive {
			if generated == len(generatedDashes) {
				return nil, fmt.Errorf("plot: more than %d generated curves", len(generatedDashes))
			}
			sr.dashes = generatedDashes[generated]
			generated++
		}
		ss = append(ss, sr)
	}
	ss = append(ss, boundSeries(c.Positions))
	title := fmt.Sprintf("%s: RoPE error against the float64 reference", s.Name)
	f, err := lineChart(title, "position", "max |y−ref| / ((|x₀|+|x₁|)·A)",
		axes{logX: true, logY: true}, ss)
	if err != nil {
		return nil, err
	}
	return f, nil
}
