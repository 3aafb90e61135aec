package plot

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// spectrumSeries returns one line per frequency set: θ_i (rad/token) against
// the pair index i, with θ_i = base^(−2i/R) unscaled (RoFormer §3.2.2,
// eq. 15) and the scaled θ_i of verify.RoPEFrequencies. The last, dashed
// line is θ = 2π/N, the frequency whose wavelength is the context N the
// model was trained on (original_max_position, else max_position): pairs
// below it never complete a turn within that context.
//
// An M-RoPE spec turns each pair by one of its position axes: every
// frequency set is then drawn as one line per axis over the pairs that axis
// turns (labelled row and column for the two axes of a vision tower, t, h
// and w for three), so that Pixtral's alternating row and column
// frequencies do not read as one sawtooth.
func spectrumSeries(s *spec.Spec) []series {
	var ss []series
	var n int
	for _, f := range ropeFreqSets(s) {
		n = len(f.w)
		if !s.IsMRoPE() {
			ss = append(ss, series{label: f.label, x: ints(0, n-1), y: f.w})
			continue
		}
		axes := verify.MRoPEPairAxes(s)
		for a := range verify.MRoPEAxes(s) {
			sr := series{label: f.label + ", " + axisName(s, a)}
			for i, ax := range axes {
				if ax == a {
					sr.x = append(sr.x, float64(i))
					sr.y = append(sr.y, f.w[i])
				}
			}
			if len(sr.x) > 0 {
				ss = append(ss, sr)
			}
		}
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

// axisName names position axis a of an M-RoPE spec in the legend: row and
// column for two axes (the vision towers' patch ids), t, h and w for three
// (Qwen's text M-RoPE), else its index.
func axisName(s *spec.Spec, a int) string {
	switch n := verify.MRoPEAxes(s); {
	case n == 2:
		return [...]string{"row axis", "column axis"}[a]
	case n == 3:
		return [...]string{"t axis", "h axis", "w axis"}[a]
	}
	return fmt.Sprintf("axis %d", a)
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
