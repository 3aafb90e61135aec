package verify

import (
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// float32PEKernels is the algebraic Add as it was before addRows64: PE
// rounded to float32 (the float32 table or the exact path), then added to x
// in float32 (two roundings).
func float32PEKernels(s *spec.Spec) AbsoluteKernels {
	k := absKernels(s)
	k.Add = func(x []float32, pos []int32) {
		mustLen("x", len(x), len(pos)*s.DModel)
		for t, p := range pos {
			for i, v := range AbsoluteEncoding(s, int(p)) {
				x[t*s.DModel+i] += float32(v)
			}
		}
	}
	return k
}

// TestAbsoluteCancelCatchesFloat32PE: the cancellation cases fail an Add
// that rounds PE to float32 before adding it, for the smallest algebraic
// shapes as for large ones, and only those cases do; the float64 Add passes
// them (TestHarnessAbsolute).
func TestAbsoluteCancelCatchesFloat32PE(t *testing.T) {
	for _, y := range []string{
		"name: alg4\nencoding: algebraic\nd_model: 4\nmax_len: 8\n",
		"name: alg\nencoding: algebraic\nd_model: 24\nmax_len: 512\n",
		"name: alg1k\nencoding: algebraic\nd_model: 1024\nmax_len: 1024\n",
	} {
		s := parse(t, y)
		r := RunAbsolute(s, float32PEKernels(s))
		if len(r.Failures) == 0 {
			t.Errorf("%s: the float32-PE Add passed (max ratio %.3g at %s)", s.Name, r.MaxRatio, r.Worst)
			continue
		}
		cancel := 0
		for _, f := range r.Failures {
			if strings.Contains(f, " cancel ") {
				cancel++
			}
		}
		if cancel == 0 {
			t.Errorf("%s: no cancellation case among the failures: %s", s.Name, r.Failures[0])
		}
		t.Logf("%s: %d failures (%d listed from cancellation cases), max ratio %.3g at %s", s.Name, len(r.Failures), cancel, r.MaxRatio, r.Worst)
	}
}
