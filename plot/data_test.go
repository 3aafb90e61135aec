package plot

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// near reports |got − want| ≤ tol·max(1, |want|).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// The spectrum is θ_i = base^(−2i/R) unscaled (RoFormer eq. 15) and
// θ_i/factor for linear scaling, with the reference line at 2π/context.
func TestSpectrumData(t *testing.T) {
	s := mustParse(t, "name: lin\nencoding: rope\nhead_dim: 8\nlayout: half\nbase: 100\nmax_position: 512\nscaling:\n  type: linear\n  factor: 4\n")
	ss := spectrumSeries(s)
	if len(ss) != 3 {
		t.Fatalf("%d series, want unscaled, scaled and the reference line", len(ss))
	}
	// base 100, R = 8: θ = 100^0, 100^(−1/4), 100^(−1/2), 100^(−3/4) = 1, 1/√10, 1/10, 1/(10√10).
	want := []float64{1, 1 / math.Sqrt(10), 0.1, 0.1 / math.Sqrt(10)}
	for i, w := range want {
		if ss[0].x[i] != float64(i) || !near(ss[0].y[i], w, 1e-15) {
			t.Errorf("unscaled point %d = (%g, %g), want (%d, %g)", i, ss[0].x[i], ss[0].y[i], i, w)
		}
		if !near(ss[1].y[i], w/4, 1e-15) {
			t.Errorf("linear factor 4, θ_%d = %g, want %g", i, ss[1].y[i], w/4)
		}
	}
	if ref := ss[2].y[0]; !near(ref, 2*math.Pi/512, 1e-15) {
		t.Errorf("reference line at %g, want 2π/512", ref)
	}
}

// RoFormer §3.4.3: (1/(d/2)) Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{k<j} e^{i·r·θ_k}.
func TestDecayBound(t *testing.T) {
	// At distance 0 every term is 1: S_j = j and the mean is (n+1)/2.
	theta := make([]float64, 64)
	for i := range theta {
		theta[i] = math.Pow(10000, -float64(2*i)/128)
	}
	if got := decayBound(theta, 0); got != 32.5 {
		t.Errorf("distance 0: %g, want (64+1)/2 = 32.5", got)
	}
	// One pair: |S_1| = |e^{irθ}| = 1 at every distance.
	for _, r := range []float64{1, 7, 1e6} {
		if got := decayBound([]float64{0.3}, r); !near(got, 1, 1e-15) {
			t.Errorf("one pair, distance %g: %g, want 1", r, got)
		}
	}
	// Two pairs θ = (1, 0.01): (1 + |e^{ir} + e^{0.01ir}|)/2 = (1 + 2|cos(0.495r)|)/2.
	for _, r := range []float64{1, 2, 10, 100, 12345} {
		want := (1 + 2*math.Abs(math.Cos(0.495*r))) / 2
		if got := decayBound([]float64{1, 0.01}, r); !near(got, want, 1e-12) {
			t.Errorf("two pairs, distance %g: %g, want %g", r, got, want)
		}
	}
	// The curve decays (RoFormer's Figure 2): for d = 128, base 10000, from
	// 32.5 at distance 0 to below 10 by distance 250.
	u := decaySeries(mustZoo(t, "llama2_7b"))[0]
	i, _ := slices.BinarySearch(u.x, 250)
	if u.x[i] > 260 || u.y[i] > 10 || u.y[0] < 30 {
		t.Errorf("llama2_7b decay: %g at distance 1, %g at %g", u.y[0], u.y[i], u.x[i])
	}
}

func TestDecayDistances(t *testing.T) {
	d := decayDistances(70000)
	if d[0] != 1 || d[63] != 64 || d[len(d)-1] != 70000 {
		t.Errorf("distances start %v, end %g", d[:3], d[len(d)-1])
	}
	for i := 1; i < len(d); i++ {
		if d[i] <= d[i-1] || d[i] != math.Round(d[i]) {
			t.Fatalf("distance %d: %g after %g", i, d[i], d[i-1])
		}
	}
	if d := decayDistances(10); len(d) != 10 || d[9] != 10 {
		t.Errorf("decayDistances(10) = %v", d)
	}
}

// T5's _relative_position_bucket for t5_base (32 buckets, bidirectional,
// max_distance 128), with relative_position = key − query: the
// bidirectional split gives 16 buckets per side, 8 of them exact.
func TestBucketData(t *testing.T) {
	s := mustZoo(t, "t5_base")
	g := bucketGrid(s, 256)
	at := func(i, j int) int { return int(g.Z(j, i)) }
	for _, c := range []struct{ i, j, want int }{
		{0, 0, 0},     // same position: bucket 0
		{1, 0, 1},     // key 1 before the query: exact bucket 1
		{7, 0, 7},     // last exact bucket
		{16, 0, 10},   // 8 + ⌊ln(16/8)/ln(128/8)·8⌋ = 8 + ⌊2⌋
		{200, 0, 15},  // beyond max_distance: the last bucket of the side
		{0, 1, 17},    // key after the query: 16 + 1
		{0, 200, 31},  // 16 + 15
		{50, 50, 0},   // only the difference matters
		{100, 99, 1},  // …
		{99, 100, 17}, // …
	} {
		if got := at(c.i, c.j); got != c.want {
			t.Errorf("bucket(query %d, key %d) = %d, want %d", c.i, c.j, got, c.want)
		}
	}
	// The clamp rule (Shaw et al. 2018), r_max = 4: clamp(i−j, −3, 3) + 3.
	cl := mustParse(t, "name: c\nencoding: rpe_bias\nheads: 1\nr_max: 4\n")
	cv := bucketCurve(cl)
	for k, r := range cv.x {
		want := math.Min(math.Max(r, -3), 3) + 3
		if cv.y[k] != want {
			t.Errorf("clamp rule, rel %g: bucket %g, want %g", r, cv.y[k], want)
		}
	}
	if cv.x[0] != -8 || cv.x[len(cv.x)-1] != 8 {
		t.Errorf("clamp curve spans [%g, %g], want [−8, 8]", cv.x[0], cv.x[len(cv.x)-1])
	}
}

// ALiBi (Press et al. 2022): 8 heads, slopes 1/2 … 1/256, bias −m·distance.
func TestALiBiData(t *testing.T) {
	s := mustParse(t, "name: a\nencoding: alibi\nheads: 8\n")
	b := alibiBias(s, 128)
	for _, c := range []struct {
		h, d int
		want float64
	}{{0, 0, 0}, {0, 3, -1.5}, {1, 4, -1}, {7, 128, -0.5}, {7, 1, -1.0 / 256}} {
		if got := b[c.h][c.d]; got != c.want {
			t.Errorf("head %d, distance %d: bias %g, want %g", c.h, c.d, got, c.want)
		}
	}
	// BLOOM-176B: 112 heads, drawn as a heatmap.
	f, err := alibiFigure(mustZoo(t, "bloom_176b"))
	if err != nil || f.ColorBar == nil {
		t.Errorf("bloom_176b: err %v, heatmap %v", err, f != nil && f.ColorBar != nil)
	}
}

func TestEncodingData(t *testing.T) {
	// Sinusoidal (Vaswani et al.): PE(p, 0) = sin p, PE(p, 1) = cos p,
	// PE(p, 2i) = sin(p/10000^(2i/d)).
	rows, d := encodingRows(mustZoo(t, "transformer_base"), 100)
	if d != 512 || len(rows) != 100 {
		t.Fatalf("%d rows of %d dims", len(rows), d)
	}
	for _, p := range []int{0, 1, 57, 99} {
		fp := float64(p)
		if !near(rows[p][0], math.Sin(fp), 1e-15) || !near(rows[p][1], math.Cos(fp), 1e-15) ||
			!near(rows[p][256], math.Sin(fp/100), 1e-15) || !near(rows[p][511], math.Cos(fp/math.Pow(10000, 510.0/512)), 1e-15) {
			t.Errorf("sinusoidal PE(%d) = %g, %g, …, %g, …, %g", p, rows[p][0], rows[p][1], rows[p][256], rows[p][511])
		}
	}
	// Algebraic, d = 3, max_len 101: PE(p, i) = p/100^(i/2).
	rows, _ = encodingRows(mustParse(t, "name: a\nencoding: algebraic\nd_model: 3\nmax_len: 101\n"), 100)
	if rows[50][0] != 50 || !near(rows[50][1], 5, 1e-15) || !near(rows[50][2], 0.5, 1e-15) {
		t.Errorf("algebraic PE(50) = %v, want [50 5 0.5]", rows[50])
	}
	// Binary: bits of p, 4 dims for max_len 10.
	rows, _ = encodingRows(mustParse(t, "name: b\nencoding: binary\nd_model: 6\nmax_len: 10\n"), 100)
	if !slices.Equal(rows[13], []float64{1, 0, 1, 1, 0, 0}) {
		t.Errorf("binary PE(13) = %v, want [1 0 1 1 0 0]", rows[13])
	}
	// Transformer-XL: row p is distance p, R_p[0] = sin p, R_p[1] = cos p.
	rows, d = encodingRows(mustParse(t, "name: x\nencoding: xl\nhead_dim: 4\n"), 100)
	if d != 4 || !near(rows[3][0], math.Sin(3), 1e-15) || !near(rows[3][3], math.Cos(3.0/100), 1e-15) {
		t.Errorf("xl R_3 = %v", rows[3])
	}
	// Components: dims 0, d/10, 2d/10, …
	ss, _ := componentSeries(mustZoo(t, "transformer_base"))
	if len(ss) != 11 || ss[1].dim != 51 || ss[10].dim != 510 {
		t.Errorf("components: %d series, second dim %d", len(ss), ss[1].dim)
	}
}

func TestErrorPositions(t *testing.T) {
	s := mustZoo(t, "llama31_8b")
	ps := ErrorPositions(s)
	if !slices.IsSorted(ps) || ps[0] != 1 || ps[len(ps)-1] != math.MaxInt32 {
		t.Fatalf("positions from %d to %d, sorted %v", ps[0], ps[len(ps)-1], slices.IsSorted(ps))
	}
	for _, p := range []int64{8191, 8192, 1 << 20, 1<<20 + 1, 1 << 30} {
		if !slices.Contains(ps, p) {
			t.Errorf("position %d is missing", p)
		}
	}
	if len(slices.Compact(slices.Clone(ps))) != len(ps) {
		t.Error("duplicate positions")
	}
	b := boundSeries(ps)
	for i, p := range ps {
		want := 1e-6
		if p > 1<<20 {
			want = 1e-5
		}
		if b.y[i] != want {
			t.Errorf("bound at %d = %g, want %g", p, b.y[i], want)
		}
	}
}

// An M-RoPE spectrum has one line per position axis: Pixtral's row pairs
// 0..15 take freqs[::2], its column pairs 16..31 freqs[1::2], each in its
// own legend entry.
func TestSpectrumMRoPEAxes(t *testing.T) {
	s := mustParse(t, "name: px\nencoding: rope\nhead_dim: 64\nlayout: half\nbase: 10000\nmax_position: 64\nmrope_section: [16, 16]\nmrope_freqs: alternate\n")
	ss := spectrumSeries(s)
	if len(ss) != 3 || !strings.HasSuffix(ss[0].label, "row axis") || !strings.HasSuffix(ss[1].label, "column axis") {
		t.Fatalf("series %q, want the row axis, the column axis and the reference line", []string{ss[0].label, ss[len(ss)-1].label})
	}
	for a, sr := range ss[:2] {
		if len(sr.x) != 16 {
			t.Fatalf("axis %d: %d pairs, want 16", a, len(sr.x))
		}
		for j := range 16 {
			want := math.Pow(10000, -float64(2*j+a)/32) // freqs[2j+a] of 1/θ^(arange(0, 64, 2)/64)
			if sr.x[j] != float64(16*a+j) || !near(sr.y[j], want, 1e-14) {
				t.Errorf("axis %d point %d = (%g, %g), want (%d, %g)", a, j, sr.x[j], sr.y[j], 16*a+j, want)
			}
		}
	}
	// Qwen2.5-VL's text M-RoPE: sections [16, 24, 24] over t, h, w.
	s = mustParse(t, "name: q\nencoding: rope\nhead_dim: 128\nlayout: half\nbase: 1000000\nmrope_section: [16, 24, 24]\n")
	ss = spectrumSeries(s)
	if len(ss) != 4 || len(ss[0].x) != 16 || len(ss[1].x) != 24 || len(ss[2].x) != 24 || !strings.HasSuffix(ss[2].label, "w axis") {
		t.Errorf("qwen text M-RoPE: %d series", len(ss))
	}
}
