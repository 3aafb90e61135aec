// Package relative generates the assembly kernels of the relative-attention
// encodings: rpe_full (Shaw et al. 2018: dotRows, scoresRow, axpyRows) and
// Transformer-XL (Dai et al. 2019: its own scoresRow), both with the
// attention form's kernels of asm/bias.AttentionAMD64/AttentionNEON, for AVX2+FMA and
// AVX-512 (avo, asm/amd64) and NEON (asm/arm64), specialized to a
// compile-time HeadDim.
package relative

import (
	"fmt"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/asm/bias"
	"github.com/posenc/posenc/internal/emit"
)

// Params is the shape the kernels are generated for, derived by the
// caller (gen) from a validated spec and taken as given: HeadDim ≥ 1.
type Params struct {
	HeadDim int  // floats per head, the length of every dot product
	XL      bool // Transformer-XL's scoresRow; false: rpe_full's three kernels
}

// gen emits the kernels of one AVX variant.
type gen struct{ *amd64.Gen }

// AMD64 returns <pkg>_amd64.s and <pkg>_amd64.go with the member's kernels
// for each asked-for variant; source names the spec in the header line.
func AMD64(pkg, source string, avx2, avx512 bool, p Params) ([]emit.File, error) {
	d := p.HeadDim
	ks := []amd64.Kernel{{ABI: abi.XLScoresRow, Emit: func(g *amd64.Gen) { gen{g}.dotKernel(dotXL, d) }}}
	if !p.XL {
		ks = []amd64.Kernel{
			{ABI: abi.DotRows, Emit: func(g *amd64.Gen) { gen{g}.dotKernel(dotPlain, d) }},
			{ABI: abi.ScoresRow, Emit: func(g *amd64.Gen) { gen{g}.dotKernel(dotScores, d) }},
			{ABI: abi.AxpyRows, Emit: func(g *amd64.Gen) { gen{g}.axpyRows(d) }},
		}
	}
	// The attention form's kernels (gen/attention).
	ks = append(ks, bias.AttentionAMD64(d)...)
	return amd64.Files(pkg, source, amd64.ISAs(avx2, avx512), ks)
}

// NEON returns <pkg>_arm64.s and <pkg>_arm64.go with the member's NEON
// kernels.
func NEON(pkg, source string, p Params) ([]emit.File, error) {
	d := p.HeadDim
	dot, scores, axpy := arm64.Symbol(abi.DotRows), arm64.Symbol(abi.ScoresRow), arm64.Symbol(abi.AxpyRows)
	if p.XL {
		return arm64.Files(pkg, source, append([]arm64.Kernel{{ABI: abi.XLScoresRow, Name: scores,
			Doc:  fmt.Sprintf("sets dst[j] = qu·k_j + qv·r_j (rows of %d floats).", d),
			Emit: func(e *arm64.Emitter) { dotKernel(e, scores, "xl", d) }}}, bias.AttentionNEON(d)...))
	}
	return arm64.Files(pkg, source, append([]arm64.Kernel{
		{ABI: abi.DotRows, Name: dot,
			Doc:  fmt.Sprintf("sets dst[r] = x·rows[r] (rows of %d floats).", d),
			Emit: func(e *arm64.Emitter) { dotKernel(e, dot, "dotRows", d) }},
		{ABI: abi.ScoresRow, Name: scores,
			Doc:  fmt.Sprintf("sets dst[j] = (q·k_j + bias[j])·scale (rows of %d floats).", d),
			Emit: func(e *arm64.Emitter) { dotKernel(e, scores, "scoresRow", d) }},
		{ABI: abi.AxpyRows, Name: axpy,
			Doc:  fmt.Sprintf("adds Σ_r w[r]·rows[r] to dst (rows of %d floats).", d),
			Emit: func(e *arm64.Emitter) { axpyRows(e, axpy, d) }},
	}, bias.AttentionNEON(d)...))
}
