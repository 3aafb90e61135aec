package cudahost

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/verify"
)

// The RoPE engine forms (issue 14) as the harness's kernels: the Go API's
// arguments and panics (checked here, before any launch, as the generated
// package checks them), then one launcher call.

// shapeCheck panics unless heads ≥ 1 and n == tokens·heads·headDim, as the
// generated checkShape.
func shapeCheck(fn, arg string, n, tokens, heads, headDim int) {
	if heads < 1 {
		panic(fmt.Sprintf("cudahost: %s: heads = %d, want heads >= 1", fn, heads))
	}
	if n%headDim != 0 || n/headDim%heads != 0 || n/headDim/heads != tokens {
		panic(fmt.Sprintf("cudahost: %s: len(%s) = %d, want len(pos)*heads*HeadDim = %d", fn, arg, n, tokens*heads*headDim))
	}
}

// stridedCheck panics, as the generated checkStrided, unless heads ≥ 1,
// the strides that matter are in [0, n], the tokens·heads heads of headDim
// elements at t·stride + h·headStride do not overlap (token-major or
// head-major) and they all lie in the n elements of x.
func stridedCheck(fn string, n, tokens, heads, stride, headStride, headDim int) {
	if heads < 1 {
		panic(fmt.Sprintf("cudahost: %s: heads = %d, want heads >= 1", fn, heads))
	}
	if stride < 0 || headStride < 0 || tokens > 1 && stride > n || heads > 1 && headStride > n {
		panic(fmt.Sprintf("cudahost: %s: stride = %d, headStride = %d, want both in [0, len(x)] = [0, %d]", fn, stride, headStride, n))
	}
	if tokens == 0 {
		return
	}
	tokenMajor := (heads == 1 || headStride >= headDim) && (tokens == 1 || stride >= (heads-1)*headStride+headDim)
	headMajor := (tokens == 1 || stride >= headDim) && (heads == 1 || headStride >= (tokens-1)*stride+headDim)
	if !tokenMajor && !headMajor {
		panic(fmt.Sprintf("cudahost: %s: heads overlap: stride = %d, headStride = %d, HeadDim = %d", fn, stride, headStride, headDim))
	}
	if need := int64(tokens-1)*int64(stride) + int64(heads-1)*int64(headStride) + int64(headDim); int64(n) < need {
		panic(fmt.Sprintf("cudahost: %s: len(x) = %d, want at least %d", fn, n, need))
	}
}

// addForms fills the engine-form fields of k with the library's launchers.
func (l *Lib) addForms(k *verify.RoPEKernels) {
	s := l.spec
	hd := s.HeadDim
	k.ApplyStrided = func(x []float32, pos []int32, heads, stride, headStride int) {
		stridedCheck("ApplyStrided", len(x), len(pos), heads, stride, headStride, hd)
		if len(pos) == 0 {
			return
		}
		l.mustCall("apply_strided", opApplyStrided, []int64{int64(heads), 0, maxPos(pos), int64(stride), int64(headStride)}, 0,
			[][]float32{x}, [][]int32{pos})
	}
	k.ApplyHeadMajor = func(x []float32, pos []int32, heads int) {
		shapeCheck("ApplyHeadMajor", "x", len(x), len(pos), heads, hd)
		l.mustCall("apply_head_major", opApplyHeadMajor, []int64{int64(heads), 0, maxPos(pos)}, 0, [][]float32{x}, [][]int32{pos})
	}
	k.ApplyQKStrided = func(qkv []float32, pos []int32, qHeads, kHeads, stride int) {
		if qHeads < 1 || kHeads < 1 {
			panic(fmt.Sprintf("cudahost: ApplyQKStrided: qHeads = %d, kHeads = %d, want both >= 1", qHeads, kHeads))
		}
		if qk := (qHeads + kHeads) * hd; stride < qk {
			panic(fmt.Sprintf("cudahost: ApplyQKStrided: stride = %d, want stride >= (qHeads+kHeads)*HeadDim = %d", stride, qk))
		}
		if len(pos) == 0 {
			return
		}
		if need := int64(len(pos)-1)*int64(stride) + int64((qHeads+kHeads)*hd); int64(len(qkv)) < need {
			panic(fmt.Sprintf("cudahost: ApplyQKStrided: len(qkv) = %d, want at least %d", len(qkv), need))
		}
		l.mustCall("apply_qk_strided", opApplyQKStrided, []int64{int64(qHeads), int64(kHeads), maxPos(pos), int64(stride)}, 0,
			[][]float32{qkv}, [][]int32{pos})
	}
	k.ApplyTo = func(dst, src []float32, pos []int32, heads int) {
		shapeCheck("ApplyTo", "src", len(src), len(pos), heads, hd)
		shapeCheck("ApplyTo", "dst", len(dst), len(pos), heads, hd)
		l.mustCall("apply_to", opApplyTo, []int64{int64(heads), 0, maxPos(pos)}, 0, [][]float32{dst, l.input(src)}, [][]int32{pos})
	}
	k.ApplyToSlots = func(cache []float32, slots []int32, src []float32, pos []int32, heads int) {
		shapeCheck("ApplyToSlots", "src", len(src), len(pos), heads, hd)
		if len(slots) != len(pos) {
			panic(fmt.Sprintf("cudahost: ApplyToSlots: len(slots) = %d, want len(pos) = %d", len(slots), len(pos)))
		}
		row := heads * hd
		if len(cache)%row != 0 {
			panic(fmt.Sprintf("cudahost: ApplyToSlots: len(cache) = %d, want a multiple of heads*HeadDim = %d", len(cache), row))
		}
		nSlots := len(cache) / row
		for t, sl := range slots {
			if sl < 0 || int(sl) >= nSlots {
				panic(fmt.Sprintf("cudahost: ApplyToSlots: slots[%d] = %d, want a slot in [0, %d)", t, sl, nSlots))
			}
		}
		l.mustCall("apply_to_slots", opApplyToSlots, []int64{int64(heads), 0, maxPos(pos), int64(nSlots)}, 0,
			[][]float32{cache, l.input(src)}, [][]int32{pos, slots})
	}
	k.Shift = func(x []float32, delta int32, heads, n int) {
		if heads < 1 || len(x)%(heads*hd) != 0 {
			panic(fmt.Sprintf("cudahost: Shift: heads = %d, len(x) = %d, want heads >= 1 and len(x) a multiple of heads*HeadDim", heads, len(x)))
		}
		if n < 0 || n > math.MaxInt32 {
			panic(fmt.Sprintf("cudahost: Shift: n = %d outside the launcher's int range", n))
		}
		tokens := len(x) / (heads * hd)
		l.mustCall("shift", opShift, []int64{int64(heads), 0, int64(n), int64(delta), int64(tokens)}, 0, [][]float32{x}, nil)
	}
}
