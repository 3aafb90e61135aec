package verify

import "testing"

// TestFingerprint: a change of one element (or of a sentinel) is caught in
// a copied buffer and in a hashed one, and an untouched buffer passes.
func TestFingerprint(t *testing.T) {
	for _, n := range []int{10, snapshotFloats + 1} {
		for _, at := range []int{-1, 0, n / 2, n - 1, n + 3} { // −1: no change; n+3: a sentinel
			g := guard(make([]float32, n))
			fp := g.fingerprint()
			if (fp.copy == nil) != (n > snapshotFloats-2*guardPad) {
				t.Fatalf("n %d: copy %v", n, fp.copy != nil)
			}
			if at >= 0 {
				g.buf[guardPad+at] = 1
			}
			rep := &Report{}
			c := rep.begin("fp")
			g.unchanged(c, "x", fp)
			if got, want := len(rep.Failures) > 0, at >= 0; got != want {
				t.Errorf("n %d, change at %d: failed %v, want %v (%v)", n, at, got, want, rep.Failures)
			}
		}
	}
}
