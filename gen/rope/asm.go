package rope

import (
	asm "github.com/posenc/posenc/asm/rope"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// AsmFiles returns the AVX2/AVX-512 and NEON rotate kernels of asm/rope,
// specialized to the derived shape (RowLen as derived here, never again).
func (c *Consts) AsmFiles(avx2, avx512, neon bool) ([]emit.File, error) {
	s := c.Spec
	p := asm.Params{HeadDim: s.HeadDim, RotaryDim: s.RotaryDim, RowLen: c.RowLen, Interleaved: s.Layout == spec.LayoutInterleaved,
		ScaleRows: s.AttnTemperature != nil}
	if c.storage16() {
		p.Storage = s.DType
	}
	p.AttentionHeadDim = s.HeadDim
	p.FusedRope = c.fusedRope()
	return family.AsmFiles(avx2, avx512, neon,
		func() ([]emit.File, error) { return asm.AMD64(s.Name, s.File, avx2, avx512, p) },
		func() ([]emit.File, error) { return asm.NEON(s.Name, s.File, p) })
}
