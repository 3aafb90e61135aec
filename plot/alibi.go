package plot

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// alibiMaxLines is the most heads drawn as separate lines; more heads are
// drawn as a heatmap (BLOOM-176B has 112).
const alibiMaxLines = 16

// alibiDistance is the largest query–key distance plotted.
const alibiDistance = 128

// alibiBias returns bias[h][d] = −m_h·d for distances d = |i−j| in
// [0, maxDist]: ALiBi's bias (Press et al. 2022, "Train Short, Test Long",
// §3: softmax(q_i·K^T + m·[−(i−1), …, −1, 0])), with the slopes m_h of
// verify.ALiBiSlopes. It is the same for keys before and after the query;
// a causal model only meets the keys before it.
func alibiBias(s *spec.Spec, maxDist int) [][]float64 {
	// One query at position maxDist against keys 0 … maxDist: key j is at
	// distance maxDist−j.
	n := maxDist + 1
	b := verify.ALiBiBias(s, 1, n, maxDist)
	out := make([][]float64, s.Heads)
	for h := range out {
		row := make([]float64, n)
		for d := range row {
			row[d] = b[h*n+maxDist-d]
		}
		out[h] = row
	}
	return out
}

// alibiFigure plots the bias against distance: one line per head, or a
// heatmap over (distance, head) when there are more than alibiMaxLines heads.
func alibiFigure(s *spec.Spec) (*Figure, error) {
	bias := alibiBias(s, alibiDistance)
	sl := verify.ALiBiSlopes(s)
	title := fmt.Sprintf("%s: ALiBi bias −m·|i−j|, slope m per head, %d heads", s.Name, len(sl))
	dist := ints(0, alibiDistance)
	if len(bias) > alibiMaxLines {
		g := newGrid(dist, ints(0, len(bias)-1))
		for h, row := range bias {
			for d, v := range row {
				g.set(d, h, v)
			}
		}
		return heatmapChart(title, "distance |i−j|", "head h", "bias", g), nil
	}
	// Heads in order of slope, from a colour map dark enough throughout
	// to show on white (a diverging map's white middle does not).
	cs := indexColors(len(bias))
	var ss []series
	for h, row := range bias {
		ss = append(ss, series{label: fmt.Sprintf("head %d, m = %.4g", h, sl[h]), x: dist, y: row, color: cs[h]})
	}
	return lineChart(title, "distance |i−j|", "bias", axes{}, ss)
}
