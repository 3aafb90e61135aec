package exactmath

import (
	"math"
	"testing"
)

// Pow and Log agree with the math package to within one ulp (math's are
// not always correctly rounded) and are exact where the answer is.
func TestPortablePowLog(t *testing.T) {
	ulp := func(a, b float64) float64 {
		return math.Abs(a-b) / math.Abs(math.Nextafter(b, math.Inf(1))-b)
	}
	for _, c := range [][2]float64{{10000, -0.5}, {10000, 2.0 / 128}, {500000, 62.0 / 64}, {2, -0.125}, {4095, 0.3}, {1e6, 1.0 / 3}, {8, 64.0 / 62}} {
		if got, want := Pow(c[0], c[1]), math.Pow(c[0], c[1]); ulp(got, want) > 1 {
			t.Errorf("Pow(%g, %g) = %.17g, math.Pow = %.17g", c[0], c[1], got, want)
		}
	}
	for _, x := range []float64{2, 16, 0.001, 1e300, 4096 / (2 * math.Pi), 32} {
		if got, want := Log(x), math.Log(x); ulp(got, want) > 1 {
			t.Errorf("Log(%g) = %.17g, math.Log = %.17g", x, got, want)
		}
	}
	for _, c := range []struct{ x, y, want float64 }{{2, 10, 1024}, {2, -3, 0.125}, {10, 3, 1000}, {4, 0.5, 2}, {7, 0, 1}} {
		if got := Pow(c.x, c.y); got != c.want {
			t.Errorf("Pow(%g, %g) = %.17g, want %g exactly", c.x, c.y, got, c.want)
		}
	}
	if Log(1) != 0 || Log(math.E) != 1 {
		t.Errorf("Log(1) = %g, Log(e) = %.17g", Log(1), Log(math.E))
	}
}
