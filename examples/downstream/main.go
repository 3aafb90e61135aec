// Command downstream shows posenc used as a user would: the package
// internal/tinyrope is generated from rope.yaml by `go generate` and
// committed (vendored); this program applies it to a query/key tensor and
// shows the property RoPE exists for: the score q_m·k_n depends only on m−n.
package main

//go:generate go run github.com/posenc/posenc/cmd/posenc gen -o internal rope.yaml

import (
	"fmt"
	"math"
	"math/rand/v2"

	"example.com/downstream/internal/tinyrope"
)

func main() {
	const heads = 4
	r := rand.New(rand.NewPCG(1, 2))
	q := make([]float32, tinyrope.HeadDim)
	k := make([]float32, tinyrope.HeadDim)
	for i := range q {
		q[i], k[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	fmt.Printf("tinyrope: head_dim %d, variant %s\n", tinyrope.HeadDim, tinyrope.ActiveVariant())
	for _, m := range []int32{5, 1000, 1 << 20, math.MaxInt32} {
		fmt.Printf("q at %10d, k at %10d: score %.5f\n", m, m-3, score(q, k, m, m-3, heads))
	}
}

// score rotates copies of q (as every head of a token at position m) and k
// (at position n) and returns the dot product of their first heads.
func score(q, k []float32, m, n int32, heads int) float64 {
	x := make([]float32, heads*tinyrope.HeadDim)
	y := make([]float32, heads*tinyrope.HeadDim)
	for h := 0; h < heads; h++ {
		copy(x[h*tinyrope.HeadDim:], q)
		copy(y[h*tinyrope.HeadDim:], k)
	}
	tinyrope.Apply(x, []int32{m}, heads)
	tinyrope.Apply(y, []int32{n}, heads)
	s := 0.0
	for i := 0; i < tinyrope.HeadDim; i++ {
		s += float64(x[i]) * float64(y[i])
	}
	return s
}
