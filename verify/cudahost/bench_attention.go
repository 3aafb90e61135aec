package cudahost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// Attention bench geometry: decode over attnBenchKeys keys (one query at
// the last position), and causal prefill of attnBenchPrefill tokens (and
// attnBenchPrefillLong for 16-bit storage, which the tensor cores serve),
// the shapes of the attention issue's cuDNN SDPA and FlexAttention figures
// (32 heads × 128 on the H200); short (host emulation) decode over
// attnBenchShortKeys keys and prefill of benchSmall tokens.
const (
	attnBenchPrefill     = 2048
	attnBenchPrefillLong = 8192
	attnBenchShortKeys   = 256
)

// attnBenchKeys are the decode key counts; the first alone for rope's
// 32-KV-head shapes (1 GiB of f32 K+V at 32768 keys).
var attnBenchKeys = []int{32768, 131072}

// AttentionBenchCases returns the attention form's cases of s (rope, alibi
// and rpe_bias; not M-RoPE, rpe_full or xl, whose launchers take more
// operands): decode, one query at the last of lk keys, timed as K+V read
// (ReadOnly, Tensor = the K+V bytes) against a copy of those bytes; causal
// prefill, timed as Flops = 4·heads·head_dim·(unmasked pairs). rope, for
// both attention_rotated and attention (rotation inside): 32 query heads
// over 32 KV heads (cuDNN's MHA shape) at 32768 keys, over 8 KV heads
// (Llama 3's GQA) at 32768 and 131072 keys, and 64 over 8 at 32768 keys
// (a group of 8); alibi and rpe_bias: attention with the spec's heads over
// as many KV heads. short
// keeps decode over attnBenchShortKeys keys and prefill of benchSmall
// tokens (host emulation). 16-bit specs add causal prefill of
// attnBenchPrefillLong tokens. The inputs are made when a case is timed.
func AttentionBenchCases(s *spec.Spec, short bool) []BenchCase {
	if !HasAttention(s) || s.IsMRoPE() || (s.Encoding != spec.RoPE && s.Encoding != spec.ALiBi && s.Encoding != spec.RPEBias) {
		return nil
	}
	elem := storeBytes(s)
	hd := s.HeadDim
	r := rand.New(rand.NewPCG(5, 6))
	// pool fills arrays fast: 4096 normal values, read at a stride.
	pool := make([]float32, 4096)
	for i := range pool {
		pool[i] = float32(r.NormFloat64())
	}
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = pool[(i*7919)%len(pool)]
		}
		return x
	}
	var table []float32
	if s.Encoding == spec.RPEBias {
		table = fill(s.Heads * s.NumBuckets())
	}
	type form struct {
		kernel string
		op     int32
	}
	inside, rotated := form{"attention", opAttention}, form{"attention_rotated", opAttentionRotated}
	var cs []BenchCase
	decode := func(f form, qh, kvh, lk int) {
		inputs := func() ([][]float32, [][]int32) {
			kpos := make([]int32, lk)
			for j := range kpos {
				kpos[j] = int32(j)
			}
			fa := [][]float32{make([]float32, qh*hd), fill(qh * hd), fill(lk * kvh * hd), fill(lk * kvh * hd)}
			if table != nil {
				fa = append(fa, table)
			}
			return fa, [][]int32{{int32(lk - 1)}, kpos}
		}
		cs = append(cs, BenchCase{
			spec: s.Name, Kernel: f.kernel, Tokens: 1,
			Shape:  fmt.Sprintf("decode lq=1 lk=%d q_heads=%d kv_heads=%d head_dim=%d", lk, qh, kvh, hd),
			Tensor: 2 * int64(lk) * int64(kvh*hd) * elem, ReadOnly: true,
			op: f.op, ints: []int64{int64(qh), int64(kvh), int64(lk - 1), 1, 0}, f: float32(1 / math.Sqrt(float64(hd))),
			inputs: inputs,
		})
	}
	prefill := func(f form, heads, n int) {
		inputs := func() ([][]float32, [][]int32) {
			pos := make([]int32, n)
			for j := range pos {
				pos[j] = int32(j)
			}
			fa := [][]float32{make([]float32, n*heads*hd), fill(n * heads * hd), fill(n * heads * hd), fill(n * heads * hd)}
			if table != nil {
				fa = append(fa, table)
			}
			return fa, [][]int32{pos, pos}
		}
		pairs := int64(n) * int64(n+1) / 2 // causal: query i sees i+1 keys
		cs = append(cs, BenchCase{
			spec: s.Name, Kernel: f.kernel, Tokens: n,
			Shape:  fmt.Sprintf("causal prefill lq=lk=%d heads=%d head_dim=%d", n, heads, hd),
			Tensor: 4 * int64(n*heads*hd) * elem, // q, k, v read, out written
			Flops:  4 * int64(heads*hd) * pairs,
			op:     f.op, ints: []int64{int64(heads), int64(heads), int64(n - 1), 1, 0}, f: float32(1 / math.Sqrt(float64(hd))),
			inputs: inputs,
		})
	}
	if short {
		if s.Encoding == spec.RoPE {
			decode(inside, 32, 8, attnBenchShortKeys)
			prefill(rotated, 32, benchSmall)
		} else {
			decode(inside, s.Heads, s.Heads, attnBenchShortKeys)
			prefill(inside, s.Heads, benchSmall)
		}
		return cs
	}
	prefills := []int{attnBenchPrefill}
	if elem < 4 {
		prefills = append(prefills, attnBenchPrefillLong)
	}
	if s.Encoding == spec.RoPE {
		for _, f := range []form{rotated, inside} {
			decode(f, 32, 32, attnBenchKeys[0])
			for _, lk := range attnBenchKeys {
				decode(f, 32, 8, lk)
			}
			// A group of 8 query heads (Llama 3 70B's 64 over 8), which 16-bit
			// specs decode on the tensor cores.
			decode(f, 64, 8, attnBenchKeys[0])
		}
		for _, n := range prefills {
			prefill(rotated, 32, n)
			prefill(inside, 32, n)
		}
		return cs
	}
	for _, lk := range attnBenchKeys {
		decode(inside, s.Heads, s.Heads, lk)
	}
	for _, n := range prefills {
		prefill(inside, s.Heads, n)
	}
	return cs
}
