package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/spec"
)

// ropeSpec is an unscaled RoPE spec with every default applied.
func ropeSpec(layout string, headDim, rotaryDim int) *spec.Spec {
	return &spec.Spec{Name: "rope_test", Encoding: spec.RoPE, HeadDim: headDim, RotaryDim: rotaryDim,
		Layout: layout, Base: 10000, MaxPosition: 4096, Targets: spec.AllTargets, DType: "f32"}
}

func TestALiBiGeronMatrix(t *testing.T) {
	// get_alibi_biases(n_heads=8, seq_len=4)[0] of Géron's appendix D notebook
	// (github.com/ageron/handson-mlp) prints
	// [[0, -0.5, -1, -1.5], [-0.5, 0, -0.5, -1], [-1, -0.5, 0, -0.5], [-1.5, -1, -0.5, 0]].
	s := &spec.Spec{Name: "a", Encoding: spec.ALiBi, Heads: 8, MaxBias: 8, Causal: true}
	b := ALiBiBias(s, 4, 4, 0)
	want := []float64{0, -0.5, -1, -1.5, -0.5, 0, -0.5, -1, -1, -0.5, 0, -0.5, -1.5, -1, -0.5, 0}
	for k, w := range want {
		if b[k] != w {
			t.Errorf("head 0 bias[%d][%d] = %v, want %v", k/4, k%4, b[k], w)
		}
	}
	// The notebook's slopes (Press et al.'s for a power of two): 2^(−8h/n)
	// for h = 1..n.
	for h, m := range ALiBiSlopes(s) {
		if w := math.Pow(2, -8*float64(h+1)/8); m != w {
			t.Errorf("slope %d = %v, want %v", h, m, w)
		}
		if got := b[h*16+3]; got != -3*m {
			t.Errorf("head %d bias[0][3] = %v, want %v", h, got, -3*m)
		}
	}
}

func TestALiBiSlopesNonPowerOfTwo(t *testing.T) {
	// The paper's rule for 12 heads: slopes(8) then slopes(16)[0::2][:4].
	s := &spec.Spec{Encoding: spec.ALiBi, Heads: 12, MaxBias: 8}
	got := ALiBiSlopes(s)
	var want []float64
	for h := 1; h <= 8; h++ {
		want = append(want, math.Pow(2, -float64(h)))
	}
	for h := 1; h <= 7; h += 2 {
		want = append(want, math.Pow(2, -0.5*float64(h)))
	}
	if len(got) != len(want) {
		t.Fatalf("len = %d, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("slope %d = %v, want %v", i, got[i], want[i])
		}
	}
	s.Slopes = []float64{3, 2, 1}
	s.Heads = 3
	if got := ALiBiSlopes(s); got[0] != 3 || got[2] != 1 {
		t.Errorf("explicit slopes not used: %v", got)
	}
}

func TestRoPENormAndRelative(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, layout := range []string{spec.LayoutHalf, spec.LayoutInterleaved} {
		s := ropeSpec(layout, 64, 48)
		pa, pb := RoPEPairs(s)
		q := make([]float32, 64)
		k := make([]float32, 64)
		for i := range q {
			q[i], k[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for _, p := range []int32{0, 1, 17, 4095, 1 << 20, math.MaxInt32, -5} {
			y := RoPEApply(s, q, []int32{p}, 1, false)
			for i := range pa {
				n0 := math.Hypot(float64(q[pa[i]]), float64(q[pb[i]]))
				n1 := math.Hypot(y[pa[i]], y[pb[i]])
				if math.Abs(n0-n1) > 1e-12*n0 {
					t.Errorf("%s pos %d pair %d: norm %v → %v", layout, p, i, n0, n1)
				}
			}
			for d := 48; d < 64; d++ {
				if y[d] != float64(q[d]) {
					t.Errorf("%s pos %d: dim %d beyond rotary_dim changed", layout, p, d)
				}
			}
			// Inverse rotates by −θ: the same as Apply at position −p.
			inv := RoPEApply(s, q, []int32{p}, 1, true)
			neg := RoPEApply(s, q, []int32{-p}, 1, false)
			for d := range inv {
				if inv[d] != neg[d] {
					t.Errorf("%s pos %d: Inverse[%d] = %v, Apply(−p) = %v", layout, p, d, inv[d], neg[d])
				}
			}
		}
		// q_m · k_n depends only on m−n.
		dot := func(m, n int32) float64 {
			a := RoPEApply(s, q, []int32{m}, 1, false)
			b := RoPEApply(s, k, []int32{n}, 1, false)
			d := 0.0
			for i := range a {
				d += a[i] * b[i]
			}
			return d
		}
		for _, c := range [][2]int32{{5, 2}, {105, 102}, {4099, 4096}, {3, 0}} {
			if d0, d1 := dot(3, 0), dot(c[0], c[1]); math.Abs(d0-d1) > 1e-9*(1+math.Abs(d0)) {
				t.Errorf("%s: q_%d·k_%d = %v, q_3·k_0 = %v", layout, c[0], c[1], d1, d0)
			}
		}
	}
}

func TestRoPEInverseUndoesApply(t *testing.T) {
	s := ropeSpec(spec.LayoutHalf, 32, 32)
	x := make([]float32, 3*32)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	pos := []int32{0, 123456, -77}
	y := RoPEApply(s, x, pos, 1, false)
	// Rotate y back by −θ in float64 and compare with x.
	w := RoPEFrequencies(s, CallSeqLen(pos))
	pa, pb := RoPEPairs(s)
	for tok, p := range pos {
		for i, om := range w {
			sn, c := math.Sincos(-float64(p) * om)
			a, b := y[tok*32+pa[i]], y[tok*32+pb[i]]
			x0, x1 := a*c-b*sn, b*c+a*sn
			if math.Abs(x0-float64(x[tok*32+pa[i]])) > 1e-12 || math.Abs(x1-float64(x[tok*32+pb[i]])) > 1e-12 {
				t.Errorf("token %d pair %d: back-rotation gives (%v, %v)", tok, i, x0, x1)
			}
		}
	}
}

func TestRoPEFrequencyScalings(t *testing.T) {
	base := ropeSpec(spec.LayoutHalf, 64, 64)
	w0 := RoPEFrequencies(base, 0)
	if w0[0] != 1 || math.Abs(w0[1]-math.Pow(10000, -2.0/64)) > 1e-18 {
		t.Errorf("unscaled ω: %v %v", w0[0], w0[1])
	}
	lin := *base
	lin.Scaling = &spec.Scaling{Type: spec.ScaleLinear, Factor: 4}
	if w := RoPEFrequencies(&lin, 0); w[5] != w0[5]/4 {
		t.Errorf("linear ω_5 = %v, want %v", w[5], w0[5]/4)
	}
	dyn := *base
	dyn.Scaling = &spec.Scaling{Type: spec.ScaleDynamic, Factor: 2, OriginalMaxPosition: 2048}
	for _, n := range []int{0, 1, 2048} {
		if w := RoPEFrequencies(&dyn, n); w[7] != w0[7] {
			t.Errorf("dynamic at seqLen %d rescaled", n)
		}
	}
	// seqLen 4096 with factor 2: base' = base·(2·2 − 1)^(64/62).
	want := math.Pow(10000*math.Pow(3, 64.0/62), -14.0/64)
	if w := RoPEFrequencies(&dyn, 4096); math.Abs(w[7]-want) > 1e-15*want {
		t.Errorf("dynamic ω_7 at 4096 = %v, want %v", w[7], want)
	}
	// NTK equals dynamic at the seqLen where factor·L/omp − (factor−1) = factor.
	ntk := *base
	ntk.Scaling = &spec.Scaling{Type: spec.ScaleNTK, Factor: 3}
	if w := RoPEFrequencies(&ntk, 0); math.Abs(w[7]-want) > 1e-15*want {
		t.Errorf("ntk ω_7 = %v, want %v", w[7], want)
	}
	// llama3: the highest frequencies are kept, the lowest divided by factor.
	l3 := *base
	l3.Base = 500000
	l3.Scaling = &spec.Scaling{Type: spec.ScaleLlama3, Factor: 8, OriginalMaxPosition: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
	wl, wu := RoPEFrequencies(&l3, 0), unscaledFrequencies(500000, 64)
	if wl[0] != wu[0] || wl[31] != wu[31]/8 {
		t.Errorf("llama3 ends: %v/%v, %v/%v", wl[0], wu[0], wl[31], wu[31])
	}
	for i := range wl {
		if wl[i] > wu[i] || wl[i] < wu[i]/8*(1-1e-15) {
			t.Errorf("llama3 ω_%d = %v outside [ω/8, ω] = [%v, %v]", i, wl[i], wu[i]/8, wu[i])
		}
	}
	// yarn: ω_0 extrapolated (unchanged), the last interpolated (ω/factor).
	y := *base
	y.Scaling = &spec.Scaling{Type: spec.ScaleYaRN, Factor: 16, OriginalMaxPosition: 4096, BetaFast: 32, BetaSlow: 1, Truncate: true}
	wy := RoPEFrequencies(&y, 0)
	if wy[0] != w0[0] || math.Abs(wy[31]-w0[31]/16) > 1e-18 {
		t.Errorf("yarn ends: %v, %v (want %v, %v)", wy[0], wy[31], w0[0], w0[31]/16)
	}
	if a := RoPEAttentionFactor(&y); math.Abs(a-(0.1*math.Log(16)+1)) > 1e-15 {
		t.Errorf("yarn attention factor %v", a)
	}
	// longrope: the runtime switch at original_max_position.
	lr := *base
	sf, lf := make([]float64, 32), make([]float64, 32)
	for i := range sf {
		sf[i], lf[i] = 1+float64(i)/10, 2+float64(i)
	}
	lr.Scaling = &spec.Scaling{Type: spec.ScaleLongRoPE, Factor: 8, OriginalMaxPosition: 4096, ShortFactor: sf, LongFactor: lf}
	if w := RoPEFrequencies(&lr, 4096); w[3] != 1/(sf[3]*math.Pow(10000, 6.0/64)) {
		t.Errorf("longrope at 4096 should use short_factor")
	}
	if w := RoPEFrequencies(&lr, 4097); w[3] != 1/(lf[3]*math.Pow(10000, 6.0/64)) {
		t.Errorf("longrope at 4097 should use long_factor")
	}
	if a, w := RoPEAttentionFactor(&lr), math.Sqrt(1+math.Log(8)/math.Log(4096)); a != w {
		t.Errorf("longrope attention factor %v, want %v", a, w)
	}
}

func TestSinusoidalKnownPoints(t *testing.T) {
	s := &spec.Spec{Encoding: spec.Sinusoidal, DModel: 8, MaxLen: 64, Base: 10000}
	pe := AbsoluteEncoding(s, 0)
	for i, v := range pe {
		if w := float64(i % 2); v != w {
			t.Errorf("PE(0)[%d] = %v, want %v", i, v, w)
		}
	}
	pe = AbsoluteEncoding(s, 1)
	if pe[0] != math.Sin(1) || pe[1] != math.Cos(1) {
		t.Errorf("PE(1)[0:2] = %v, %v", pe[0], pe[1])
	}
	if w := math.Sin(1 / math.Pow(10000, 2.0/8)); math.Abs(pe[2]-w) > 1e-16 {
		t.Errorf("PE(1)[2] = %v, want %v", pe[2], w)
	}
}

func TestAlgebraicAndBinary(t *testing.T) {
	alg := &spec.Spec{Encoding: spec.Algebraic, DModel: 5, MaxLen: 17}
	pe := AbsoluteEncoding(alg, 32)
	// (max_len−1)^(i/(d−1)) = 16^(i/4) = 2^i.
	for i, v := range pe {
		if w := 32 / math.Pow(2, float64(i)); math.Abs(v-w) > 1e-13 {
			t.Errorf("algebraic PE(32)[%d] = %v, want %v", i, v, w)
		}
	}
	bin := &spec.Spec{Encoding: spec.Binary, DModel: 8, MaxLen: 20} // bit length 5
	if n := BinaryBits(bin); n != 5 {
		t.Fatalf("BinaryBits = %d, want 5", n)
	}
	for _, c := range []struct {
		p    int
		want []float64
	}{
		{0, []float64{0, 0, 0, 0, 0, 0, 0, 0}},
		{0b10110, []float64{0, 1, 1, 0, 1, 0, 0, 0}},
		{0b111111, []float64{1, 1, 1, 1, 1, 0, 0, 0}},
		{-1, []float64{1, 1, 1, 1, 1, 0, 0, 0}},
		{-2, []float64{0, 1, 1, 1, 1, 0, 0, 0}},
	} {
		got := AbsoluteEncoding(bin, c.p)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("binary PE(%d) = %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}

func TestMixtureAndLearned(t *testing.T) {
	s := &spec.Spec{Encoding: spec.Mixture, DModel: 4, MaxLen: 3}
	table := []float32{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	x := []float32{1, 1, 1, 1}
	y := MixtureAdd(s, x, table, []int32{1}, 0.25)
	pe := SinusoidalEncoding(4, 10000, 1)
	for i := range y {
		if w := 1 + 0.25*pe[i] + 0.75*float64(table[4+i]); math.Abs(y[i]-w) > 1e-15 {
			t.Errorf("mixture[%d] = %v, want %v", i, y[i], w)
		}
	}
	l := LearnedAdd(&spec.Spec{Encoding: spec.Learned, DModel: 4, MaxLen: 3}, x, table, []int32{2})
	for i := range l {
		if l[i] != 1+float64(table[8+i]) {
			t.Errorf("learned[%d] = %v", i, l[i])
		}
	}
}

func TestT5BucketBoundaries(t *testing.T) {
	// Bidirectional, 32 buckets, max_distance 128: 16 per direction, max_exact 8.
	// Keys after the query (rel < 0, relative_position > 0) use buckets 16..31.
	bi := &spec.Spec{Encoding: spec.RPEBias, Heads: 1, Buckets: &spec.Buckets{Num: 32, MaxDistance: 128, Bidirectional: true}}
	for _, c := range []struct{ rel, want int }{
		{0, 0}, {1, 1}, {-1, 17}, {7, 7}, {-7, 23},
		{8, 8}, {-8, 24}, // max_exact: log(1) = 0 → bucket 8
		{15, 8 + int(math.Log(15.0/8)/math.Log(16)*8)}, // 9
		{16, 10}, {32, 12}, {64, 14}, // log2(n/8)·2 exactly
		{127, 15}, {128, 15}, {129, 15}, {1000, 15}, {-1000, 31},
		{math.MaxInt32, 15}, {-math.MaxInt32, 31},
	} {
		if got := RPEBucket(bi, c.rel); got != c.want {
			t.Errorf("bidirectional bucket(rel %d) = %d, want %d", c.rel, got, c.want)
		}
	}
	// Unidirectional, 16 buckets, max_distance 64: only keys before the query
	// (rel > 0) are distinguished; max_exact 8.
	uni := &spec.Spec{Encoding: spec.RPEBias, Heads: 1, Buckets: &spec.Buckets{Num: 16, MaxDistance: 64, Bidirectional: false}}
	for _, c := range []struct{ rel, want int }{
		{0, 0}, {-1, 0}, {-500, 0}, {1, 1}, {7, 7}, {8, 8},
		{16, 8 + int(math.Log(2)/math.Log(8)*8)}, // 10
		{63, 15}, {64, 15}, {65, 15}, {math.MaxInt32, 15}, {-math.MaxInt32, 0},
	} {
		if got := RPEBucket(uni, c.rel); got != c.want {
			t.Errorf("unidirectional bucket(rel %d) = %d, want %d", c.rel, got, c.want)
		}
	}
	clamp := &spec.Spec{Encoding: spec.RPEBias, Heads: 1, RMax: 3}
	for rel, want := range map[int]int{-100: 0, -2: 0, -1: 1, 0: 2, 1: 3, 2: 4, 3: 4, math.MaxInt32: 4} {
		if got := RPEBucket(clamp, rel); got != want {
			t.Errorf("clamp bucket(%d) = %d, want %d", rel, got, want)
		}
	}
}

func TestSoftmaxMasking(t *testing.T) {
	scores := []float32{1, 2, 3, 4, 5, 6}
	// 1 head, 2 queries, 3 keys, qOffset 0, causal: row 0 keeps key 0 only.
	p := Softmax(scores, nil, CausalMask(0), 1, 2, 3, 1)
	if p[0] != 1 || p[1] != 0 || p[2] != 0 {
		t.Errorf("row 0 = %v", p[:3])
	}
	e := math.Exp(1.0)
	if math.Abs(p[3]-1/(1+e)) > 1e-15 || math.Abs(p[4]-e/(1+e)) > 1e-15 || p[5] != 0 {
		t.Errorf("row 1 = %v", p[3:])
	}
	all := Softmax(scores, nil, func(_, _, _ int) bool { return true }, 1, 2, 3, 1)
	for _, v := range all {
		if v != 0 {
			t.Fatalf("fully masked rows = %v", all)
		}
	}
	a := AddBias(scores, []float64{1, 1, 1, 1, 1, 1}, CausalMask(0), 1, 2, 3)
	if a[0] != 2 || !math.IsInf(a[1], -1) || a[4] != 6 || !math.IsInf(a[5], -1) {
		t.Errorf("AddBias = %v", a)
	}
}
