package cudahost

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// mropeOps are the driver's op cases of an M-RoPE spec (none otherwise).
func mropeOps(s *spec.Spec) []string {
	if !s.IsMRoPE() {
		return nil
	}
	n := s.Name
	return []string{
		fmt.Sprintf("case %d: return posenc_%s_apply_mrope(F0, P0, (int)I[2], (int)I[0], 0);", opApplyMRoPE, n),
		fmt.Sprintf("case %d: return posenc_%s_apply_qk_mrope(F0, F1, P0, (int)I[2], (int)I[0], (int)I[1], 0);", opApplyQKMRoPE, n),
		fmt.Sprintf("case %d: return posenc_%s_inverse_mrope(F0, P0, (int)I[2], (int)I[0], 0);", opInverseMRoPE, n),
	}
}

// addMRoPE sets the M-RoPE functions of k to the host-emulated launchers,
// checking lengths (and panicking on a mismatch) as the generated Go API
// does; nothing for an ordinary rope spec.
func (l *Lib) addMRoPE(k *verify.RoPEKernels) {
	s := l.spec
	if !s.IsMRoPE() {
		return
	}
	axes, hd := verify.MRoPEAxes(s), s.HeadDim
	tokens := func(fn string, pos []int32) int {
		if len(pos)%axes != 0 {
			panic(fmt.Sprintf("cudahost: %s: len(pos) = %d, want a multiple of %d axes", fn, len(pos), axes))
		}
		return len(pos) / axes
	}
	k.ApplyMRoPE = func(x []float32, pos []int32, heads int) {
		t := tokens("ApplyMRoPE", pos)
		checkLen("ApplyMRoPE", "x", len(x), t*heads*hd)
		l.mustCall("apply_mrope", opApplyMRoPE, []int64{int64(heads), 0, int64(t)}, 0, [][]float32{x}, [][]int32{pos})
	}
	k.ApplyQKMRoPE = func(q, kk []float32, pos []int32, qHeads, kHeads int) {
		t := tokens("ApplyQKMRoPE", pos)
		checkLen("ApplyQKMRoPE", "q", len(q), t*qHeads*hd)
		checkLen("ApplyQKMRoPE", "k", len(kk), t*kHeads*hd)
		l.mustCall("apply_qk_mrope", opApplyQKMRoPE, []int64{int64(qHeads), int64(kHeads), int64(t)}, 0, [][]float32{q, kk}, [][]int32{pos})
	}
	k.InverseMRoPE = func(x []float32, pos []int32, heads int) {
		t := tokens("InverseMRoPE", pos)
		checkLen("InverseMRoPE", "x", len(x), t*heads*hd)
		l.mustCall("inverse_mrope", opInverseMRoPE, []int64{int64(heads), 0, int64(t)}, 0, [][]float32{x}, [][]int32{pos})
	}
}
