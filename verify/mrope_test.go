package verify

import (
	"math"
	"reflect"
	"testing"

	"github.com/posenc/posenc/spec"
)

// mropeGoldenCheck compares MRoPEApply with a golden case of kind "mrope"
// (PyTorch float64 of transformers' multimodal rotary, rounded to float32)
// under the RoPE bound of each token's largest |position|.
func mropeGoldenCheck(s *spec.Spec, c *GoldenCase, check func(what string, k int, got, want, bound float64)) {
	n := MRoPEAxes(s)
	y := MRoPEApply(s, c.X, c.Pos, c.Heads, false)
	a := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	hd := s.HeadDim
	for tok := range len(c.Pos) / n {
		var far int64
		for _, p := range c.Pos[tok*n : (tok+1)*n] {
			far = max(far, abs64(int64(p)))
		}
		tol := ropeTol(far)
		for h := range c.Heads {
			o := (tok*c.Heads + h) * hd
			for i := range pa {
				b := tol*(math.Abs(float64(c.X[o+pa[i]]))+math.Abs(float64(c.X[o+pb[i]])))*a + 1e-30
				check("y", o+pa[i], y[o+pa[i]], float64(c.Want[o+pa[i]]), b)
				check("y", o+pb[i], y[o+pb[i]], float64(c.Want[o+pb[i]]), b)
			}
		}
	}
}

// The axis of every pair, as the reference reads transformers: Qwen2.5-VL's
// consecutive sections, Qwen3-VL's interleaved pattern with its t tail, and
// the vision towers' halves; and the vision frequency assignments.
func TestMRoPEAxesAndFrequencies(t *testing.T) {
	parse := func(y string) *spec.Spec {
		s, err := spec.Parse("m.yaml", []byte("name: m\nencoding: rope\nlayout: half\n"+y))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := parse("head_dim: 128\nmrope_section: [16, 24, 24]\n")
	ax := mropeFreqIndexAxes(s)
	for i, a := range ax {
		want := 0
		if i >= 40 {
			want = 2
		} else if i >= 16 {
			want = 1
		}
		if a != want {
			t.Errorf("qwen2.5-vl pair %d: axis %d, want %d", i, a, want)
		}
	}
	s = parse("head_dim: 128\nmrope_section: [24, 20, 20]\nmrope_interleaved: true\n")
	ax = mropeFreqIndexAxes(s)
	count := [3]int{}
	for i, a := range ax {
		count[a]++
		want := i % 3
		if i >= 60 {
			want = 0 // the tail: t in transformers and vLLM
		}
		if a != want {
			t.Errorf("qwen3-vl pair %d: axis %d, want %d", i, a, want)
		}
	}
	if count != [3]int{24, 20, 20} {
		t.Errorf("qwen3-vl axis counts %v", count)
	}
	s = parse("head_dim: 8\nmrope_section: [2, 2]\nmrope_freqs: alternate\n")
	w := RoPEFrequencies(s, 0)
	want := []float64{1, 1 / math.Pow(10000, 0.5), 1 / math.Pow(10000, 0.25), 1 / math.Pow(10000, 0.75)}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("pixtral-like frequencies %v, want %v", w, want)
	}
	s = parse("head_dim: 8\nmrope_section: [2, 2]\nmrope_freqs: per_axis\n")
	w = RoPEFrequencies(s, 0)
	want = []float64{1, 1 / math.Pow(10000, 0.5), 1, 1 / math.Pow(10000, 0.5)}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("qwen2-vl vision frequencies %v, want %v", w, want)
	}
}
