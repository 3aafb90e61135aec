// Command attnratio measures the attention form's decode step as a ratio to
// copy() of the same bytes, the figure docs/performance.md quotes: one query
// at the last of -keys positions, 32 query heads of 128 over -kv key/value
// heads (llama2_7b: Attention with the rotation inside, AttentionRotated over
// a rotated cache; bloom_7b1: ALiBi, 32/32 heads only), float32. Each round
// times one attention call and one copy() of the keys and values (each on
// its second run, so neither pays for the other's dirty lines); the figure
// is the median over the rounds of copy time ÷ attention time, with the
// quartiles: K+V read at that multiple of copy()'s rate (copy() reads and
// writes the bytes, so a read-only pass can approach 2).
//
//	go run ./tools/attnratio -keys 32768 -kv 8
//
// With -prefill N it times causal prefills of N tokens instead and reports
// each encoding's time over the same engine's without a bias
// (prefill.go); with -rss, the peak resident memory of decode calls over
// -keys keys (rss.go); with -dtype f16 or bf16, the decode over 16-bit K/V
// (decode16.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	alibi "github.com/posenc/posenc/generated/bloom_7b1"
	rope "github.com/posenc/posenc/generated/llama2_7b"
)

func main() {
	keys := flag.Int("keys", 32768, "keys (KV cache length)")
	kv := flag.Int("kv", 8, "key/value heads (32 query heads)")
	rounds := flag.Int("r", 9, "rounds")
	variants := flag.String("v", "avx2,avx512", "variants")
	prefill := flag.Int("prefill", 0, "time causal prefills of this many tokens against the same engine without a bias")
	rss := flag.Bool("rss", false, "report the peak resident memory of decode calls instead")
	dtype := flag.String("dtype", "f32", "K/V storage of the decode measurement: f32, f16 or bf16 (decode16.go)")
	flag.Parse()
	if *dtype != "f32" {
		if err := decode16(*dtype, *keys, *kv, *rounds, strings.Split(*variants, ",")); err != nil {
			fmt.Fprintln(os.Stderr, "attnratio:", err)
			os.Exit(2)
		}
		return
	}
	if *prefill > 0 {
		prefillRatios(*prefill, *rounds, strings.Split(*variants, ","))
		return
	}
	if *rss {
		peakRSS(*keys, *kv)
		return
	}
	const qh, hd = 32, 128
	if qh%*kv != 0 {
		fmt.Fprintln(os.Stderr, "attnratio: -kv must divide 32")
		os.Exit(2)
	}
	n := *keys * *kv * hd
	k, v := make([]float32, n), make([]float32, n)
	for i := range k {
		k[i], v[i] = float32(i%5-2)/4, float32(i%3-1)/2
	}
	q, out := make([]float32, qh*hd), make([]float32, qh*hd)
	for i := range q {
		q[i] = float32(i%7-3) / 8
	}
	kpos := make([]int32, *keys)
	for j := range kpos {
		kpos[j] = int32(j)
	}
	qpos := kpos[*keys-1:]
	src := append(append([]float32(nil), k...), v...)
	dst := make([]float32, len(src))
	forms := []struct {
		name string
		use  func(string) func()
		call func()
	}{
		{"rope inside (llama2_7b Attention)", rope.UseVariant, func() {
			rope.Attention(out, q, k, v, qpos, kpos, rope.AttentionOptions{QHeads: qh, KVHeads: *kv, Scale: 0.088, Causal: true})
		}},
		{"rotated cache (llama2_7b AttentionRotated)", rope.UseVariant, func() {
			rope.AttentionRotated(out, q, k, v, qpos, kpos, rope.AttentionOptions{QHeads: qh, KVHeads: *kv, Scale: 0.088, Causal: true})
		}},
	}
	if *kv == qh {
		forms = append(forms, struct {
			name string
			use  func(string) func()
			call func()
		}{"ALiBi (bloom_7b1 Attention)", alibi.UseVariant, func() {
			alibi.Attention(out, q, k, v, qpos, kpos, alibi.AttentionOptions{QHeads: qh, KVHeads: *kv, Scale: 0.088, Causal: true})
		}})
	}
	fmt.Printf("decode, 1 query over %d keys, %d/%d heads × %d, K+V %d MiB: copy() time ÷ attention time, median [quartiles] of %d rounds\n",
		*keys, qh, *kv, hd, 8*n>>20, *rounds)
	for _, f := range forms {
		for _, vn := range strings.Split(*variants, ",") {
			restore := f.use(vn)
			rs, ts := againstCopy(dst, src, *rounds, f.call)
			restore()
			row(f.name, vn, rs, ts)
		}
	}
	readLimit(k, v, src, dst, *rounds)
}

// againstCopy times call against copy(dst, src) in each of rounds rounds,
// each on its second run (so neither pays for the other's dirty lines), and
// returns the ratios copy time ÷ call time and the call times (seconds).
func againstCopy[E float32 | uint16](dst, src []E, rounds int, call func()) (rs, ts []float64) {
	for range rounds {
		copy(dst, src)
		t0 := time.Now()
		copy(dst, src)
		tc := time.Since(t0)
		call()
		t1 := time.Now()
		call()
		tk := time.Since(t1)
		rs, ts = append(rs, float64(tc)/float64(tk)), append(ts, tk.Seconds())
	}
	return rs, ts
}

// row prints one measured form: the median of the per-round ratios rs with
// their quartiles, and the median time of one call (ts, seconds).
func row(name, variant string, rs, ts []float64) {
	sort.Float64s(rs)
	sort.Float64s(ts)
	fmt.Printf("  %-44s %-7s %.2f [%.2f, %.2f]  %.1f ms a call\n", name, variant, rs[len(rs)/2], rs[len(rs)/4], rs[3*len(rs)/4], 1e3*ts[len(ts)/2])
}
