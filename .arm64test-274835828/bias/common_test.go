package bias

import (
	"math"
	"testing"
)

const guard = 7

var sentinel = math.Float32bits(-12345.678)

// guarded returns a slice of n elements with guard elements on both sides
// and the full buffer.
func guarded(n int) (inner, buf []float32) {
	buf = make([]float32, n+2*guard)
	for i := range buf {
		buf[i] = math.Float32frombits(sentinel)
	}
	return buf[guard : guard+n : guard+n], buf
}

func checkGuards(t *testing.T, what string, buf []float32) {
	t.Helper()
	n := len(buf) - 2*guard
	for i := 0; i < guard; i++ {
		if math.Float32bits(buf[i]) != sentinel || math.Float32bits(buf[guard+n+i]) != sentinel {
			t.Fatalf("%s: guard element overwritten", what)
		}
	}
}

var lengths = []int{0, 1, 3, 17, 31, 33, 512}
