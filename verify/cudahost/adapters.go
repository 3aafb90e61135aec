package cudahost

import (
	"fmt"
	"math"

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
// harness's kernels, the engine forms (apply_strided, apply_head_major,
// apply_qk_strided, apply_to, apply_to_slots, shift) included. Lengths are checked (and mismatches panic) as in the
// generated Go API. Frequencies, FrequenciesAt and AttentionFactor are the
// reference's: the launchers expose no such query, and the kernels'
// behaviour is what the harness measures.
func (l *Lib) RoPE() verify.RoPEKernels {
	s := l.spec
	if s.Encoding != spec.RoPE {
		panic("cudahost: RoPE on a " + s.Encoding + " spec")
	}
	hd := s.HeadDim
	k := verify.RoPEKernels{
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
	l.addMRoPE(&k)
	l.addForms(&k)
	l.addTemperature(&k)
	return k
}

// Bias returns the host-emulated CUDA launchers of an alibi or rpe_bias
// spec as the harness's kernels. Bucket (rpe_bias) is answered by the CUDA
// code too: Bias with lq = 1 and an identity table (table[h][b] = b)
// returns the buckets of a window of distances (bucketWindows).
func (l *Lib) Bias() verify.BiasKernels {
	s := l.spec
	h := s.Heads
	switch s.Encoding {
	case spec.ALiBi:
		n := func(lq, lk int) int { return h * lq * lk }
		k := verify.BiasKernels{
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
		k.SoftmaxPos = func(scores []float32, qpos, kpos []int32, h0, nh int, scale float32) {
			l.posCall("softmax_pos", opSoftmaxPos, scores, nil, qpos, kpos, h0, nh, scale)
		}
		k.AddBiasPos = func(scores []float32, qpos, kpos []int32, h0, nh int) {
			l.posCall("add_bias_pos", opAddBiasPos, scores, nil, qpos, kpos, h0, nh, 0)
		}
		k.BiasPos = func(dst []float32, qpos, kpos []int32, h0, nh int) {
			l.posCall("bias_pos", opBiasPos, dst, nil, qpos, kpos, h0, nh, 0)
		}
		return k
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
		k.RPESoftmaxPos = func(scores, table []float32, qpos, kpos []int32, h0, nh int, scale float32) {
			checkLen("SoftmaxPos", "table", len(table), h*nb)
			l.posCall("softmax_pos", opSoftmaxPos, scores, tab(table), qpos, kpos, h0, nh, scale)
		}
		k.RPEAddBiasPos = func(scores, table []float32, qpos, kpos []int32, h0, nh int) {
			checkLen("AddBiasPos", "table", len(table), h*nb)
			l.posCall("add_bias_pos", opAddBiasPos, scores, tab(table), qpos, kpos, h0, nh, 0)
		}
		k.RPEBiasPos = func(dst, table []float32, qpos, kpos []int32, h0, nh int) {
			checkLen("BiasPos", "table", len(table), h*nb)
			l.posCall("bias_pos", opBiasPos, dst, tab(table), qpos, kpos, h0, nh, 0)
		}
		ident := make([]float32, h*nb)
		for i := range ident {
			ident[i] = float32(i % nb)
		}
		k.Bucket = bucketWindows(func(lk, qOffset int) []float32 {
			dst := make([]float32, h*lk)
			k.RPEBias(dst, ident, 1, lk, qOffset)
			return dst[:lk] // head 0
		})
		return k
	}
	panic("cudahost: Bias on a " + s.Encoding + " spec")
}

// posCall checks a position-form call as the generated Go API does (heads
// within [0, HEADS), buf of nh·len(qpos)·len(kpos), no negative qpos:
// the device does not check qpos) and runs launcher name with the
// positions as the int arrays P0, P1 and table (rpe_bias) as F1.
func (l *Lib) posCall(name string, op int32, buf, table []float32, qpos, kpos []int32, h0, nh int, f float32) {
	if h0 < 0 || nh < 0 || h0 > l.spec.Heads-nh {
		panic(fmt.Sprintf("cudahost: %s: heads [%d, %d+%d) outside [0, %d)", name, h0, h0, nh, l.spec.Heads))
	}
	checkLen(name, "scores", len(buf), nh*len(qpos)*len(kpos))
	for i, q := range qpos {
		if q < 0 {
			panic(fmt.Sprintf("cudahost: %s: qpos[%d] = %d is negative", name, i, q))
		}
	}
	if len(buf) == 0 {
		return
	}
	fa := [][]float32{buf}
	if table != nil {
		fa = append(fa, table)
	}
	l.mustCall(name, op, []int64{int64(h0), int64(nh)}, f, fa, [][]int32{qpos, kpos})
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

// relDims panics, as the generated Go API's checkDims does, on a negative
// lq, lk or qOffset, and on one the launchers' int arguments cannot hold.
func relDims(fn string, lq, lk, qOffset int) {
	if lq < 0 || lk < 0 || qOffset < 0 {
		panic(fmt.Sprintf("cudahost: %s: negative argument: lq = %d, lk = %d, qOffset = %d", fn, lq, lk, qOffset))
	}
	if lq > math.MaxInt32 || lk > math.MaxInt32 || qOffset > math.MaxInt32 {
		panic(fmt.Sprintf("cudahost: %s: lq = %d, lk = %d, qOffset = %d: beyond the launchers' int range", fn, lq, lk, qOffset))
	}
}

// input returns an input array to send to the driver, which writes every
// float array back: f32 inputs go as they are, so a kernel that modified
// one is caught by the harness's untouched-input check; f16/bf16 inputs are
// copied, since their storage round trip would round the caller's values.
func (l *Lib) input(x []float32) []float32 {
	if l.spec.DType == "f32" {
		return x
	}
	return append([]float32(nil), x...)
}

// RPEFull returns the CUDA launchers of an rpe_full spec (Shaw et al. 2018)
// as the harness's kernels: posenc_<name>_scores and posenc_<name>_output
// with the Go API's arguments, lengths checked (mismatches panic) as the
// generated Go package does.
func (l *Lib) RPEFull() verify.RPEFullKernels {
	s := l.spec
	if s.Encoding != spec.RPEFull {
		panic("cudahost: RPEFull on a " + s.Encoding + " spec")
	}
	d, rows := s.HeadDim, 2*s.RMax-1
	dims := func(lq, lk, qOffset int) []int64 { return []int64{int64(lq), int64(lk), int64(qOffset)} }
	return verify.RPEFullKernels{
		Scores: func(dst, q, k, aK []float32, lq, lk, qOffset int) {
			relDims("Scores", lq, lk, qOffset)
			checkLen("Scores", "dst", len(dst), lq*lk)
			checkLen("Scores", "q", len(q), lq*d)
			checkLen("Scores", "k", len(k), lk*d)
			checkLen("Scores", "aK", len(aK), rows*d)
			l.mustCall("scores", opScores, dims(lq, lk, qOffset), 0, [][]float32{dst, l.input(q), l.input(k), l.input(aK)}, nil)
		},
		Output: func(dst, weights, v, aV []float32, lq, lk, qOffset int) {
			relDims("Output", lq, lk, qOffset)
			checkLen("Output", "dst", len(dst), lq*d)
			checkLen("Output", "weights", len(weights), lq*lk)
			checkLen("Output", "v", len(v), lk*d)
			checkLen("Output", "aV", len(aV), rows*d)
			l.mustCall("output", opOutput, dims(lq, lk, qOffset), 0, [][]float32{dst, l.input(weights), l.input(v), l.input(aV)}, nil)
		},
	}
}

// XL returns the CUDA launchers of an xl spec (Dai et al. 2019) as the
// harness's kernels: posenc_<name>_scores and posenc_<name>_relative with
// the Go API's arguments, lengths checked as the generated Go package does
// (r has lq+lk−1 rows, none when lq or lk is 0).
func (l *Lib) XL() verify.XLKernels {
	s := l.spec
	if s.Encoding != spec.XL {
		panic("cudahost: XL on a " + s.Encoding + " spec")
	}
	d := s.HeadDim
	return verify.XLKernels{
		Scores: func(dst, q, k, r, u, v []float32, lq, lk, qOffset int) {
			relDims("Scores", lq, lk, qOffset)
			rows := 0
			if lq > 0 && lk > 0 {
				rows = lq + lk - 1
			}
			checkLen("Scores", "dst", len(dst), lq*lk)
			checkLen("Scores", "q", len(q), lq*d)
			checkLen("Scores", "k", len(k), lk*d)
			checkLen("Scores", "r", len(r), rows*d)
			checkLen("Scores", "u", len(u), d)
			checkLen("Scores", "v", len(v), d)
			l.mustCall("scores", opScores, []int64{int64(lq), int64(lk), int64(qOffset)}, 0,
				[][]float32{dst, l.input(q), l.input(k), l.input(r), l.input(u), l.input(v)}, nil)
		},
		Relative: func(dst []float32, n int) {
			if n < 0 || n > math.MaxInt32 {
				panic(fmt.Sprintf("cudahost: Relative: n = %d out of range", n))
			}
			checkLen("Relative", "dst", len(dst), n*d)
			l.mustCall("relative", opRelative, []int64{int64(n)}, 0, [][]float32{dst}, nil)
		},
	}
}

// Verify runs the harness of package verify on the library's kernels for
// its spec (RoPE, bias, absolute encoding, rpe_full or xl; plus
// RunAttention where the .cu has the attention form) and returns the
// report; with f16 or bf16 storage it runs the
// storage-rounded check of storage.go instead. It returns the
// report with Target set to the library's target (cuda-host, cuda-gpu or
// cuda-gpu-emulated). The harness's bounds are float32 ones, so a spec
// with f16 or bf16 storage gets VerifyStorage instead. A panic outside the
// harness's own recovery (a dead driver, a failed launch) becomes a failed
// report.
func (l *Lib) Verify() (r *verify.Report) {
	defer func() {
		if p := recover(); p != nil {
			r = &verify.Report{Spec: l.spec.Name, Cases: 1, MaxRatio: math.Inf(1), Worst: "driver",
				Failures: []string{fmt.Sprint(p)}}
		}
		r.Target = l.target
	}()
	if l.spec.DType != "f32" {
		return l.VerifyStorage()
	}
	switch l.spec.Encoding {
	case spec.RoPE:
		r = verify.RunRoPE(l.spec, l.RoPE())
	case spec.ALiBi, spec.RPEBias:
		r = verify.RunBias(l.spec, l.Bias())
	case spec.RPEFull:
		r = verify.RunRPEFull(l.spec, l.RPEFull())
	case spec.XL:
		r = verify.RunXL(l.spec, l.XL())
	default:
		r = verify.RunAbsolute(l.spec, l.Absolute())
	}
	if HasAttention(l.spec) {
		// The attention form (attention.go), in the same report as the
		// Go packages' TestVariants merge it.
		r = verify.Merge(r, verify.RunAttention(l.spec, l.Attention()))
	}
	return r
}

// checkLen panics, in the gonum/blas style of the generated Go API, when
// an argument's length is not the one the call needs.
func checkLen(fn, arg string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("cudahost: %s: len(%s) = %d, want %d", fn, arg, got, want))
	}
}
