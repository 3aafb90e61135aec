package verify

import (
	"math"
	"testing"

	"github.com/posenc/posenc/spec"
)

// TemperatureScale against Python's float64 math (CPython math.log1p of the
// integer floor (p+1)//8192, times 0.1, plus 1: the formula of
// Llama4TextAttention.forward in float64), Scout's floor_scale 8192 and
// attn_scale 0.1.
func TestTemperatureScale(t *testing.T) {
	a := &spec.AttnTemperature{FloorScale: 8192, AttnScale: 0.1}
	for _, c := range []struct {
		p    int64
		want float64
	}{
		{0, 1}, {8190, 1}, {8191, 1.0693147180559945}, {8192, 1.0693147180559945},
		{16383, 1.109861228866811}, {1 << 20, 1.4859812404361672}, {math.MaxInt32, 2.2476653064769003},
		{-1, 1}, {-2, 1}, {math.MinInt32, 1},
	} {
		if got := TemperatureScale(a, c.p); math.Abs(got-c.want) > 2e-16*c.want {
			t.Errorf("s(%d) = %.17g, want %.17g", c.p, got, c.want)
		}
	}
}
