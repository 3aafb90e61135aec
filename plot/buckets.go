package plot

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// bucketOf returns the table column of the relative position rel = query
// position − key position, by the rule of the spec's encoding (plotsOf):
// for rpe_bias verify.RPEBucket (T5's _relative_position_bucket of Raffel
// et al. 2020 as Hugging Face's T5Attention implements it, or the clamp
// rule clamp(rel, −(r_max−1), r_max−1) + r_max−1 of Shaw et al. 2018), for
// rpe_full verify.RPEFullRow (the same clamp).
func bucketOf(s *spec.Spec, rel int) int { return plotsFor(s).bucket(s, rel) }

// bucketSpan is the distance beyond which the bucket no longer changes:
// max_distance for the T5 rule, r_max for the clamp rule.
func bucketSpan(s *spec.Spec) int {
	if s.Buckets != nil {
		return s.Buckets.MaxDistance
	}
	return s.RMax
}

// bucketGrid returns the bucket of every (key j, query i) pair with i, j in
// [0, n): for the clamp rule, the matrix of clamped distances i−j (plus
// r_max−1) that Figure D-1 of the online appendix D of Géron's "Hands-On
// Machine Learning with Scikit-Learn and PyTorch" draws.
func bucketGrid(s *spec.Spec, n int) *grid {
	g := newGrid(ints(0, n-1), ints(0, n-1))
	for i := range n {
		for j := range n {
			g.set(j, i, float64(bucketOf(s, i-j)))
		}
	}
	return g
}

// bucketFigure draws bucketGrid over enough positions to show the buckets
// saturate (4·bucketSpan, within [16, 256]).
func bucketFigure(s *spec.Spec) *Figure {
	n := min(max(4*bucketSpan(s), 16), 256)
	title := fmt.Sprintf("%s: bucket of (query i, key j), %d buckets", s.Name, s.NumBuckets())
	return heatmapChart(title, "key position j", "query position i", "bucket", bucketGrid(s, n))
}

// bucketCurve returns the bucket against rel = query − key for rel in
// [−2·bucketSpan, 2·bucketSpan].
func bucketCurve(s *spec.Spec) series {
	span := 2 * bucketSpan(s)
	x := ints(-span, span)
	y := make([]float64, len(x))
	for k, r := range x {
		y[k] = float64(bucketOf(s, int(r)))
	}
	return series{x: x, y: y, step: true}
}

// bucketCurveFigure plots bucketCurve.
func bucketCurveFigure(s *spec.Spec) (*Figure, error) {
	title := fmt.Sprintf("%s: bucket against relative position, %d buckets", s.Name, s.NumBuckets())
	return lineChart(title, "relative position i−j (query − key)", "bucket", axes{}, []series{bucketCurve(s)})
}
