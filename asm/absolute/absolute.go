// Package absolute generates the assembly kernels of the absolute position
// encodings (sinusoidal, Vaswani et al. 2017; learned; algebraic; binary):
// addRows (abi.AddRows), which adds a float32 table row to every token, and
// addRows64 (abi.AddRows64), which adds a float64 row with one rounding (the
// algebraic encoding), for AVX2+FMA and AVX-512 (avo, asm/amd64) and NEON
// (asm/arm64), specialized to a compile-time model width.
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
	DModel int  // floats per token and per table row
	Wide   bool // the table is float64: emit addRows64 instead of addRows
}

// kernel is the ABI kernel p asks for.
func (p Params) kernel() abi.Kernel {
	if p.Wide {
		return abi.AddRows64
	}
	return abi.AddRows
}

// AMD64 returns <pkg>_amd64.s and <pkg>_amd64.go with the addRows (or,
// Wide, addRows64) kernel of each asked-for variant; source names the spec
// in the header line.
func AMD64(pkg, source string, avx2, avx512 bool, p Params) ([]emit.File, error) {
	return amd64.Files(pkg, source, amd64.ISAs(avx2, avx512), []amd64.Kernel{
		{ABI: p.kernel(), Emit: func(g *amd64.Gen) {
			if p.Wide {
				gen{g}.addRows64(p)
			} else {
				gen{g}.addRows(p)
			}
		}},
	})
}

// NEON returns <pkg>_arm64.s and <pkg>_arm64.go with the NEON addRows (or,
// Wide, addRows64) kernel.
func NEON(pkg, source string, p Params) ([]emit.File, error) {
	k := p.kernel()
	name := arm64.Symbol(k)
	doc := fmt.Sprintf("adds table row idx[t] (%d floats) to token t of x.", p.DModel)
	emitFn := func(e *arm64.Emitter) { addRows(e, name, p.DModel) }
	if p.Wide {
		doc = fmt.Sprintf("adds float64 table row idx[t] (%d values) to token t of x, rounding once.", p.DModel)
		emitFn = func(e *arm64.Emitter) { addRows64(e, name, p.DModel) }
	}
	return arm64.Files(pkg, source, []arm64.Kernel{{ABI: k, Name: name, Doc: doc, Emit: emitFn}})
}
