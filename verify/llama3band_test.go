package verify

import (
	"math"
	"testing"

	"github.com/posenc/posenc/spec"
)

// Llama 4 Scout's empty smoothing band: every ω_i is either unchanged
// (wavelength below omp/low) or divided by factor (above it), never NaN.
func TestLlama3EmptyBandFrequencies(t *testing.T) {
	s, err := spec.Parse("scout.yaml", []byte("name: scout\nencoding: rope\nhead_dim: 128\nlayout: interleaved\nbase: 500000\n"+
		"scaling:\n  type: llama3\n  factor: 16\n  original_max_position: 8192\n  low_freq_factor: 1\n  high_freq_factor: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := RoPEFrequencies(s, 0)
	for i := range got {
		w := math.Pow(500000, -float64(2*i)/128)
		want := w
		if 2*math.Pi/w > 8192 {
			want = w / 16
		}
		if math.Abs(got[i]-want) > 1e-15*want {
			t.Errorf("ω_%d = %v, want %v", i, got[i], want)
		}
	}
}
