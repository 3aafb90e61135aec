// Command roperatio measures two same-process ratios of the generated rope
// kernels that docs/performance.md quotes, in interleaved rounds (medians,
// with the interquartile range), so that a burst of other work on the
// machine lands on both sides of a ratio:
//
//	go run ./tools/roperatio -mode beyond   # in-table ÷ beyond-table time (llama2_7b ApplyQK)
//	go run ./tools/roperatio -mode packed -t 1024 [-cold]   # ApplyQK ÷ ApplyQKStrided time (llama31_8b)
//	go run ./tools/roperatio -mode far        # in-table ÷ beyond time, 64 unrelated positions (llama2_7b Apply)
//	go run -tags purego ./tools/roperatio -mode plain   # a plain Go loop's time ÷ Apply's (llama2_7b)
//
// beyond: ApplyQK with 32 query and 8 key heads of 128 at positions 1000…
// (table rows) against 2^20+1000… (angle addition), for decode and 16/64
// token calls; 1.00 is as fast as the table. far: Apply with 32 heads of 128
// on 64 tokens at unrelated random positions, in the table against
// ≥ 2^20 (one decode step of 64 sequences): the same positions every call,
// each one further every call, or new ones every call; and new ones every
// call between MaxPosition and 2^20 (where the bound is 1e-6). plain: Apply on 16 tokens × 32 heads × 128 in the
// table against the loop an engine would write with precomputed float32
// cos/sin tables (plainRotate); run it with -tags purego for the pure Go
// variant that riscv64, ppc64le, s390x and wasm get. packed: the same heads rotated
// in two contiguous tensors against a packed QKV buffer (rows of -s heads),
// per byte rotated; -cold writes 96 MiB before every timed call.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"
	"time"

	beyond "github.com/posenc/posenc/generated/llama2_7b"
	packed "github.com/posenc/posenc/generated/llama31_8b"
)

func main() {
	mode := flag.String("mode", "beyond", "beyond, packed, far or plain")
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
	case "far":
		runFar(vs, *rounds)
	case "plain":
		runPlain(vs, *rounds)
	default:
		fmt.Fprintln(os.Stderr, "roperatio: -mode is beyond, packed, far or plain")
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

// runFar times Apply (32 heads of 128) on 64 tokens at unrelated positions:
// random table positions against random positions in [2^20, 2^31), in
// four patterns: the same positions every call (the layers of one decode
// step of 64 sequences), every position one further each call (successive
// decode steps of the 64 sequences, one call per step: a new position every
// call), or fresh unrelated positions every call (cycling through 64 sets
// drawn before timing: 4096 positions, so no row cache hits; no decode
// produces that, it is the exact path's worst case), ≥ 2^20 or between
// MaxPosition and 2^20.
func runFar(vs []string, rounds int) {
	const heads, d, tokens, calls, sets = 32, 128, 64, 50, 64
	rng := rand.New(rand.NewSource(1))
	draw := func(lo, n int64) [][]int32 {
		ps := make([][]int32, sets)
		for i := range ps {
			ps[i] = make([]int32, tokens)
			for j := range ps[i] {
				ps[i][j] = int32(lo + rng.Int63n(n))
			}
		}
		return ps
	}
	// Advancing positions stay below MaxPosition in the table (wrapping) and
	// below 2^31 beyond it for the whole run (rounds·calls steps per case).
	steps := int64(rounds * calls)
	in, out := draw(0, beyond.MaxPosition), draw(1<<20, 1<<31-1<<20-steps)
	// near: beyond the table but within 2^20, where the bound is 1e-6.
	near := draw(beyond.MaxPosition, 1<<20-beyond.MaxPosition)
	x := random(tokens * heads * d)
	cur := make([]int32, tokens)
	for _, v := range vs {
		if !beyond.VariantAvailable(v) {
			continue
		}
		restore := beyond.UseVariant(v)
		for _, pattern := range []string{"the same every call", "one step further every call", "new every call", "new every call, below 2^20"} {
			var step [2]int64 // per side: the decode step reached
			run := func(ps [][]int32, side int, limit int64) float64 {
				t0 := time.Now()
				for i := 0; i < calls; i++ {
					p := ps[0]
					switch pattern {
					case "new every call", "new every call, below 2^20":
						p = ps[i%sets]
					case "one step further every call":
						for j, b := range ps[0] {
							cur[j] = int32((int64(b) + step[side]) % limit)
						}
						step[side]++
						p = cur
					}
					beyond.Apply(x, p, heads)
				}
				return time.Since(t0).Seconds()
			}
			far := out
			if pattern == "new every call, below 2^20" {
				far = near
			}
			var ratios []float64
			for r := 0; r < rounds; r++ {
				var a, b float64
				if r%2 == 0 {
					a, b = run(in, 0, beyond.MaxPosition), run(far, 1, 1<<31)
				} else {
					b, a = run(far, 1, 1<<31), run(in, 0, beyond.MaxPosition)
				}
				ratios = append(ratios, a/b)
			}
			fmt.Printf("%-6s %-60s in-table ÷ beyond time %s\n", v, "64 unrelated positions, "+pattern, summary(ratios))
		}
		restore()
	}
}

// plainRotate is the loop an engine writes by hand, as tight as plain Go
// gets: half layout, float32 cos and sin tables of [position][HeadDim/2],
// x of [token][heads][HeadDim] rotated in place, every slice of constant
// length so that the inner loop has no bounds checks.
func plainRotate(x, cos, sin []float32, pos []int32, heads int) {
	const d, n = beyond.HeadDim, beyond.HeadDim / 2
	for t, p := range pos {
		c, s := (*[n]float32)(cos[int(p)*n:]), (*[n]float32)(sin[int(p)*n:])
		for h := 0; h < heads; h++ {
			v := (*[d]float32)(x[(t*heads+h)*d:])
			for i := 0; i < n; i++ {
				x0, x1 := v[i], v[n+i]
				v[i] = x0*c[i] - x1*s[i]
				v[n+i] = x1*c[i] + x0*s[i]
			}
		}
	}
}

// runPlain times plainRotate against Apply on 16 tokens × 32 heads × 128
// at table positions 1000…, both in place on their own copy of the data.
func runPlain(vs []string, rounds int) {
	const heads, tokens, calls = 32, 16, 400
	d, n := beyond.HeadDim, beyond.HeadDim/2
	pos := make([]int32, tokens)
	for i := range pos {
		pos[i] = int32(1000 + i)
	}
	w := beyond.Frequencies()
	cos, sin := make([]float32, beyond.MaxPosition*n), make([]float32, beyond.MaxPosition*n)
	for p := 0; p < beyond.MaxPosition; p++ {
		for i := 0; i < n; i++ {
			s, c := math.Sincos(float64(p) * w[i])
			cos[p*n+i], sin[p*n+i] = float32(c), float32(s)
		}
	}
	x, y := random(tokens*heads*d), random(tokens*heads*d)
	timeit := func(f func()) float64 {
		t0 := time.Now()
		for i := 0; i < calls; i++ {
			f()
		}
		return time.Since(t0).Seconds()
	}
	plain := func() { plainRotate(x, cos, sin, pos, heads) }
	apply := func() { beyond.Apply(y, pos, heads) }
	for _, v := range vs {
		if !beyond.VariantAvailable(v) {
			continue
		}
		restore := beyond.UseVariant(v)
		var ratios, ta, tb []float64
		for r := 0; r < rounds; r++ {
			var a, b float64
			if r%2 == 0 {
				a, b = timeit(plain), timeit(apply)
			} else {
				b, a = timeit(apply), timeit(plain)
			}
			ratios, ta, tb = append(ratios, a/b), append(ta, a), append(tb, b)
		}
		restore()
		sort.Float64s(ta)
		sort.Float64s(tb)
		fmt.Printf("%-6s 16 tokens × 32 heads × 128: plain loop ÷ Apply time %s (medians %.1f µs ÷ %.1f µs per call)\n",
			v, summary(ratios), ta[len(ta)/2]/calls*1e6, tb[len(tb)/2]/calls*1e6)
	}
}
