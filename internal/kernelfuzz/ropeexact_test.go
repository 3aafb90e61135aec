package kernelfuzz

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExactRowsAgree checks that every variant computes the same bits for
// the rows of positions outside the table (the farRows kernel of each ISA
// and the Go one), through ApplyQK: with every input 1, a pair rotates to
// (c − s, s + c), each a single rounding of exact products whether or not a
// variant fuses its multiply-adds, so two variants agree bit for bit exactly
// when their rows do. Each band of TestRoPEErrorBands outside the table is
// run as one call (the chunk path) and one token per call (the decode path);
// before each measured call the same call at positions p^1 replaces the
// row caches' spares, so no variant reads rows another one cached.
func TestExactRowsAgree(t *testing.T) {
	const heads = 3
	for _, pk := range bandPkgs {
		r := rand.New(rand.NewPCG(26, 7))
		var pos []int32
		for _, b := range ropeBands(int64(pk.maxPosition))[1:] {
			pos = append(pos, bandPositions(r, b)...)
		}
		pos = append(pos, math.MaxInt32, math.MinInt32, -1)
		flip := make([]int32, len(pos))
		for i, p := range pos {
			flip[i] = p ^ 1
		}
		// Per token: heads query heads, then one key head (ApplyQK, which
		// every package of bandPkgs has).
		n := (heads + 1) * pk.headDim
		run := func(p, f []int32) []float32 {
			q, k := make([]float32, len(p)*heads*pk.headDim), make([]float32, len(p)*pk.headDim)
			for _, ps := range [][]int32{f, p} {
				for i := range q {
					q[i] = 1
				}
				for i := range k {
					k[i] = 1
				}
				pk.applyQK(q, k, ps, heads, 1)
			}
			x := make([]float32, 0, len(p)*n)
			for t := range p {
				x = append(x, q[t*heads*pk.headDim:(t+1)*heads*pk.headDim]...)
				x = append(x, k[t*pk.headDim:(t+1)*pk.headDim]...)
			}
			return x
		}
		var want []float32
		var wantVariant string
		pk.reg.each(t, func(v string) {
			// The whole call, then each token on its own.
			got := run(pos, flip)
			for i := range pos {
				got = append(got, run(pos[i:i+1], flip[i:i+1])...)
			}
			if want == nil {
				want, wantVariant = got, v
				return
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					j := i % (len(pos) * n)
					t.Fatalf("%s: %s and %s differ at position %d, head %d dim %d (call %d of 2): %v, %v", pk.name, v, wantVariant, pos[j/n], j%n/pk.headDim, j%pk.headDim, i/(len(pos)*n)+1, got[i], want[i])
				}
			}
		})
	}
}
