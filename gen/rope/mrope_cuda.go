package rope

import (
	"fmt"

	"github.com/posenc/posenc/gen/cuda"
)

// mropeCUDA is the M-RoPE part of the rope template data
// (templates/mrope.cu.tmpl): the axis of every pair, in constant memory.
type mropeCUDA struct {
	MRoPE            bool
	Axes             int
	PairAxis         []int
	MRoPESection     string
	MRoPEInterleaved bool
}

// cudaMRoPE fills d's M-RoPE data and adds the launchers apply_mrope,
// apply_qk_mrope and inverse_mrope (nothing for ordinary RoPE). The
// M-RoPE specs have no run-time frequency switch (spec.Parse refuses
// dynamic and longrope with mrope_section), so they take no max_pos.
func (c *Consts) cudaMRoPE(d *cudaData) {
	m := c.MRoPE
	if m == nil {
		return
	}
	d.MRoPE, d.Axes, d.PairAxis = true, m.Axes, m.PairAxis
	d.MRoPESection = fmt.Sprint(c.Spec.MRoPESection)
	d.MRoPEInterleaved = c.Spec.MRoPEInterleaved
	T := d.Store
	d.Consts = append(d.Consts, cuda.Define{Name: "AXES", Value: fmt.Sprint(m.Axes)})
	d.AddLauncher("apply_mrope", "ApplyMRoPE: x[tokens][heads][HEAD_DIM] rotated in place; pos[tokens][AXES] (token-major) gives each token's position on every axis, pair i taking the axis mrope_section assigns it.",
		T+" *x", "const int *pos", "int tokens", "int heads", cuda.Stream)
	d.AddLauncher("apply_qk_mrope", "ApplyQKMRoPE: q[tokens][q_heads][HEAD_DIM] and k[tokens][k_heads][HEAD_DIM] rotated in place in one launch, positions as apply_mrope.",
		T+" *q", T+" *k", "const int *pos", "int tokens", "int q_heads", "int k_heads", cuda.Stream)
	d.AddLauncher("inverse_mrope", "InverseMRoPE: rotation by −angle of apply_mrope, in place.",
		T+" *x", "const int *pos", "int tokens", "int heads", cuda.Stream)
}
