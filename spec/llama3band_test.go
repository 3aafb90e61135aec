package spec

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// Llama 4 Scout's llama3 scaling (low_freq_factor = high_freq_factor = 1)
// parses, and a band edge a wavelength sits on is refused.
func TestLlama3EmptyBand(t *testing.T) {
	src := "name: scout\nencoding: rope\nhead_dim: 128\nlayout: interleaved\nbase: 500000\n" +
		"scaling:\n  type: llama3\n  factor: 16\n  original_max_position: 8192\n  low_freq_factor: 1\n  high_freq_factor: 1\n"
	s, err := Parse("scout.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Scaling.LowFreqFactor != 1 || s.Scaling.HighFreqFactor != 1 {
		t.Errorf("factors %v, %v", s.Scaling.LowFreqFactor, s.Scaling.HighFreqFactor)
	}
	// Pair i's wavelength 2π·base^(2i/R) for i = 5, R = 32, base 10000 is
	// 2π·10000^(10/32); an edge omp/low one part in 1e7 away is refused,
	// one part in 1e5 away is not.
	w := 2 * math.Pi * math.Pow(10000, 10.0/32)
	for _, c := range []struct {
		rel  float64
		fail bool
	}{{1e-7, true}, {-1e-7, true}, {1e-5, false}, {-1e-5, false}} {
		low := 4096 / (w * (1 + c.rel))
		src := "name: r\nencoding: rope\nhead_dim: 32\nlayout: half\n" +
			"scaling:\n  type: llama3\n  factor: 8\n  original_max_position: 4096\n  low_freq_factor: " +
			fmtFloat(low) + "\n  high_freq_factor: " + fmtFloat(low) + "\n"
		_, err := Parse("edge.yaml", []byte(src))
		if c.fail != (err != nil) {
			t.Errorf("edge offset %v: err = %v, want failure %v", c.rel, err, c.fail)
		}
		if err != nil && !strings.Contains(err.Error(), "pair 5's wavelength") {
			t.Errorf("edge offset %v: %v does not name pair 5", c.rel, err)
		}
	}
}

// fmtFloat writes v as a YAML number that reads back as v.
func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
