package plot

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/spec"
)

// spectrumSeries returns one line per frequency set: θ_i (rad/token) against
// the pair index i, with θ_i = base^(−2i/R) unscaled (RoFormer §3.2.2,
// eq. 15) and the scaled θ_i of verify.RoPEFrequencies. The last, dashed
// line is θ = 2π/N, the frequency whose wavelength is the context N the
// model was trained on (original_max_position, else max_position): pairs
// below it never complete a turn within that context.
func spectrumSeries(s *spec.Spec) []series {
	var ss []series
	var n int
	for _, f := range ropeFreqSets(s) {
		n = len(f.w)
		ss = append(ss, series{label: f.label, x: ints(0, n-1), y: f.w})
	}
	ctx := s.MaxPosition
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 {
		ctx = sc.OriginalMaxPosition
	}
	ref := 2 * math.Pi / float64(ctx)
	ss = append(ss, series{
		label: fmt.Sprintf("θ = 2π/%d (one turn per context)", ctx),
		x:     []float64{0, float64(n - 1)}, y: []float64{ref, ref},
		color: gray, dashes: dashed,
	})
	return ss
}

// spectrumFigure plots spectrumSeries with a log θ axis.
func spectrumFigure(s *spec.Spec) (*Figure, error) {
	title := fmt.Sprintf("%s: RoPE frequency spectrum (R = %d, %s layout)", s.Name, rotary(s), s.Layout)
	return lineChart(title, "pair index i", "θᵢ (rad/token)", axes{logY: true}, spectrumSeries(s))
}

// rotary is the spec's rotary dimension R.
func rotary(s *spec.Spec) int {
	if s.RotaryDim > 0 {
		return s.RotaryDim
	}
	return s.HeadDim
}
