package cudahost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// BenchCase is one launcher call to time, with its inputs.
//
// Bytes moved: a kernel that updates S bytes of a tensor in place reads and
// writes them, 2·S bytes; a device-to-device copy of S bytes also reads S
// and writes S. Both GB/s figures count 2·S (Tensor is S), so their ratio is
// the ratio of the times. S counts only what the kernel touches: with a
// partial rotary (rotary_dim < head_dim) the rotated dims of each head, not
// the whole tensor. Positions, learned tables and other parameters are not
// counted.
type BenchCase struct {
	// Kernel is the launcher's function name: apply, apply_qk, softmax, add.
	Kernel string
	// Shape describes the arguments, e.g. "tokens=4096 heads=32 head_dim=128".
	Shape string
	// Tokens is the token count of RoPE and absolute cases, the query
	// count of softmax ones.
	Tokens int
	// Tensor is S, the bytes the kernel updates in place (in the storage
	// type; RoPE: rotary_dim of every head_dim; out of place, the bytes
	// written, as many as are read); the device-to-device copy copies S
	// bytes.
	Tensor int64
	// Cold is the number of copies of the arrays that the launches (and
	// the reference copies) rotate over so that each finds its data out
	// of L2; 0 or 1 is cache-hot (the same arrays every launch).
	Cold int
	// ReadOnly marks a kernel that reads its Tensor bytes and writes
	// little (attention: the keys and values): its GB/s counts Tensor once,
	// the copy's still 2·Tensor (read + write).
	ReadOnly bool
	// Flops is the floating-point operations of one launch (attention
	// prefill: 4·heads·head_dim·(unmasked query-key pairs)), 0 where
	// bandwidth is the measure.
	Flops int64

	spec string // the spec's name
	op   int32
	ints []int64
	f    float32
	fa   [][]float32
	ia   [][]int32
	// inputs, when set, makes fa and ia at Bench time (the attention
	// cases' gigabytes of K+V are not held by a listed case).
	inputs func() ([][]float32, [][]int32)
}

// BenchResult is a timed BenchCase: Reps launches and Reps device-to-device
// copies of Tensor bytes, in one process on one device.
type BenchResult struct {
	BenchCase
	// Spec is the spec's name; Target and Device say where it ran
	// (Lib.Target, Lib.Device).
	Spec, Target, Device string
	// Reps is the number of timed launches, and of timed copies.
	Reps int
	// KernelMs and CopyMs are the elapsed times of all Reps launches and
	// of all Reps copies, in milliseconds (cudaEvents).
	KernelMs, CopyMs float64
}

// Bytes is the bytes one copy moves: 2·Tensor, read and written.
func (r BenchResult) Bytes() int64 { return 2 * r.Tensor }

// KernelBytes is the bytes one launch moves: 2·Tensor for a kernel that
// updates Tensor bytes, Tensor for a ReadOnly one.
func (r BenchResult) KernelBytes() int64 {
	if r.ReadOnly {
		return r.Tensor
	}
	return r.Bytes()
}

// KernelGBs is the kernel's bandwidth in GB/s (10^9 bytes per second).
func (r BenchResult) KernelGBs() float64 { return gbs(r.KernelBytes(), r.Reps, r.KernelMs) }

// TFLOPs is the kernel's rate in 10^12 floating-point operations per
// second (0 for a case without Flops).
func (r BenchResult) TFLOPs() float64 {
	if r.Flops == 0 || r.KernelMs <= 0 {
		return 0
	}
	return float64(r.Flops) * float64(r.Reps) / (r.KernelMs * 1e-3) / 1e12
}

// CopyGBs is the device-to-device copy's bandwidth in GB/s.
func (r BenchResult) CopyGBs() float64 { return gbs(r.Bytes(), r.Reps, r.CopyMs) }

// Ratio is KernelGBs / CopyGBs (1 = as fast as a copy of the same bytes).
func (r BenchResult) Ratio() float64 {
	if r.KernelMs <= 0 {
		return math.Inf(1)
	}
	return r.CopyMs / r.KernelMs
}

func gbs(bytes int64, reps int, ms float64) float64 {
	if ms <= 0 {
		return math.Inf(1)
	}
	return float64(bytes) * float64(reps) / (ms * 1e-3) / 1e9
}

// Bench geometry, as the generated packages' CPU benchmarks: 32 heads per
// token; 16 tokens (launch-bound) and 4096 tokens (64 MiB of f32 at
// head_dim 128, past any GPU's L2 cache); scores of Heads×512×512.
const (
	benchHeads     = 32
	benchSmall     = 16
	benchBig       = 4096
	benchSeq       = 512
	benchTableRows = 4096
)

// benchDecodeKeys are the key counts of the decode softmax cases (lq = 1).
var benchDecodeKeys = []int{512, 4096, 32768}

// BenchCases returns the bench cases of spec s: for RoPE those of
// ropeBenchCases, the fused softmax of alibi and rpe_bias on
// [heads][512][512] scores and in decode (lq = 1, lk in benchDecodeKeys),
// and the absolute encodings' add at 16 and 4096 tokens (the attention
// form's cases are AttentionBenchCases). short keeps only
// the cases of at most 16 tokens (16 queries): launch-bound sizes, and the
// only ones host emulation runs in seconds.
func BenchCases(s *spec.Spec, short bool) []BenchCase {
	r := rand.New(rand.NewPCG(1, 2))
	randn := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	elem := storeBytes(s)
	positions := func(n, limit int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32(i % limit)
		}
		return p
	}
	tokens := []int{benchSmall}
	if !short {
		tokens = append(tokens, benchBig)
	}
	var cs []BenchCase
	switch s.Encoding {
	case spec.RoPE:
		cs = append(cs, ropeBenchCases(s, short, elem, randn, positions)...)
	case spec.ALiBi, spec.RPEBias:
		lq := benchSeq
		if short {
			lq = benchSmall
		}
		scores := randn(s.Heads * lq * benchSeq)
		fa := [][]float32{scores}
		if s.Encoding == spec.RPEBias {
			fa = append(fa, randn(s.Heads*s.NumBuckets()))
		}
		cs = append(cs, BenchCase{
			Kernel: "softmax", Tokens: lq, Shape: fmt.Sprintf("heads=%d lq=%d lk=%d", s.Heads, lq, benchSeq),
			Tensor: int64(len(scores)) * elem,
			op:     opSoftmax, ints: []int64{int64(lq), benchSeq, 0}, f: float32(1 / math.Sqrt(128)), fa: fa,
		})
		// Decode (not short): one query at the last of lk keys, every key
		// valid; 4096 and 32768 keys take the split softmax.
		for _, lk := range benchDecodeKeys {
			if short {
				break
			}
			dec := [][]float32{randn(s.Heads * lk)}
			if s.Encoding == spec.RPEBias {
				dec = append(dec, fa[1])
			}
			cs = append(cs, BenchCase{
				Kernel: "softmax", Tokens: 1, Shape: fmt.Sprintf("heads=%d lq=1 lk=%d q_offset=%d", s.Heads, lk, lk-1),
				Tensor: int64(s.Heads*lk) * elem,
				op:     opSoftmax, ints: []int64{1, int64(lk), int64(lk - 1)}, f: float32(1 / math.Sqrt(128)), fa: dec,
			})
		}
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned, spec.Mixture:
		d := s.DModel
		for _, n := range tokens {
			x := randn(n * d)
			c := BenchCase{
				Kernel: "add", Tokens: n, Shape: fmt.Sprintf("tokens=%d d_model=%d", n, d),
				Tensor: int64(len(x)) * elem,
				op:     opAdd, fa: [][]float32{x}, ia: [][]int32{positions(n, benchTableRows)},
			}
			if s.Encoding == spec.Learned || s.Encoding == spec.Mixture {
				c.ints = []int64{benchTableRows}
				c.fa = append(c.fa, randn(benchTableRows*d))
				c.f = 0.5
			}
			cs = append(cs, c)
		}
	}
	for i := range cs {
		cs[i].spec = s.Name
	}
	return cs
}

// storeBytes is the bytes of one element of s's storage type: 2 for f16
// and bf16, else 4.
func storeBytes(s *spec.Spec) int64 {
	if s.DType == "f16" || s.DType == "bf16" {
		return 2
	}
	return 4
}

// Bench times c on the library's device: one warm-up launch, then reps
// launches between two cudaEvents, then (after a warm-up copy) reps
// cudaMemcpy device-to-device copies of c.Tensor bytes, in the same driver
// process. The inputs are copied to the device first and not timed; c's
// arrays are not modified.
func (l *Lib) Bench(c BenchCase, reps int) (BenchResult, error) {
	if reps < 1 {
		return BenchResult{}, fmt.Errorf("cudahost: Bench: reps = %d, want ≥ 1", reps)
	}
	if c.Kernel == "" {
		return BenchResult{}, fmt.Errorf("cudahost: Bench: a BenchCase must come from BenchCases")
	}
	if c.spec != l.spec.Name {
		return BenchResult{}, fmt.Errorf("cudahost: Bench: a case of spec %s on a library of %s", c.spec, l.spec.Name)
	}
	ints := c.ints
	if c.Cold > 1 {
		// I[6] is the driver's rotation count.
		ints = make([]int64, 7)
		copy(ints, c.ints)
		ints[6] = int64(c.Cold)
	}
	fa, ia := c.fa, c.ia
	if c.inputs != nil {
		fa, ia = c.inputs()
	}
	status, kms, cms, err := l.bench(c.op, ints, c.f, int64(reps), c.Tensor, fa, ia)
	if err != nil {
		return BenchResult{}, err
	}
	if status != 0 {
		return BenchResult{}, fmt.Errorf("cudahost: bench posenc_%s_%s (%s): %s", l.spec.Name, c.Kernel, c.Shape, statusText(status))
	}
	return BenchResult{BenchCase: c, Spec: l.spec.Name, Target: l.target, Device: l.device, Reps: reps, KernelMs: kms, CopyMs: cms}, nil
}

// coldSpan is the bytes a cache-cold case rotates over: three times the
// 50 MiB L2 of an H100 (the largest L2 of current GPUs is of that order).
const coldSpan = 3 * 50 << 20

// coldCopies returns how many copies of arrays of bytes bytes span
// coldSpan (at least 2, at most 64).
func coldCopies(bytes int64) int {
	n := int((coldSpan + bytes - 1) / bytes)
	return min(max(n, 2), 64)
}

// ropeBenchCases returns the RoPE cases: apply and apply_qk (q and k of
// 32 heads each) at 16 and 4096 tokens of 32 heads, cache-hot, as before;
// decode (1 token, apply_qk with 32 query and 8 key heads, the GQA shape
// of Llama 3 8B); apply_qk GQA at 1024 and 4096 tokens, hot and cold; and
// the engine forms at 16 tokens and, cold, at 4096: the packed QKV row
// (32 q, 8 k, 8 v heads), apply_to (32 heads, out of place), the KV-cache
// append apply_to_slots (8 heads into a cache of 2·tokens slots, pages of
// 16 slots in shuffled order), shift (8 heads) and head-major apply
// (32 heads). The bytes are those of the rotated dims only (rotary_dim of
// each head_dim); the v heads of the packed row are not counted.
func ropeBenchCases(s *spec.Spec, short bool, elem int64, randn func(int) []float32, positions func(n, limit int) []int32) []BenchCase {
	hd := s.HeadDim
	touched := func(n int) int64 { return int64(n) * elem * int64(s.RotaryDim) / int64(hd) }
	alloc := func(fa [][]float32) int64 {
		var b int64
		for _, a := range fa {
			b += int64(len(a)) * elem
		}
		return b
	}
	var cs []BenchCase
	add := func(c BenchCase, cold bool) {
		if cold {
			c.Cold = coldCopies(alloc(c.fa))
			c.Shape += fmt.Sprintf(" cold(%d buffers)", c.Cold)
		}
		cs = append(cs, c)
	}
	const gq, gk = 32, 8 // GQA: Llama 3 8B's heads
	tokens := []int{benchSmall}
	if !short {
		tokens = append(tokens, benchBig)
	}
	for _, n := range tokens {
		pos := positions(n, n)
		mp := maxPos(pos)
		x := randn(n * benchHeads * hd)
		add(BenchCase{
			Kernel: "apply", Tokens: n, Shape: fmt.Sprintf("tokens=%d heads=%d head_dim=%d", n, benchHeads, hd),
			Tensor: touched(len(x)),
			op:     opApply, ints: []int64{benchHeads, 0, mp}, fa: [][]float32{x}, ia: [][]int32{pos},
		}, false)
		q, k := randn(n*benchHeads*hd), randn(n*benchHeads*hd)
		add(BenchCase{
			Kernel: "apply_qk", Tokens: n, Shape: fmt.Sprintf("tokens=%d q_heads=%d k_heads=%d head_dim=%d", n, benchHeads, benchHeads, hd),
			Tensor: touched(len(q) + len(k)),
			op:     opApplyQK, ints: []int64{benchHeads, benchHeads, mp}, fa: [][]float32{q, k}, ia: [][]int32{pos},
		}, false)
	}
	// GQA apply_qk: decode (one token at position 4095), prefill 1024 and 4096.
	gqa := func(n int, cold bool) {
		pos := positions(n, n)
		if n == 1 {
			pos[0] = 4095
		}
		q, k := randn(n*gq*hd), randn(n*gk*hd)
		add(BenchCase{
			Kernel: "apply_qk", Tokens: n, Shape: fmt.Sprintf("tokens=%d q_heads=%d k_heads=%d head_dim=%d", n, gq, gk, hd),
			Tensor: touched(len(q) + len(k)),
			op:     opApplyQK, ints: []int64{gq, gk, maxPos(pos)}, fa: [][]float32{q, k}, ia: [][]int32{pos},
		}, cold)
	}
	gqa(1, false)
	if !short {
		for _, n := range []int{1024, benchBig} {
			gqa(n, false)
			gqa(n, true)
		}
	}
	forms := func(n int, cold bool) {
		pos := positions(n, n)
		mp := maxPos(pos)
		st := (gq + 2*gk) * hd
		qkv := randn(n * st)
		add(BenchCase{
			Kernel: "apply_qk_strided", Tokens: n, Shape: fmt.Sprintf("tokens=%d q_heads=%d k_heads=%d v_heads=%d head_dim=%d", n, gq, gk, gk, hd),
			Tensor: touched(n * (gq + gk) * hd),
			op:     opApplyQKStrided, ints: []int64{gq, gk, mp, int64(st)}, fa: [][]float32{qkv}, ia: [][]int32{pos},
		}, cold)
		src, dst := randn(n*benchHeads*hd), make([]float32, n*benchHeads*hd)
		add(BenchCase{
			Kernel: "apply_to", Tokens: n, Shape: fmt.Sprintf("tokens=%d heads=%d head_dim=%d", n, benchHeads, hd),
			Tensor: int64(len(dst)) * elem, // dst written whole (dims beyond rotary_dim copied)
			op:     opApplyTo, ints: []int64{benchHeads, 0, mp}, fa: [][]float32{dst, src}, ia: [][]int32{pos},
		}, cold)
		// KV-cache append: pages of 16 slots in a shuffled order.
		nSlots := 2 * n
		pages := nSlots / 16
		r := rand.New(rand.NewPCG(3, 4))
		perm := r.Perm(max(pages, 1))
		slots := make([]int32, n)
		for t := range slots {
			slots[t] = int32(perm[t/16%len(perm)]*16 + t%16)
		}
		ksrc, cache := randn(n*gk*hd), randn(nSlots*gk*hd)
		add(BenchCase{
			Kernel: "apply_to_slots", Tokens: n, Shape: fmt.Sprintf("tokens=%d heads=%d head_dim=%d cache_slots=%d pages=16", n, gk, hd, nSlots),
			Tensor: int64(len(ksrc)) * elem,
			op:     opApplyToSlots, ints: []int64{gk, 0, mp, int64(nSlots)}, fa: [][]float32{cache, ksrc}, ia: [][]int32{pos, slots},
		}, cold)
		kc := randn(n * gk * hd)
		add(BenchCase{
			Kernel: "shift", Tokens: n, Shape: fmt.Sprintf("tokens=%d heads=%d head_dim=%d delta=-512", n, gk, hd),
			Tensor: touched(len(kc)),
			op:     opShift, ints: []int64{gk, 0, 0, -512, int64(n)}, fa: [][]float32{kc},
		}, cold)
		hm := randn(n * benchHeads * hd)
		add(BenchCase{
			Kernel: "apply_head_major", Tokens: n, Shape: fmt.Sprintf("tokens=%d heads=%d head_dim=%d", n, benchHeads, hd),
			Tensor: touched(len(hm)),
			op:     opApplyHeadMajor, ints: []int64{benchHeads, 0, mp}, fa: [][]float32{hm}, ia: [][]int32{pos},
		}, cold)
	}
	forms(benchSmall, false)
	if !short {
		forms(benchBig, true)
	}
	return cs
}
