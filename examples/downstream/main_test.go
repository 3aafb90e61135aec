package main

import (
	"math"
	"testing"
)

// The score of a rotated query and key depends only on their distance, at
// small positions and at the largest int32 position alike.
func TestRelativeScore(t *testing.T) {
	q := make([]float32, 64)
	k := make([]float32, 64)
	for i := range q {
		q[i], k[i] = float32(math.Sin(float64(i))), float32(math.Cos(float64(3*i)))
	}
	want := score(q, k, 3, 0, 2)
	for _, m := range []int32{10, 4000, 1 << 20, math.MaxInt32} {
		if got := score(q, k, m, m-3, 2); math.Abs(got-want) > 1e-4 {
			t.Errorf("score at %d, %d = %v, want %v (the score at 3, 0)", m, m-3, got, want)
		}
	}
}
