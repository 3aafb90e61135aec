package spec

import (
	"fmt"
	"math"
)

// llama3EdgeTolerance is the relative distance from the band edge
// original_max_position/low_freq_factor within which a wavelength makes a
// llama3 spec with an empty smoothing band (high_freq_factor ==
// low_freq_factor) invalid. Hugging Face's _compute_llama3_parameters
// computes the wavelengths 2π/inv_freq in float32 (relative error ≈ 6e-8),
// so a wavelength this close to the edge may fall on either side of it
// there; one exactly on it is smoothed with
// smooth = (omp/wavelen − low)/(high − low), a division by zero that makes
// its frequency NaN.
const llama3EdgeTolerance = 1e-6

// llama3Band checks low_freq_factor ≤ high_freq_factor. Equal factors are
// Llama 4 Scout's empty smoothing band (transformers and Meta's reference
// accept it): _compute_llama3_parameters then keeps every frequency whose
// wavelength is below omp/low and divides by factor every frequency whose
// wavelength is above it; a wavelength on the edge (within
// llama3EdgeTolerance) is an error naming high_freq_factor.
func (d *decoder) llama3Band(s *Spec) {
	sc := s.Scaling
	const path = "scaling.high_freq_factor"
	if sc.HighFreqFactor < sc.LowFreqFactor || math.IsNaN(sc.HighFreqFactor) {
		d.fail(d.line(path), path, "must be ≥ low_freq_factor (%v), got %v", sc.LowFreqFactor, sc.HighFreqFactor)
		return
	}
	if sc.HighFreqFactor != sc.LowFreqFactor {
		return
	}
	if i, w := llama3EdgePair(s.Base, s.RotaryDim, sc); i >= 0 {
		edge := float64(sc.OriginalMaxPosition) / sc.LowFreqFactor
		d.fail(d.line(path), path, "%s",
			fmt.Sprintf("equals low_freq_factor (%v), an empty smoothing band, and pair %d's wavelength %v lies on its edge original_max_position/low_freq_factor = %v (within a relative %v): transformers' _compute_llama3_parameters would divide 0 by 0 there (a NaN frequency); change a factor", sc.LowFreqFactor, i, w, edge, llama3EdgeTolerance))
	}
}

// llama3EdgePair returns the first rotary pair i (and its wavelength
// 2π·base^(2i/rotaryDim)) whose wavelength lies within
// llama3EdgeTolerance of original_max_position/low_freq_factor, or
// i = −1 when none does.
func llama3EdgePair(base float64, rotaryDim int, sc *Scaling) (int, float64) {
	edge := float64(sc.OriginalMaxPosition) / sc.LowFreqFactor
	for i := range rotaryDim / 2 {
		w := 2 * math.Pi * math.Pow(base, float64(2*i)/float64(rotaryDim))
		if math.Abs(w-edge) <= llama3EdgeTolerance*edge {
			return i, w
		}
	}
	return -1, 0
}
