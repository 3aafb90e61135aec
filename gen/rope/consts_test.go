package rope

import (
	"math"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

func ropeSpec(layout string, headDim, rotaryDim int, base float64, sc *spec.Scaling) *spec.Spec {
	return &spec.Spec{
		File: "test.yaml", Name: "t", Encoding: spec.RoPE, HeadDim: headDim, RotaryDim: rotaryDim,
		Layout: layout, Base: base, MaxPosition: 4096, Scaling: sc,
	}
}

func mustDerive(t *testing.T, s *spec.Spec) *Consts {
	t.Helper()
	c, err := derive(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closeRel reports |a−b| ≤ tol·|b|.
func closeRel(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }

func TestRoPEDefault(t *testing.T) {
	c := mustDerive(t, ropeSpec(spec.LayoutHalf, 128, 128, 10000, nil))
	if len(c.Freqs) != 64 || c.LongFreqs != nil {
		t.Fatalf("len(Freqs) = %d, LongFreqs = %v", len(c.Freqs), c.LongFreqs)
	}
	if c.Freqs[0] != 1 {
		t.Errorf("ω_0 = %v, want 1", c.Freqs[0])
	}
	// ω_32 = 10000^(−64/128) = 1/100.
	if !closeRel(c.Freqs[32], 0.01, 1e-15) {
		t.Errorf("ω_32 = %v, want 0.01", c.Freqs[32])
	}
	for i := 1; i < len(c.Freqs); i++ {
		if !(c.Freqs[i] < c.Freqs[i-1]) {
			t.Fatalf("frequencies not decreasing at %d", i)
		}
	}
	if c.AttentionFactor != 1 || c.RowLen != 128 || c.TableRows != 4096 {
		t.Errorf("A = %v, RowLen = %d, TableRows = %d", c.AttentionFactor, c.RowLen, c.TableRows)
	}
	ci := mustDerive(t, ropeSpec(spec.LayoutInterleaved, 64, 32, 10000, nil))
	if ci.RowLen != 64 || len(ci.Freqs) != 16 {
		t.Errorf("interleaved partial: RowLen = %d, len(Freqs) = %d, want 64, 16", ci.RowLen, len(ci.Freqs))
	}
	// Partial rotary: dim is rotary_dim, so ω_8 = 10000^(−16/32) = 0.01.
	if !closeRel(ci.Freqs[8], 0.01, 1e-15) {
		t.Errorf("partial ω_8 = %v, want 0.01", ci.Freqs[8])
	}
}

func TestRoPELinear(t *testing.T) {
	plain := BaseFreqs(10000, 64)
	c := mustDerive(t, ropeSpec(spec.LayoutHalf, 64, 64, 10000, &spec.Scaling{Type: spec.ScaleLinear, Factor: 4}))
	for i, w := range c.Freqs {
		if w != plain[i]/4 {
			t.Errorf("ω_%d = %v, want %v/4", i, w, plain[i])
		}
	}
}

func TestRoPENTK(t *testing.T) {
	// base' = 10000·8^(48/46); ω_i = base'^(−2i/48).
	c := mustDerive(t, ropeSpec(spec.LayoutInterleaved, 64, 48, 10000, &spec.Scaling{Type: spec.ScaleNTK, Factor: 8}))
	b := 10000 * math.Pow(8, 48.0/46)
	for i, w := range c.Freqs {
		want := math.Pow(b, -float64(2*i)/48)
		if !closeRel(w, want, 1e-14) {
			t.Errorf("ω_%d = %v, want %v", i, w, want)
		}
	}
	if c.AttentionFactor != 1 || c.RowLen != 96 {
		t.Errorf("A = %v RowLen = %d", c.AttentionFactor, c.RowLen)
	}
}

func TestRoPEDynamic(t *testing.T) {
	sc := &spec.Scaling{Type: spec.ScaleDynamic, Factor: 2, OriginalMaxPosition: 2048}
	c := mustDerive(t, ropeSpec(spec.LayoutHalf, 64, 64, 10000, sc))
	plain := BaseFreqs(10000, 64)
	for i := range plain {
		if c.Freqs[i] != plain[i] {
			t.Fatalf("dynamic Freqs must be unscaled; ω_%d = %v, want %v", i, c.Freqs[i], plain[i])
		}
	}
	if d := c.Dynamic; d == nil || d.Base != 10000 || d.Factor != 2 || d.OMP != 2048 || d.Dim != 64 {
		t.Errorf("Dynamic = %+v, want base 10000, factor 2, omp 2048, dim 64", c.Dynamic)
	}
}

func TestRoPELlama3(t *testing.T) {
	sc := &spec.Scaling{Type: spec.ScaleLlama3, Factor: 32, OriginalMaxPosition: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
	c := mustDerive(t, ropeSpec(spec.LayoutHalf, 64, 64, 500000, sc))
	plain := BaseFreqs(500000, 64)
	var high, low, mid int
	for i, w := range plain {
		wavelen := 2 * math.Pi / w
		switch {
		case wavelen < 8192.0/4:
			high++
			if c.Freqs[i] != w {
				t.Errorf("high-frequency ω_%d changed: %v → %v", i, w, c.Freqs[i])
			}
		case wavelen > 8192:
			low++
			if c.Freqs[i] != w/32 {
				t.Errorf("low-frequency ω_%d = %v, want %v/32", i, c.Freqs[i], w)
			}
		default:
			mid++
			if !(c.Freqs[i] < w && c.Freqs[i] > w/32) {
				t.Errorf("medium ω_%d = %v not within (%v/32, %v)", i, c.Freqs[i], w, w)
			}
		}
	}
	if high == 0 || low == 0 || mid == 0 {
		t.Errorf("test spec should cover all three bands: high %d, mid %d, low %d", high, mid, low)
	}
}

func TestRoPEYaRN(t *testing.T) {
	// grope_yarn_notrunc: dim 64, base 150000, omp 4096, β 32/1, no truncation.
	// low = 64·ln(4096/(32·2π)) / (2·ln 150000) ≈ 8.09, high = 64·ln(4096/2π) / (2·ln 150000) ≈ 17.40.
	sc := &spec.Scaling{Type: spec.ScaleYaRN, Factor: 32, OriginalMaxPosition: 4096, BetaFast: 32, BetaSlow: 1}
	c := mustDerive(t, ropeSpec(spec.LayoutHalf, 64, 64, 150000, sc))
	plain := BaseFreqs(150000, 64)
	low := 64 * math.Log(4096/(32*2*math.Pi)) / (2 * math.Log(150000))
	high := 64 * math.Log(4096/(2*math.Pi)) / (2 * math.Log(150000))
	for i, w := range c.Freqs {
		switch {
		case float64(i) <= low:
			if !closeRel(w, plain[i], 1e-15) {
				t.Errorf("ω_%d = %v, want extrapolated %v", i, w, plain[i])
			}
		case float64(i) >= high:
			if !closeRel(w, plain[i]/32, 1e-15) {
				t.Errorf("ω_%d = %v, want interpolated %v", i, w, plain[i]/32)
			}
		default:
			ramp := (float64(i) - low) / (high - low)
			want := plain[i]/32*ramp + plain[i]*(1-ramp)
			if !closeRel(w, want, 1e-14) {
				t.Errorf("ω_%d = %v, want %v", i, w, want)
			}
		}
	}
	if want := 0.1*math.Log(32) + 1; !closeRel(c.AttentionFactor, want, 1e-15) {
		t.Errorf("A = %v, want 0.1·ln 32 + 1 = %v", c.AttentionFactor, want)
	}

	// Truncated: the ramp runs from floor(low) = 8 to ceil(high) = 18.
	sc.Truncate = true
	c = mustDerive(t, ropeSpec(spec.LayoutHalf, 64, 64, 150000, sc))
	if !closeRel(c.Freqs[8], plain[8], 1e-15) {
		t.Errorf("truncated ω_8 = %v, want %v", c.Freqs[8], plain[8])
	}
	if !closeRel(c.Freqs[18], plain[18]/32, 1e-15) {
		t.Errorf("truncated ω_18 = %v, want %v", c.Freqs[18], plain[18]/32)
	}
	if want := plain[13]/32*0.5 + plain[13]*0.5; !closeRel(c.Freqs[13], want, 1e-14) {
		t.Errorf("truncated ω_13 = %v, want midpoint %v", c.Freqs[13], want)
	}

	// mscale == mscale_all_dim cancels; an explicit attention_factor wins.
	sc.HasMscale, sc.Mscale, sc.HasMscaleAllDim, sc.MscaleAllDim = true, 1, true, 1
	if c = mustDerive(t, ropeSpec(spec.LayoutInterleaved, 64, 64, 10000, sc)); c.AttentionFactor != 1 {
		t.Errorf("mscale = mscale_all_dim: A = %v, want 1", c.AttentionFactor)
	}
	sc.MscaleAllDim = 0.5
	want := (0.1*math.Log(32) + 1) / (0.05*math.Log(32) + 1)
	if c = mustDerive(t, ropeSpec(spec.LayoutInterleaved, 64, 64, 10000, sc)); !closeRel(c.AttentionFactor, want, 1e-15) {
		t.Errorf("mscale 1 / mscale_all_dim 0.5: A = %v, want %v", c.AttentionFactor, want)
	}
	sc.HasAttentionFactor, sc.AttentionFactor = true, 1.25
	if c = mustDerive(t, ropeSpec(spec.LayoutInterleaved, 64, 64, 10000, sc)); c.AttentionFactor != 1.25 {
		t.Errorf("attention_factor 1.25: A = %v", c.AttentionFactor)
	}
}

func TestRoPELongRoPE(t *testing.T) {
	short := make([]float64, 16)
	long := make([]float64, 16)
	for i := range short {
		short[i] = 1 + 0.05*float64(i)
		long[i] = 1 + 1.5*float64(i)
	}
	sc := &spec.Scaling{Type: spec.ScaleLongRoPE, Factor: 32, OriginalMaxPosition: 4096, ShortFactor: short, LongFactor: long}
	c := mustDerive(t, ropeSpec(spec.LayoutHalf, 32, 32, 10000, sc))
	plain := BaseFreqs(10000, 32)
	for i := range plain {
		if !closeRel(c.Freqs[i], plain[i]/short[i], 1e-15) || !closeRel(c.LongFreqs[i], plain[i]/long[i], 1e-15) {
			t.Errorf("ω_%d short %v long %v, want %v, %v", i, c.Freqs[i], c.LongFreqs[i], plain[i]/short[i], plain[i]/long[i])
		}
	}
	// ln 32 / ln 4096 = 5/12.
	if want := math.Sqrt(17.0 / 12); !closeRel(c.AttentionFactor, want, 1e-15) {
		t.Errorf("A = %v, want √(17/12) = %v", c.AttentionFactor, want)
	}
	sc.Factor = 1
	if c = mustDerive(t, ropeSpec(spec.LayoutHalf, 32, 32, 10000, sc)); c.AttentionFactor != 1 {
		t.Errorf("factor 1: A = %v, want 1", c.AttentionFactor)
	}
	sc.LongFactor = long[:3]
	if _, err := derive(ropeSpec(spec.LayoutHalf, 32, 32, 10000, sc)); err == nil || !strings.Contains(err.Error(), "long_factor") {
		t.Errorf("short long_factor list: err = %v", err)
	}
}

// An empty smoothing band (low_freq_factor = high_freq_factor, Llama 4
// Scout): HF's _compute_llama3_parameters keeps ω when 2π/ω < omp/low and
// divides it by factor when 2π/ω > omp/low.
func TestRoPELlama3EmptyBand(t *testing.T) {
	sc := &spec.Scaling{Type: spec.ScaleLlama3, Factor: 16, OriginalMaxPosition: 8192, LowFreqFactor: 1, HighFreqFactor: 1}
	c := mustDerive(t, ropeSpec(spec.LayoutInterleaved, 128, 128, 500000, sc))
	plain := BaseFreqs(500000, 128)
	var kept, divided int
	for i, w := range plain {
		want := w
		if 2*math.Pi/w > 8192 {
			want = w / 16
			divided++
		} else {
			kept++
		}
		if c.Freqs[i] != want {
			t.Errorf("ω_%d = %v, want %v", i, c.Freqs[i], want)
		}
	}
	if kept == 0 || divided == 0 {
		t.Errorf("kept %d, divided %d: the spec should have both", kept, divided)
	}
}

// Explain names only the keys of the spec's scaling type: no
// original_max_position 0 for linear or ntk.
func TestExplainScalingKeys(t *testing.T) {
	for _, c := range []struct {
		sc          *spec.Scaling
		want, avoid []string
	}{
		{&spec.Scaling{Type: spec.ScaleLinear, Factor: 4}, []string{"scaling linear: factor 4\n"}, []string{"original_max_position"}},
		{&spec.Scaling{Type: spec.ScaleNTK, Factor: 2}, []string{"scaling ntk: factor 2\n"}, []string{"original_max_position"}},
		{&spec.Scaling{Type: spec.ScaleDynamic, Factor: 2, OriginalMaxPosition: 2048}, []string{"factor 2, original_max_position 2048\n"}, nil},
		{&spec.Scaling{Type: spec.ScaleLlama3, Factor: 8, OriginalMaxPosition: 8192, LowFreqFactor: 1, HighFreqFactor: 4},
			[]string{"original_max_position 8192, low_freq_factor 1, high_freq_factor 4\n"}, nil},
		{&spec.Scaling{Type: spec.ScaleYaRN, Factor: 40, OriginalMaxPosition: 4096, BetaFast: 32, BetaSlow: 1, Truncate: true,
			Mscale: 1, HasMscale: true, MscaleAllDim: 1, HasMscaleAllDim: true},
			[]string{"beta_fast 32, beta_slow 1, truncate true, mscale 1, mscale_all_dim 1\n", "softmax scale (DeepSeek, SoftmaxScale): qk_head_dim^−0.5 · 1.87385"}, nil},
	} {
		var b strings.Builder
		mustDerive(t, ropeSpec(spec.LayoutHalf, 64, 64, 10000, c.sc)).Explain(&b)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: explain lacks %q:\n%s", c.sc.Type, w, b.String())
			}
		}
		for _, a := range c.avoid {
			if strings.Contains(b.String(), a) {
				t.Errorf("%s: explain shows %q:\n%s", c.sc.Type, a, b.String())
			}
		}
	}
}
