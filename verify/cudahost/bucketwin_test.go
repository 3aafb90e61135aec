package cudahost

import "testing"

// TestBucketWindows answers Bucket through a fake Bias row (entry j is
// f(qOffset − j)) and checks every distance of a harness-like sweep, the
// int32 ends, and that the sweep costs one call per window.
func TestBucketWindows(t *testing.T) {
	f := func(rel int) int { return rel*7 - rel/3 + 1 } // any injective-ish map
	calls := 0
	bucket := bucketWindows(func(lk, qOffset int) []float32 {
		calls++
		row := make([]float32, lk)
		for j := range row {
			row[j] = float32(f(qOffset-j) % 1000)
		}
		return row
	})
	const span = 3 * bucketWindow
	for rel := -span; rel <= span; rel++ {
		if got, want := bucket(rel), f(rel)%1000; got != want {
			t.Fatalf("Bucket(%d) = %d, want %d", rel, got, want)
		}
	}
	if want := (2*span)/bucketWindow + 1; calls != want {
		t.Errorf("%d calls for %d distances, want %d", calls, 2*span+1, want)
	}
	for _, rel := range []int{1<<31 - 1, -(1<<31 - 1), 1<<31 - 2, -(1 << 31) + 2, 1<<31 - bucketWindow} {
		if got, want := bucket(rel), f(rel)%1000; got != want {
			t.Errorf("Bucket(%d) = %d, want %d", rel, got, want)
		}
	}
}
