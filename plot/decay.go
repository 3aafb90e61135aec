package plot

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/posenc/posenc/spec"
)

// decayBound is the relative upper bound of RoFormer (Su et al. 2021,
// "RoFormer: Enhanced Transformer with Rotary Position Embedding") §3.4.3:
// by Abel summation |Σ_i h_i e^{i(m−n)θ_i}| ≤ max_i |h_{i+1}−h_i| ·
// Σ_{j=1}^{d/2} |S_j| with S_j = Σ_{k=0}^{j−1} e^{i(m−n)θ_k}, and the paper's
// Figure 2 plots (1/(d/2))·Σ_{j=1}^{d/2} |S_j| against the relative distance
// m−n. theta holds θ_k, k < d/2; dist is m−n.
func decayBound(theta []float64, dist float64) float64 {
	var sj complex128
	sum := 0.0
	for _, t := range theta {
		sj += cmplx.Rect(1, dist*t) // S_{k+1} = S_k + e^{i·dist·θ_k}
		sum += cmplx.Abs(sj)
	}
	return sum / float64(len(theta))
}

// decayDistances returns the relative distances of the decay curve: every
// integer from 1 to 64, then 128 log-spaced integers per octave up to max.
func decayDistances(max int) []float64 {
	var d []float64
	for i := 1; i <= min(64, max); i++ {
		d = append(d, float64(i))
	}
	for x := 64.0; ; {
		x *= math.Exp2(1.0 / 128)
		v := math.Round(x)
		if v > float64(max) {
			break
		}
		if v > d[len(d)-1] {
			d = append(d, v)
		}
	}
	if last := float64(max); d[len(d)-1] < last {
		d = append(d, last)
	}
	return d
}

// decaySeries returns decayBound against distance for each frequency set
// (unscaled and after the spec's scaling), over distances 1 … the context
// the scaling targets (ropeContext, at least 1024).
func decaySeries(s *spec.Spec) []series {
	dist := decayDistances(max(ropeContext(s), 1024))
	var ss []series
	for _, f := range ropeFreqSets(s) {
		y := make([]float64, len(dist))
		for i, d := range dist {
			y[i] = decayBound(f.w, d)
		}
		ss = append(ss, series{label: f.label, x: dist, y: y})
	}
	return ss
}

// decayFigure plots decaySeries with a log distance axis.
func decayFigure(s *spec.Spec) (*Figure, error) {
	title := fmt.Sprintf("%s: RoPE long-term decay (RoFormer §3.4.3, d/2 = %d)", s.Name, rotary(s)/2)
	return lineChart(title, "relative distance m−n", "(2/d) Σᵢ |Sᵢ|", axes{logX: true}, decaySeries(s))
}
