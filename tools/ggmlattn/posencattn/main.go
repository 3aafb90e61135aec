// Command posencattn times posenc's attention form on the shapes and with
// the method of tools/ggmlattn/ggml_attn_bench.c, so that run.sh can print
// the two side by side: 32 query heads × 128, float32, one thread.
//
// Decode: one query at the last of -keys positions over 32 or 8 KV heads;
// each round times copy() of the K+V bytes and one attention call, each on
// its second run; the figure is copy time ÷ attention time (x-copy), median
// [quartiles] over -r rounds, with the K+V GB/s of both. Prefill: causal,
// lq = lk = 512 and 2048, 32/32 heads, GFLOP/s with 4·heads·128·L²/2 flops,
// median [quartiles] over -rp rounds after one untimed run.
//
// Forms: bloom_7b1 Attention (ALiBi inside: the ggml bench's bias) and
// llama2_7b AttentionRotated (a cache of rotated keys: plain attention, q
// rotated inside), each for the variants of -v.
//
//	go run ./tools/ggmlattn/posencattn
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	alibi "github.com/posenc/posenc/generated/bloom_7b1"
	rope "github.com/posenc/posenc/generated/llama2_7b"
)

const qh, hd = 32, 128

type form struct {
	name      string
	use       func(string) func()
	available func(string) bool
	call      func(out, q, k, v []float32, qpos, kpos []int32, kv int)
}

var forms = []form{
	{"alibi", alibi.UseVariant, alibi.VariantAvailable, func(out, q, k, v []float32, qpos, kpos []int32, kv int) {
		alibi.Attention(out, q, k, v, qpos, kpos, alibi.AttentionOptions{QHeads: qh, KVHeads: kv, Scale: float32(1 / math.Sqrt(hd)), Causal: true})
	}},
	{"rotated", rope.UseVariant, rope.VariantAvailable, func(out, q, k, v []float32, qpos, kpos []int32, kv int) {
		rope.AttentionRotated(out, q, k, v, qpos, kpos, rope.AttentionOptions{QHeads: qh, KVHeads: kv, Scale: float32(1 / math.Sqrt(hd)), Causal: true})
	}},
}

// data is posenc's benchmark data (generated/*/_attention_test.go's
// attnBenchData): nq queries at the last nq of nk positions.
func data(nq, nk, kv int) (q, k, v []float32, qpos, kpos []int32) {
	q = make([]float32, nq*qh*hd)
	k = make([]float32, nk*kv*hd)
	v = make([]float32, len(k))
	for i := range q {
		q[i] = float32(i%7-3) / 8
	}
	for i := range k {
		k[i], v[i] = float32(i%5-2)/4, float32(i%3-1)/2
	}
	kpos = make([]int32, nk)
	for j := range kpos {
		kpos[j] = int32(j)
	}
	return q, k, v, kpos[nk-nq:], kpos
}

// quart sorts x and returns its median and quartiles (as attnratio).
func quart(x []float64) (med, q1, q3 float64) {
	sort.Float64s(x)
	return x[len(x)/2], x[len(x)/4], x[3*len(x)/4]
}

func main() {
	rounds := flag.Int("r", 7, "decode rounds")
	prounds := flag.Int("rp", 5, "prefill rounds")
	variants := flag.String("v", "avx2,avx512", "variants")
	only := flag.String("only", "", "decode or prefill (default both)")
	flag.Parse()
	if *rounds < 1 || *prounds < 1 {
		fmt.Fprintln(os.Stderr, "posencattn: -r and -rp must be ≥ 1")
		os.Exit(2)
	}
	vs := strings.Split(*variants, ",")
	fmt.Printf("posenc attention (one goroutine, no threads of its own), float32, %d q heads x %d\n", qh, hd)
	if *only != "prefill" {
		for _, nk := range []int{4096, 32768} {
			for _, kv := range []int{32, 8} {
				q, k, v, qpos, kpos := data(1, nk, kv)
				out := make([]float32, len(q))
				src := append(append([]float32(nil), k...), v...)
				dst := make([]float32, len(src))
				bytes := float64(4 * len(src))
				for _, f := range forms {
					for _, vn := range vs {
						if !f.available(vn) {
							continue
						}
						restore := f.use(vn)
						tc, tk, rs := make([]float64, *rounds), make([]float64, *rounds), make([]float64, *rounds)
						for r := range *rounds {
							copy(dst, src)
							t0 := time.Now()
							copy(dst, src)
							tc[r] = time.Since(t0).Seconds()
							f.call(out, q, k, v, qpos, kpos, kv)
							t1 := time.Now()
							f.call(out, q, k, v, qpos, kpos, kv)
							tk[r] = time.Since(t1).Seconds()
							rs[r] = tc[r] / tk[r]
						}
						restore()
						km, _, _ := quart(tk)
						cm, _, _ := quart(tc)
						xm, x1, x3 := quart(rs)
						fmt.Printf("decode  keys=%-6d kv=%-2d f32 %-7s %-6s K+V=%4d MiB  kernel %8.3f ms  %6.2f GB/s  copy() %6.2f GB/s  x-copy %.2f [%.2f, %.2f]\n",
							nk, kv, f.name, vn, int(bytes)>>20, km*1e3, bytes/km/1e9, bytes/cm/1e9, xm, x1, x3)
					}
				}
			}
		}
	}
	if *only != "decode" {
		for _, L := range []int{512, 2048} {
			q, k, v, qpos, kpos := data(L, L, qh)
			out := make([]float32, len(q))
			flops := 4.0 * qh * hd * float64(L) * float64(L) / 2
			for _, f := range forms {
				for _, vn := range vs {
					if !f.available(vn) {
						continue
					}
					restore := f.use(vn)
					f.call(out, q, k, v, qpos, kpos, qh)
					ts := make([]float64, *prounds)
					for r := range ts {
						t0 := time.Now()
						f.call(out, q, k, v, qpos, kpos, qh)
						ts[r] = time.Since(t0).Seconds()
					}
					restore()
					tm, t1, t3 := quart(ts)
					fmt.Printf("prefill L=%-5d       kv=%-2d f32 %-7s %-6s               %8.2f ms  %6.2f GFLOP/s [%.2f, %.2f]\n",
						L, qh, f.name, vn, tm*1e3, flops/tm/1e9, flops/t3/1e9, flops/t1/1e9)
				}
			}
		}
	}
}
