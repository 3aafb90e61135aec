// Package absolute generates the assembly kernel of the absolute position
// encodings (sinusoidal, Vaswani et al. 2017; learned; algebraic; binary):
// addRows (abi.AddRows), which adds a table row to every token, for
// AVX2+FMA and AVX-512 (avo, asm/amd64) and NEON (asm/arm64), specialized to
// a compile-time model width.
package absolute

import (
	"fmt"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/internal/emit"
)

// Params is the shape the kernel is generated for, derived by the caller
// (gen) from a validated spec and taken as given: DModel ≥ 1.
type Params struct {
	DModel int // floats per token and per table row
}

// AMD64 returns <pkg>_amd64.s and <pkg>_amd64.go with the addRows kernel
// of each asked-for variant; source names the spec in the header line.
func AMD64(pkg, source string, avx2, avx512 bool, p Params) ([]emit.File, error) {
	return amd64.Files(pkg, source, amd64.ISAs(avx2, avx512), []amd64.Kernel{
		{ABI: abi.AddRows, Emit: func(g *amd64.Gen) { gen{g}.addRows(p) }},
	})
}

// NEON returns <pkg>_arm64.s and <pkg>_arm64.go with the NEON addRows
// kernel.
func NEON(pkg, source string, p Params) ([]emit.File, error) {
	name := arm64.Symbol(abi.AddRows)
	return arm64.Files(pkg, source, []arm64.Kernel{{
		ABI:  abi.AddRows,
		Name: name,
		Doc:  fmt.Sprintf("adds table row idx[t] (%d floats) to token t of x.", p.DModel),
		Emit: func(e *arm64.Emitter) { addRows(e, name, p.DModel) },
	}})
}
