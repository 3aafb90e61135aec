package cudahost

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// maxPos is max(pos), the max_pos argument of the dynamic and longrope
// launchers (Hugging Face's seq_len − 1); 0 for no positions.
func maxPos(pos []int32) int64 {
	if len(pos) == 0 {
		return 0
	}
	m := pos[0]
	for _, p := range pos[1:] {
		m = max(m, p)
	}
	return int64(m)
}

// RoPE returns the host-emulated CUDA launchers of a rope spec as the
// harness's kernels. Lengths are checked (and mismatches panic) as in the
// generated Go API. Frequencies, FrequenciesAt and AttentionFactor are the
// reference's: the launchers expose no such query, and the kernels'
// behaviour is what the harness measures.
func (l *Lib) RoPE() verify.RoPEKernels {
	s := l.spec
	if s.Encoding != spec.RoPE {
		panic("cudahost: RoPE on a " + s.Encoding + " spec")
	}
	hd := s.HeadDim
	return verify.RoPEKernels{
		Apply: func(x []float32, pos []int32, heads int) {
			checkLen("Apply", "x", len(x), len(pos)*heads*hd)
			l.mustCall("apply", opApply, []int64{int64(heads), 0, maxPos(pos)}, 0, [][]float32{x}, [][]int32{pos})
		},
		ApplyQK: func(q, k []float32, pos []int32, qHeads, kHeads int) {
			checkLen("ApplyQK", "q", len(q), len(pos)*qHeads*hd)
			checkLen("ApplyQK", "k", len(k), len(pos)*kHeads*hd)
			l.mustCall("apply_qk", opApplyQK, []int64{int64(qHeads), int64(kHeads), maxPos(pos)}, 0, [][]float32{q, k}, [][]int32{pos})
		},
		Inverse: func(x []float32, pos []int32, heads int) {
			checkLen("Inverse", "x", len(x), len(pos)*heads*hd)
			l.mustCall("inverse", opInverse, []int64{int64(heads), 0, maxPos(pos)}, 0, [][]float32{x}, [][]int32{pos})
		},
		Frequencies:     func() []float64 { return verify.RoPEFrequencies(s, 0) },
		FrequenciesAt:   func(seqLen int) []float64 { return verify.RoPEFrequencies(s, seqLen) },
		AttentionFactor: verify.RoPEAttentionFactor(s),
	}
}

// Bias returns the host-emulated CUDA launchers of an alibi or rpe_bias
// spec as the harness's kernels. Bucket (rpe_bias) is answered by the CUDA
// code too: Bias with lq = lk = 1, q_offset = rel and an identity table
// (table[h][b] = b) returns bucket(rel).
func (l *Lib) Bias() verify.BiasKernels {
	s := l.spec
	h := s.Heads
	switch s.Encoding {
	case spec.ALiBi:
		n := func(lq, lk int) int { return h * lq * lk }
		return verify.BiasKernels{
			AddBias: func(scores []float32, lq, lk, qOffset int) {
				checkLen("AddBias", "scores", len(scores), n(lq, lk))
				l.mustCall("add_bias", opAddBias, []int64{int64(lq), int64(lk), int64(qOffset)}, 0, [][]float32{scores}, nil)
			},
			Softmax: func(scores []float32, lq, lk, qOffset int, scale float32) {
				checkLen("Softmax", "scores", len(scores), n(lq, lk))
				l.mustCall("softmax", opSoftmax, []int64{int64(lq), int64(lk), int64(qOffset)}, scale, [][]float32{scores}, nil)
			},
			Bias: func(dst []float32, lq, lk, qOffset int) {
				checkLen("Bias", "dst", len(dst), n(lq, lk))
				l.mustCall("bias", opBias, []int64{int64(lq), int64(lk), int64(qOffset)}, 0, [][]float32{dst}, nil)
			},
		}
	case spec.RPEBias:
		nb := s.NumBuckets()
		n := func(lq, lk int) int { return h * lq * lk }
		// The table is copied: the driver writes every float array back.
		tab := func(t []float32) []float32 { return append([]float32(nil), t...) }
		k := verify.BiasKernels{
			RPEAddBias: func(scores, table []float32, lq, lk, qOffset int) {
				checkLen("AddBias", "scores", len(scores), n(lq, lk))
				checkLen("AddBias", "table", len(table), h*nb)
				l.mustCall("add_bias", opAddBias, []int64{int64(lq), int64(lk), int64(qOffset)}, 0, [][]float32{scores, tab(table)}, nil)
			},
			RPESoftmax: func(scores, table []float32, lq, lk, qOffset int, scale float32) {
				checkLen("Softmax", "scores", len(scores), n(lq, lk))
				checkLen("Softmax", "table", len(table), h*nb)
				l.mustCall("softmax", opSoftmax, []int64{int64(lq), int64(lk), int64(qOffset)}, scale, [][]float32{scores, tab(table)}, nil)
			},
			RPEBias: func(dst, table []float32, lq, lk, qOffset int) {
				checkLen("Bias", "dst", len(dst), n(lq, lk))
				checkLen("Bias", "table", len(table), h*nb)
				l.mustCall("bias", opBias, []int64{int64(lq), int64(lk), int64(qOffset)}, 0, [][]float32{dst, tab(table)}, nil)
			},
		}
		ident := make([]float32, h*nb)
		for i := range ident {
			ident[i] = float32(i % nb)
		}
		k.Bucket = func(rel int) int {
			dst := make([]float32, h)
			k.RPEBias(dst, ident, 1, 1, rel)
			return int(dst[0])
		}
		return k
	}
	panic("cudahost: Bias on a " + s.Encoding + " spec")
}

// Absolute returns the host-emulated CUDA launchers of an absolute-encoding
// spec as the harness's kernels (Add and Encode, or LearnedAdd /
// MixtureAdd). Learned and mixture tables must be whole rows and positions
// inside them, as the generated Go API checks.
func (l *Lib) Absolute() verify.AbsoluteKernels {
	s := l.spec
	d := s.DModel
	tableCall := func(fn string, x, table []float32, pos []int32, alpha float32) {
		checkLen(fn, "x", len(x), len(pos)*d)
		rows := len(table) / d
		checkLen(fn, "table", len(table), rows*d)
		for t, p := range pos {
			if p < 0 || int(p) >= rows {
				panic(fmt.Sprintf("cudahost: %s: pos[%d] = %d outside the table's %d rows", fn, t, p, rows))
			}
		}
		l.mustCall("add", opAdd, []int64{int64(rows)}, alpha, [][]float32{x, append([]float32(nil), table...)}, [][]int32{pos})
	}
	switch s.Encoding {
	case spec.Sinusoidal, spec.Algebraic, spec.Binary:
		return verify.AbsoluteKernels{
			Add: func(x []float32, pos []int32) {
				checkLen("Add", "x", len(x), len(pos)*d)
				l.mustCall("add", opAdd, nil, 0, [][]float32{x}, [][]int32{pos})
			},
			Encode: func(dst []float32, pos int) {
				checkLen("Encode", "dst", len(dst), d)
				l.mustCall("encode", opEncode, nil, 0, [][]float32{dst}, [][]int32{{int32(pos)}})
			},
		}
	case spec.Learned:
		return verify.AbsoluteKernels{LearnedAdd: func(x, table []float32, pos []int32) { tableCall("Add", x, table, pos, 0) }}
	case spec.Mixture:
		return verify.AbsoluteKernels{MixtureAdd: func(x, table []float32, pos []int32, alpha float32) { tableCall("Add", x, table, pos, alpha) }}
	}
	panic("cudahost: Absolute on a " + s.Encoding + " spec")
}

// Verify runs the harness of package verify on the host-emulated kernels for
// the library's spec (RoPE, bias or absolute encoding) and returns the
// report with Target set to the cuda-host target.
func (l *Lib) Verify() *verify.Report {
	var r *verify.Report
	switch l.spec.Encoding {
	case spec.RoPE:
		r = verify.RunRoPE(l.spec, l.RoPE())
	case spec.ALiBi, spec.RPEBias:
		r = verify.RunBias(l.spec, l.Bias())
	default:
		r = verify.RunAbsolute(l.spec, l.Absolute())
	}
	r.Target = Target
	return r
}
