package verify

import (
	"github.com/posenc/posenc/spec"
)

// AttentionKernels16 are AttentionKernels of a rope package whose spec
// stores f16 or bf16 (dtype): the same functions over raw 16-bit slices,
// each element the encoding of one value.
type AttentionKernels16 struct {
	// HeadDim is the spec's head_dim.
	HeadDim int
	// Attention over unrotated q and k, rotated inside.
	Attention func(out, q, k, v []uint16, qpos, kpos []int32, o AttentionOptions)
	// AttentionRotated: k already rotated at kpos (Apply's 16-bit output).
	AttentionRotated func(out, q, k, v []uint16, qpos, kpos []int32, o AttentionOptions)
	// AttentionPaged is the paged form (nil: not checked).
	AttentionPaged func(out, q, kCache, vCache []uint16, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions)
	// PagedKRotated: the paged form's cache holds rotated k.
	PagedKRotated bool
	// AttentionMRoPE, AttentionRotatedMRoPE and AttentionPagedMRoPE are an
	// M-RoPE package's forms, which take ids (AttentionKernels' fields of
	// the same names).
	AttentionMRoPE        func(out, q, k, v []uint16, qids, kids, qpos, kpos []int32, o AttentionOptions)
	AttentionRotatedMRoPE func(out, q, k, v []uint16, qids, qpos, kpos []int32, o AttentionOptions)
	AttentionPagedMRoPE   func(out, q, kCache, vCache []uint16, qids, kids, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions)
}

// RunAttentionStored checks float32 attention kernels over a spec that
// stores f16 or bf16 (the CUDA launchers through cudahost's driver, which
// narrows each input and widens each output): every case of
// RunAttention16, with its inputs values of the storage type and its
// bounds. The kernels must round as RunAttention16's do (rotated q and k
// to the storage type, the output once).
func RunAttentionStored(s *spec.Spec, k AttentionKernels) *Report {
	st, rep := storage16(s, "RunAttentionStored")
	if rep != nil {
		return rep
	}
	return runAttention(s, k, st)
}

// RunAttention16 checks the attention form of a package storing the spec's
// dtype (f16 or bf16) with every case of RunAttention, on inputs that are
// values of the storage type. The kernel rotates q and k as Apply does,
// rounding them to the storage type, computes in float32 and rounds the
// output once; the reference is RunAttention's, with those three roundings
// added to the bound (attentionRef). The 16-bit slices lie inside
// sentinels that must stay intact (ropeAdapter).
func RunAttention16(s *spec.Spec, k AttentionKernels16) *Report {
	st, rep := storage16(s, "RunAttention16")
	if rep != nil {
		return rep
	}
	a := ropeAdapter{st}
	k32 := AttentionKernels{HeadDim: k.HeadDim, PagedKRotated: k.PagedKRotated}
	if k.Attention != nil {
		k32.Attention = func(out, q, kk, v, _ []float32, qpos, kpos []int32, o AttentionOptions) {
			a.run(func(h [][]uint16) { k.Attention(h[0], h[1], h[2], h[3], qpos, kpos, o) }, out, q, kk, v)
		}
	}
	if k.AttentionRotated != nil {
		k32.AttentionRotated = func(out, q, kk, v []float32, qpos, kpos []int32, o AttentionOptions) {
			a.run(func(h [][]uint16) { k.AttentionRotated(h[0], h[1], h[2], h[3], qpos, kpos, o) }, out, q, kk, v)
		}
	}
	if k.AttentionPaged != nil {
		k32.AttentionPaged = func(out, q, kc, vc, _ []float32, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions) {
			a.run(func(h [][]uint16) { k.AttentionPaged(h[0], h[1], h[2], h[3], qpos, qStart, slots, kpos, kStart, o) }, out, q, kc, vc)
		}
	}
	if k.AttentionMRoPE != nil {
		k32.AttentionMRoPE = func(out, q, kk, v []float32, qids, kids, qpos, kpos []int32, o AttentionOptions) {
			a.run(func(h [][]uint16) { k.AttentionMRoPE(h[0], h[1], h[2], h[3], qids, kids, qpos, kpos, o) }, out, q, kk, v)
		}
	}
	if k.AttentionRotatedMRoPE != nil {
		k32.AttentionRotatedMRoPE = func(out, q, kk, v []float32, qids, qpos, kpos []int32, o AttentionOptions) {
			a.run(func(h [][]uint16) { k.AttentionRotatedMRoPE(h[0], h[1], h[2], h[3], qids, qpos, kpos, o) }, out, q, kk, v)
		}
	}
	if k.AttentionPagedMRoPE != nil {
		k32.AttentionPagedMRoPE = func(out, q, kc, vc []float32, qids, kids, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions) {
			a.run(func(h [][]uint16) {
				k.AttentionPagedMRoPE(h[0], h[1], h[2], h[3], qids, kids, qpos, qStart, slots, kpos, kStart, o)
			}, out, q, kc, vc)
		}
	}
	return runAttention(s, k32, st)
}
