package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/spec"
)

func TestRoPEBound(t *testing.T) {
	for _, c := range []struct {
		p    int64
		want float64
	}{{0, 1e-6}, {1 << 20, 1e-6}, {-(1 << 20), 1e-6}, {1<<20 + 1, 1e-5}, {math.MaxInt32, 1e-5}, {math.MinInt32, 1e-5}} {
		if got := RoPEBound(c.p); got != c.want {
			t.Errorf("RoPEBound(%d) = %g, want %g", c.p, got, c.want)
		}
	}
}

func TestRoPERelativeErrorHandCase(t *testing.T) {
	s := ropeSpec(spec.LayoutHalf, 4, 2) // one rotated pair (0, 1), dims 2 and 3 untouched
	x := []float32{3, -1, 7, 7}
	ref := []float64{1, 2, 7, 7}
	pos := []int32{5}
	if e := RoPERelativeError(s, x, []float32{1, 2, 7, 7}, ref, pos, 1); e != 0 {
		t.Errorf("exact output: error %g, want 0", e)
	}
	// |1.5−1| = 0.5 over |3|+|−1| = 4: 0.125; the untouched dims do not count.
	if e := RoPERelativeError(s, x, []float32{1.5, 2, 100, 7}, ref, pos, 1); e != 0.125 {
		t.Errorf("error %g, want 0.125", e)
	}
	// With attention factor 2 the unit is (|x0|+|x1|)·2 = 8.
	s.Scaling = &spec.Scaling{Type: spec.ScaleYaRN, Factor: 2, OriginalMaxPosition: 64, BetaFast: 32, BetaSlow: 1,
		Truncate: true, AttentionFactor: 2, HasAttentionFactor: true}
	if e := RoPERelativeError(s, x, []float32{1, 1.5, 7, 7}, ref, pos, 1); e != 0.0625 {
		t.Errorf("error with A = 2: %g, want 0.0625", e)
	}
}

func TestRoPENaiveFP32(t *testing.T) {
	// R = 2: one pair with ω_0 = base^0 = 1, so the angle is float32(p).
	s := ropeSpec(spec.LayoutInterleaved, 2, 2)
	x := []float32{0.75, -1.25}
	if y := RoPENaiveFP32(s, x, []int32{0}, 1); y[0] != x[0] || y[1] != x[1] {
		t.Errorf("position 0: %v, want x = %v", y, x)
	}
	c, sn := float32(math.Cos(3)), float32(math.Sin(3))
	want := []float32{float32(0.75*c) - float32(-1.25*sn), float32(-1.25*c) + float32(0.75*sn)}
	if y := RoPENaiveFP32(s, x, []int32{3}, 1); y[0] != want[0] || y[1] != want[1] {
		t.Errorf("position 3: %v, want %v", y, want)
	}
	// float32(2^31−1) = 2^31: the angle is one radian off.
	p := int32(math.MaxInt32)
	a := float64(float32(p))
	want = []float32{float32(0.75*math.Cos(a) + 1.25*math.Sin(a)), float32(-1.25*math.Cos(a) + 0.75*math.Sin(a))}
	y := RoPENaiveFP32(s, x, []int32{p}, 1)
	if math.Abs(float64(y[0]-want[0])) > 1e-6 || math.Abs(float64(y[1]-want[1])) > 1e-6 {
		t.Errorf("position 2^31−1: %v, want the rotation by 2^31 rad, %v", y, want)
	}
}

// The naive baseline meets the RoPE bound at small positions and fails it
// badly at 2^31−1, where the reference's float64 angle does not.
func TestRoPENaiveFP32AgainstBound(t *testing.T) {
	s := ropeSpec(spec.LayoutHalf, 128, 128)
	r := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, 4*128)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, c := range []struct {
		p        int32
		min, max float64
	}{{1, 0, 1e-6}, {math.MaxInt32, 0.1, 2}} {
		pos := []int32{c.p}
		ref := RoPEApply(s, x, pos, 4, false)
		e := RoPERelativeError(s, x, RoPENaiveFP32(s, x, pos, 4), ref, pos, 4)
		if e < c.min || e > c.max {
			t.Errorf("naive fp32 at position %d: relative error %g, want in [%g, %g]", c.p, e, c.min, c.max)
		}
		r32 := make([]float32, len(ref))
		for i, v := range ref {
			r32[i] = float32(v)
		}
		if e := RoPERelativeError(s, x, r32, ref, pos, 4); e > RoPEBound(int64(c.p)) {
			t.Errorf("reference rounded to float32 at position %d: error %g above the bound", c.p, e)
		}
	}
}
