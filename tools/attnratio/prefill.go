package main

import (
	"fmt"
	"math"
	"sort"
	"time"

	alibi "github.com/posenc/posenc/generated/bloom_7b1"
	rope "github.com/posenc/posenc/generated/llama2_7b"
	rope64 "github.com/posenc/posenc/generated/llama32_1b"
	mrope "github.com/posenc/posenc/generated/qwen25_vl_7b"
	t5 "github.com/posenc/posenc/generated/t5_base"
	xl "github.com/posenc/posenc/generated/transformer_xl_base"
)

// prefillRatios times causal prefills of n tokens, each encoding against the
// same engine with no bias and no rotation of keys: AttentionRotated of a
// rope package of the same head shape (its keys are read as given, the
// queries rotated once per block, a negligible share). ALiBi (bloom_7b1,
// 32/32 heads × 128) and RoPE inside (llama2_7b Attention) against
// llama2_7b's AttentionRotated; T5 buckets (t5_base, 12/12 × 64) against
// llama32_1b's AttentionRotated with 12/12 heads; Transformer-XL
// (transformer_xl_base, 12/12 × 64, a row of rel for each of the n
// distances) against the same; M-RoPE inside (qwen25_vl_7b, 32/32 × 128,
// text ids) against llama2_7b's AttentionRotated. Each round times a
// bias call and its baseline back to back; the figure is the median of
// bias time ÷ baseline time, with both GFLOP/s (4·heads·d·n²/2 flops).
func prefillRatios(n, rounds int, variants []string) {
	type call struct {
		use  func(string) func()
		call func()
	}
	data := func(heads, hd int) (q, k, v, out []float32, pos []int32) {
		q, k, v, out = make([]float32, n*heads*hd), make([]float32, n*heads*hd), make([]float32, n*heads*hd), make([]float32, n*heads*hd)
		for i := range q {
			q[i], k[i], v[i] = float32(i%7-3)/8, float32(i%5-2)/4, float32(i%3-1)/2
		}
		pos = make([]int32, n)
		for j := range pos {
			pos[j] = int32(j)
		}
		return
	}
	q, k, v, out, pos := data(32, 128)
	q6, k6, v6, out6, pos6 := data(12, 64)
	table := make([]float32, t5.Heads*t5.Buckets)
	for i := range table {
		table[i] = float32(i%11-5) / 4
	}
	rel, ub, vb := make([]float32, n*12*64), make([]float32, 12*64), make([]float32, 12*64)
	for i := range rel {
		rel[i] = float32(i%9-4) / 16
	}
	for i := range ub {
		ub[i], vb[i] = float32(i%5-2)/8, float32(i%3-1)/8
	}
	ids := make([]int32, 0, 3*n)
	for _, p := range pos {
		ids = append(ids, p, p, p)
	}
	scale := float32(1 / math.Sqrt(128))
	base := call{rope.UseVariant, func() {
		rope.AttentionRotated(out, q, k, v, pos, pos, rope.AttentionOptions{QHeads: 32, KVHeads: 32, Scale: scale, Causal: true})
	}}
	base64 := call{rope64.UseVariant, func() {
		rope64.AttentionRotated(out6, q6, k6, v6, pos6, pos6, rope64.AttentionOptions{QHeads: 12, KVHeads: 12, Scale: 0.125, Causal: true})
	}}
	rows := []struct {
		name        string
		flops       float64
		bias, plain call
	}{
		{"ALiBi (bloom_7b1) ÷ no bias, 32 × 128", 4 * 32 * 128 * float64(n) * float64(n) / 2, call{alibi.UseVariant, func() {
			alibi.Attention(out, q, k, v, pos, pos, alibi.AttentionOptions{QHeads: 32, KVHeads: 32, Scale: scale, Causal: true})
		}}, base},
		{"RoPE inside (llama2_7b) ÷ no bias, 32 × 128", 4 * 32 * 128 * float64(n) * float64(n) / 2, call{rope.UseVariant, func() {
			rope.Attention(out, q, k, v, pos, pos, rope.AttentionOptions{QHeads: 32, KVHeads: 32, Scale: scale, Causal: true})
		}}, base},
		{"T5 buckets (t5_base) ÷ no bias, 12 × 64", 4 * 12 * 64 * float64(n) * float64(n) / 2, call{t5.UseVariant, func() {
			t5.Attention(out6, q6, k6, v6, table, pos6, pos6, t5.AttentionOptions{QHeads: 12, KVHeads: 12, Scale: 0.125, Causal: true})
		}}, base64},
		{"Transformer-XL (transformer_xl_base) ÷ no bias, 12 × 64", 4 * 12 * 64 * float64(n) * float64(n) / 2, call{xl.UseVariant, func() {
			xl.Attention(out6, q6, k6, v6, rel, ub, vb, pos6, pos6, xl.AttentionOptions{QHeads: 12, KVHeads: 12, Scale: 0.125, Causal: true})
		}}, base64},
		{"M-RoPE inside (qwen25_vl_7b) ÷ no bias, 32 × 128", 4 * 32 * 128 * float64(n) * float64(n) / 2, call{mrope.UseVariant, func() {
			mrope.Attention(out, q, k, v, ids, ids, pos, pos, mrope.AttentionOptions{QHeads: 32, KVHeads: 32, Scale: scale, Causal: true})
		}}, base},
	}
	timed := func(c call, vn string) time.Duration {
		defer c.use(vn)()
		t0 := time.Now()
		c.call()
		return time.Since(t0)
	}
	fmt.Printf("causal prefill of %d tokens, 1 thread: bias time ÷ the same engine's without a bias, median [quartiles] of %d rounds; GFLOP/s medians\n", n, rounds)
	for _, r := range rows {
		for _, vn := range variants {
			timed(r.bias, vn) // warm: scratch pools, tables
			timed(r.plain, vn)
			var ratios, gb, gp []float64
			for range rounds {
				tb, tp := timed(r.bias, vn), timed(r.plain, vn)
				ratios = append(ratios, float64(tb)/float64(tp))
				gb = append(gb, r.flops/tb.Seconds()/1e9)
				gp = append(gp, r.flops/tp.Seconds()/1e9)
			}
			sort.Float64s(ratios)
			sort.Float64s(gb)
			sort.Float64s(gp)
			fmt.Printf("  %-46s %-7s %.3f [%.3f, %.3f]  %.1f vs %.1f GFLOP/s\n", r.name, vn,
				ratios[len(ratios)/2], ratios[len(ratios)/4], ratios[3*len(ratios)/4], gb[len(gb)/2], gp[len(gp)/2])
		}
	}
}
