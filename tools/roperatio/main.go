// Command roperatio measures two same-process ratios of the generated rope
// kernels that docs/performance.md quotes, in interleaved rounds (medians,
// with the interquartile range), so that a burst of other work on the
// machine lands on both sides of a ratio:
//
//	go run ./tools/roperatio -mode beyond   # in-table ÷ beyond-table time (llama2_7b ApplyQK)
//	go run ./tools/roperatio -mode packed -t 1024 [-cold]   # ApplyQK ÷ ApplyQKStrided time (llama31_8b)
//
// beyond: ApplyQK with 32 query and 8 key heads of 128 at positions 1000…
// (table rows) against 2^20+1000… (angle addition), for decode and 16/64
// token calls; 1.00 is as fast as the table. packed: the same heads rotated
// in two contiguous tensors against a packed QKV buffer (rows of -s heads),
// per byte rotated; -cold writes 96 MiB before every timed call.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"time"

	beyond "github.com/posenc/posenc/generated/llama2_7b"
	packed "github.com/posenc/posenc/generated/llama31_8b"
)

func main() {
	mode := flag.String("mode", "beyond", "beyond or packed")
	rounds := flag.Int("r", 41, "rounds")
	tokens := flag.Int("t", 1024, "packed: tokens per call")
	strideHeads := flag.Int("s", 48, "packed: row stride in heads")
	cold := flag.Bool("cold", false, "packed: write 96 MiB before every timed call")
	variants := flag.String("v", "go,avx2,avx512", "variants")
	flag.Parse()
	vs := strings.Split(*variants, ",")
	switch *mode {
	case "beyond":
		runBeyond(vs, *rounds)
	case "packed":
		runPacked(vs, *rounds, *tokens, *strideHeads, *cold)
	default:
		fmt.Fprintln(os.Stderr, "roperatio: -mode is beyond or packed")
		os.Exit(2)
	}
}

// summary is "median (first quartile–third quartile)" of x.
func summary(x []float64) string {
	sort.Float64s(x)
	return fmt.Sprintf("%.2f (%.2f–%.2f)", x[len(x)/2], x[len(x)/4], x[3*len(x)/4])
}

// runBeyond times each case at table positions and beyond the table,
// alternating which side goes first.
func runBeyond(vs []string, rounds int) {
	const qh, kh, d = 32, 8, 128
	cases := []struct {
		name          string
		tokens, calls int
		layers        int  // decode: calls per position (1: a new position every call)
		same          bool // every call at the same positions
	}{
		{"decode, the same position every call", 1, 320, 0, true},
		{"decode, 32 layers per position", 1, 320, 32, false},
		{"decode, a new position every call", 1, 320, 1, false},
		{"16 tokens", 16, 100, 0, true},
		{"16 tokens, advancing", 16, 100, 0, false},
		{"64 tokens", 64, 100, 0, true},
		{"64 tokens, advancing", 64, 100, 0, false},
	}
	for _, v := range vs {
		if !beyond.VariantAvailable(v) {
			continue
		}
		restore := beyond.UseVariant(v)
		for _, c := range cases {
			q, k := random(c.tokens*qh*d), random(c.tokens*kh*d)
			pos := make([]int32, c.tokens)
			// run makes c.calls calls from base+start on and returns their
			// time and the next start.
			run := func(base, start int32) (float64, int32) {
				p := start
				t0 := time.Now()
				for i := 0; i < c.calls; i++ {
					for j := range pos {
						pos[j] = base + p + int32(j)
					}
					beyond.ApplyQK(q, k, pos, qh, kh)
					switch {
					case c.same:
					case c.layers > 0:
						if (i+1)%c.layers == 0 {
							p++
						}
					default:
						p += int32(c.tokens)
					}
				}
				return time.Since(t0).Seconds(), p
			}
			var ratios []float64
			var in, out int32
			for r := 0; r < rounds; r++ {
				var a, b float64
				if r%2 == 0 {
					a, in = run(1000, in%4096)
					b, out = run(1<<20+1000, out)
				} else {
					b, out = run(1<<20+1000, out)
					a, in = run(1000, in%4096)
				}
				ratios = append(ratios, a/b)
			}
			fmt.Printf("%-6s %-38s in-table ÷ beyond time %s\n", v, c.name, summary(ratios))
		}
		restore()
	}
}

// runPacked times ApplyQK on contiguous q and k against ApplyQKStrided on
// a packed buffer holding the same heads.
func runPacked(vs []string, rounds, tokens, strideHeads int, cold bool) {
	const qh, kh = 32, 8
	d := packed.HeadDim
	pos := make([]int32, tokens)
	for i := range pos {
		pos[i] = int32(1000 + i)
	}
	stride := strideHeads * d
	q, k := random(tokens*qh*d), random(tokens*kh*d)
	qkv := random((tokens-1)*stride + (qh+kh)*d)
	junk := make([]byte, 96<<20)
	reps := max(1, 20000/tokens)
	// timeit is the best of 5 runs of reps calls, or with cold the sum of 5
	// calls each after writing junk.
	timeit := func(f func()) float64 {
		if cold {
			var sum float64
			for i := 0; i < 5; i++ {
				for j := 0; j < len(junk); j += 64 {
					junk[j]++
				}
				t0 := time.Now()
				f()
				sum += time.Since(t0).Seconds()
			}
			return sum
		}
		best := 1e9
		for r := 0; r < 5; r++ {
			t0 := time.Now()
			for i := 0; i < reps; i++ {
				f()
			}
			best = min(best, time.Since(t0).Seconds())
		}
		return best
	}
	contiguous := func() { packed.ApplyQK(q, k, pos, qh, kh) }
	strided := func() { packed.ApplyQKStrided(qkv, pos, qh, kh, stride) }
	for _, v := range vs {
		if !packed.VariantAvailable(v) {
			continue
		}
		restore := packed.UseVariant(v)
		var ratios []float64
		for r := 0; r < rounds; r++ {
			var a, b float64
			if r%2 == 0 {
				a, b = timeit(contiguous), timeit(strided)
			} else {
				b, a = timeit(strided), timeit(contiguous)
			}
			ratios = append(ratios, a/b)
		}
		restore()
		fmt.Printf("%-6s %d tokens, rows of %d heads: ApplyQK ÷ ApplyQKStrided time %s\n", v, tokens, strideHeads, summary(ratios))
	}
}

// random returns n floats in [0, 1).
func random(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = rand.Float32()
	}
	return x
}
