package cudahost

import (
	"errors"
	"fmt"
	"math"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// Driver operations of the attention form (templates/attention.cu.tmpl):
// F0 out, F1 q, F2 k, F3 v, then the term's operands: F4 table (rpe_bias),
// F4 aK and F5 aV (rpe_full), F4 rel, F5 u_bias, F6 v_bias (xl, with
// n_rel in I[6]); P0 qpos, P1 kpos; I[0] qheads, I[1] kvheads, I[2]
// max_pos (rope with a run-time switch), I[3] causal, I[4] window; F the
// scale. The paged form: F2 and F3 the caches;
// P0 qpos, P1 qStart, P2 slots, P3 kpos, P4 kStart (nseq = NP1 − 1); I[5]
// cache_slots. M-RoPE's ids follow the int arrays (so that a request
// leaving them out passes null): P2 qids and P3 kids (rotated: P2 qids),
// paged P5 qids and P6 kids.
const (
	opAttention        = 26
	opAttentionRotated = 27
	opAttentionPaged   = 28
)

// HasAttention reports whether the generated .cu of s has the attention
// launchers: rope over any storage (f32, f16, bf16), M-RoPE included (its
// launchers take qids and kids after v); alibi and rpe_bias with head_dim
// over any storage; rpe_full and xl with f32 storage (Shaw et al.'s aK and
// aV, Transformer-XL's rel, u and v: the launchers take them after v) whose
// head_dim fits the kernel's tiles (cuda.HasAttentionTiles: up to about
// 1000). These are the specs whose Go package has the attention form
// (a float32 one for 16-bit alibi and rpe_bias: their Go API is float32),
// less the widest heads.
func HasAttention(s *spec.Spec) bool {
	switch s.Encoding {
	case spec.RoPE:
		return true
	case spec.ALiBi, spec.RPEBias:
		return s.HeadDim > 0
	case spec.RPEFull, spec.XL:
		return (s.DType == "" || s.DType == "f32") && cuda.HasAttentionTiles(string(s.Encoding), s.HeadDim)
	}
	return false
}

// attentionOps returns the driver's cases of the attention launchers of s
// (none without them).
func attentionOps(s *spec.Spec) []string {
	if !HasAttention(s) {
		return nil
	}
	if s.IsMRoPE() {
		return mropeAttentionOps(s)
	}
	n := s.Name
	tab, seq := "", ""
	switch s.Encoding {
	case spec.RPEBias:
		tab = " F4,"
	case spec.RPEFull:
		tab = " F4, F5,"
	case spec.XL:
		tab = " F4, F5, F6, (long long)I[6],"
	}
	if attnSeqArg(s) {
		seq = " (int)I[2],"
	}
	args := fmt.Sprintf("(F0, F1, F2, F3,%s P0, P1, NP0, NP1, (int)I[0], (int)I[1], F, (int)I[3], (int)I[4],%s 0);", tab, seq)
	ops := []string{fmt.Sprintf("case %d: return posenc_%s_attention%s", opAttention, n, args)}
	if s.Encoding == spec.RoPE {
		ops = append(ops, fmt.Sprintf("case %d: return posenc_%s_attention_rotated%s", opAttentionRotated, n, args))
	}
	ops = append(ops, fmt.Sprintf("case %d: return posenc_%s_attention_paged(F0, F1, F2, F3,%s P0, P1, P2, P3, P4, NP0, NP3, NP1 - 1, "+
		"(long long)I[5], (int)I[0], (int)I[1], F, (int)I[3], (int)I[4],%s 0);", opAttentionPaged, n, tab, seq))
	return ops
}

// attnSeqArg reports whether the rope launchers take max_pos (dynamic NTK
// and LongRoPE: frequencies chosen at run time).
func attnSeqArg(s *spec.Spec) bool {
	sc := s.Scaling
	return s.Encoding == spec.RoPE && sc != nil && (sc.Type == spec.ScaleDynamic || sc.Type == spec.ScaleLongRoPE)
}

// attnMaxPos is the max_pos of a rope attention call: the largest
// non-negative position of qpos and kpos, −1 when there is none (seq_len
// − 1 of verify.AttentionRef's frequencies).
func attnMaxPos(qpos, kpos []int32) int64 {
	m := int64(-1)
	for _, ps := range [][]int32{qpos, kpos} {
		for _, p := range ps {
			m = max(m, int64(p))
		}
	}
	return m
}

// Attention returns the CUDA attention launchers of a rope, alibi, rpe_bias,
// rpe_full or xl spec as the harness's kernels (verify.AttentionKernels;
// rpe_full's table split into aK and aV, xl's into uBias, vBias and rel as
// the generated Go adapters split them):
// posenc_<name>_attention, posenc_<name>_attention_paged (its cache holds
// unrotated k for rope: PagedKRotated false) and for rope
// posenc_<name>_attention_rotated; an M-RoPE spec's three launchers fill
// AttentionMRoPE, AttentionRotatedMRoPE and AttentionPagedMRoPE instead
// (attention_mrope.go). The arguments are checked as the
// generated Go API checks them, panicking with the argument's name before
// anything is sent (the paged launcher does not read its device-side
// starts and slots: that check is the caller's, here the adapter's).
func (l *Lib) Attention() verify.AttentionKernels {
	s := l.spec
	if !HasAttention(s) {
		panic("cudahost: spec " + s.Name + " has no CUDA attention form")
	}
	if s.IsMRoPE() {
		return l.attentionMRoPE()
	}
	call := func(fn string, op int32, out, q, k, v, table []float32, qpos, kpos []int32, o verify.AttentionOptions) {
		l.attnCheck(fn, out, q, k, v, table, len(qpos), len(kpos), len(kpos), o)
		l.attnSend(fn, op, out, q, k, v, table, qpos, kpos, o, nil, [][]int32{qpos, kpos})
	}
	k := verify.AttentionKernels{
		HeadDim: s.HeadDim,
		Attention: func(out, q, k, v, table []float32, qpos, kpos []int32, o verify.AttentionOptions) {
			call("attention", opAttention, out, q, k, v, table, qpos, kpos, o)
		},
	}
	if s.Encoding == spec.RoPE {
		k.AttentionRotated = func(out, q, kk, v []float32, qpos, kpos []int32, o verify.AttentionOptions) {
			call("attention_rotated", opAttentionRotated, out, q, kk, v, nil, qpos, kpos, o)
		}
	}
	k.AttentionPaged = func(out, q, kc, vc, table []float32, qpos, qStart, slots, kpos, kStart []int32, o verify.AttentionOptions) {
		const fn = "attention_paged"
		nslots := l.attnCacheSlots(fn, kc, vc, o)
		l.attnCheck(fn, out, q, kc, vc, table, len(qpos), len(kpos), nslots, o)
		checkPaged(fn, qStart, kStart, slots, len(qpos), len(kpos), nslots)
		l.attnSend(fn, opAttentionPaged, out, q, kc, vc, table, qpos, kpos, o, []int64{int64(nslots)}, [][]int32{qpos, qStart, slots, kpos, kStart})
	}
	return k
}

// attnCheck panics on bad options or lengths of a call of fn with lq
// queries and lk keys (krows rows of k and v: lk, or the cache's slots
// when paged).
func (l *Lib) attnCheck(fn string, out, q, k, v, table []float32, lq, lk, krows int, o verify.AttentionOptions) {
	s, hd := l.spec, l.spec.HeadDim
	switch {
	case o.KVHeads < 1:
		panic(fmt.Sprintf("cudahost: %s: KVHeads %d < 1", fn, o.KVHeads))
	case o.QHeads < 1 || o.QHeads%o.KVHeads != 0:
		panic(fmt.Sprintf("cudahost: %s: QHeads %d is not a positive multiple of KVHeads %d", fn, o.QHeads, o.KVHeads))
	case (s.Encoding == spec.ALiBi || s.Encoding == spec.RPEBias) && o.QHeads != s.Heads:
		panic(fmt.Sprintf("cudahost: %s: QHeads %d, the spec has %d Heads", fn, o.QHeads, s.Heads))
	case lq > math.MaxInt32 || lk > math.MaxInt32 || o.QHeads > math.MaxInt32:
		panic(fmt.Sprintf("cudahost: %s: len(qpos) = %d, len(kpos) = %d, QHeads = %d: beyond the launcher's int range", fn, lq, lk, o.QHeads))
	}
	checkLen(fn, "out", len(out), lq*o.QHeads*hd)
	checkLen(fn, "q", len(q), lq*o.QHeads*hd)
	kn, vn := "k", "v"
	if krows != lk {
		kn, vn = "kCache", "vCache"
	}
	checkLen(fn, kn, len(k), krows*o.KVHeads*hd)
	checkLen(fn, vn, len(v), krows*o.KVHeads*hd)
	switch s.Encoding {
	case spec.RPEBias:
		checkLen(fn, "table", len(table), s.Heads*s.NumBuckets())
	case spec.RPEFull:
		aK, aV := rpeFullSplit(table)
		if rows := 2*s.RMax - 1; len(aK) != rows*hd || len(aV) != rows*hd {
			panic(fmt.Sprintf("cudahost: %s: len(aK) = %d, len(aV) = %d, want Buckets·HeadDim = %d·%d", fn, len(aK), len(aV), rows, hd))
		}
	case spec.XL:
		// As the Go API's attnCheckRel: uBias and vBias first, then rel.
		rel, ub, vb := xlSplit(table, o.QHeads*hd)
		checkLen(fn, "uBias", len(ub), o.QHeads*hd)
		checkLen(fn, "vBias", len(vb), o.QHeads*hd)
		if len(rel) == 0 || len(rel)%(o.KVHeads*hd) != 0 {
			panic(fmt.Sprintf("cudahost: %s: len(rel) = %d, want a positive multiple of KVHeads·HeadDim = %d·%d", fn, len(rel), o.KVHeads, hd))
		}
	}
}

// attnCacheSlots returns the rows of a paged call's caches, panicking
// unless kCache and vCache are equal multiples of KVHeads·HeadDim (0 for
// KVHeads < 1, which attnCheck refuses).
func (l *Lib) attnCacheSlots(fn string, kc, vc []float32, o verify.AttentionOptions) int {
	hd := l.spec.HeadDim
	if o.KVHeads >= 1 && hd > 0 && (len(kc)%(o.KVHeads*hd) != 0 || len(vc) != len(kc)) {
		panic(fmt.Sprintf("cudahost: %s: len(kCache) = %d, len(vCache) = %d, want equal multiples of KVHeads·HeadDim = %d", fn, len(kc), len(vc), o.KVHeads*hd))
	}
	if o.KVHeads < 1 {
		return 0
	}
	return len(kc) / (o.KVHeads * hd)
}

// attnSend runs op: ints after those of the options (I[5]…), int arrays
// ia (P0 qpos and the last kpos-long array, for max_pos).
func (l *Lib) attnSend(fn string, op int32, out, q, k, v, table []float32, qpos, kpos []int32, o verify.AttentionOptions, extra []int64, ia [][]int32) {
	s, hd := l.spec, l.spec.HeadDim
	fa := [][]float32{out, l.input(q), l.input(k), l.input(v)}
	nRel := int64(0)
	// The driver writes every float array back: the term's operands are
	// copies.
	switch s.Encoding {
	case spec.RPEBias:
		fa = append(fa, append([]float32(nil), table...))
	case spec.RPEFull:
		aK, aV := rpeFullSplit(table)
		fa = append(fa, append([]float32(nil), aK...), append([]float32(nil), aV...))
	case spec.XL:
		rel, ub, vb := xlSplit(table, o.QHeads*hd)
		fa = append(fa, append([]float32(nil), rel...), append([]float32(nil), ub...), append([]float32(nil), vb...))
		nRel = int64(len(rel) / (o.KVHeads * hd))
	}
	if len(out) == 0 {
		return
	}
	// A window beyond int32 masks nothing (every distance of int32
	// positions is below 2^31): it is 0 for the launcher.
	window := o.Window
	if window < 0 || window > math.MaxInt32 {
		window = 0
	}
	causal := int64(0)
	if o.Causal {
		causal = 1
	}
	ints := append([]int64{int64(o.QHeads), int64(o.KVHeads), attnMaxPos(qpos, kpos), causal, int64(window)}, extra...)
	if s.Encoding == spec.XL {
		ints = append(ints, make([]int64, 6-len(ints))...) // I[5]: cache_slots when paged
		ints = append(ints, nRel)                          // I[6]
	}
	l.mustCall(fn, op, ints, o.Scale, fa, ia)
}

// rpeFullSplit returns verify's packed rpe_full table, aK ‖ aV, as the
// launchers' operands (the halves, as the generated Go adapters split it).
func rpeFullSplit(table []float32) (aK, aV []float32) {
	return table[:len(table)/2], table[len(table)/2:]
}

// xlSplit returns verify's packed xl table, uBias ‖ vBias ‖ rel with n
// (QHeads·HeadDim) floats for each bias, as the launchers' operands; a
// short table gives short operands (the generated adapters' attnXLSplit).
func xlSplit(table []float32, n int) (rel, uBias, vBias []float32) {
	n = min(len(table), n)
	m := min(len(table), 2*n)
	return table[m:], table[:n], table[n:m]
}

// checkPaged panics, naming the argument, unless the paged call's starts
// and slots are as the contract asks: qStart and kStart of one length ≥ 1,
// from 0, never decreasing, ending at lq and lk; len(slots) = lk; every
// slot in [0, nslots). The launcher cannot check them (device memory).
func checkPaged(fn string, qStart, kStart, slots []int32, lq, lk, nslots int) {
	if len(slots) != lk {
		panic(fmt.Sprintf("cudahost: %s: len(slots) = %d, want len(kpos) = %d", fn, len(slots), lk))
	}
	if len(qStart) != len(kStart) || len(qStart) < 1 || len(qStart)-1 > math.MaxInt32 {
		panic(fmt.Sprintf("cudahost: %s: len(qStart) = %d, len(kStart) = %d, want equal, from 1 to 2^31", fn, len(qStart), len(kStart)))
	}
	for _, st := range []struct {
		name string
		a    []int32
		n    int
	}{{"qStart", qStart, lq}, {"kStart", kStart, lk}} {
		if st.a[0] != 0 || int(st.a[len(st.a)-1]) != st.n {
			panic(fmt.Sprintf("cudahost: %s: %s[0] = %d, %s[last] = %d, want 0 and %d", fn, st.name, st.a[0], st.name, st.a[len(st.a)-1], st.n))
		}
		for i := 1; i < len(st.a); i++ {
			if st.a[i] < st.a[i-1] {
				panic(fmt.Sprintf("cudahost: %s: %s[%d] = %d < %s[%d] = %d", fn, st.name, i, st.a[i], st.name, i-1, st.a[i-1]))
			}
		}
	}
	for j, sl := range slots {
		if sl < 0 || int(sl) >= nslots {
			panic(fmt.Sprintf("cudahost: %s: slots[%d] = %d, want a slot in [0, %d)", fn, j, sl, nslots))
		}
	}
}

// TensorCoresUsed reports whether a tensor-core mma (the bf16 attention
// kernel's) ran since the previous TensorCoresUsed, which lets a test see
// which kernel a launcher chose. Only host-emulation builds can answer:
// on a GPU it returns an error.
func (l *Lib) TensorCoresUsed() (bool, error) {
	if l.target == TargetGPU {
		return false, errors.New("cudahost: TensorCoresUsed needs a host-emulation build")
	}
	flag := []float32{-1}
	st, err := l.call(opHostMMAs, nil, 0, [][]float32{flag}, nil)
	if err != nil {
		return false, err
	}
	if st != 0 || (flag[0] != 0 && flag[0] != 1) {
		return false, fmt.Errorf("cudahost: the driver's mma query answered status %d, flag %g", st, flag[0])
	}
	return flag[0] == 1, nil
}
