package relative

import (
	asm "github.com/posenc/posenc/asm/relative"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/internal/emit"
)

// AsmFiles returns the AVX2/AVX-512 and NEON kernels of asm/relative:
// dotRows, scoresRow and axpyRows for rpe_full, xl's scoresRow for xl.
func (c *Consts) AsmFiles(avx2, avx512, neon bool) ([]emit.File, error) {
	s := c.Spec
	p := asm.Params{HeadDim: s.HeadDim, XL: isXL(s)}
	return family.AsmFiles(avx2, avx512, neon,
		func() ([]emit.File, error) { return asm.AMD64(s.Name, s.File, avx2, avx512, p) },
		func() ([]emit.File, error) { return asm.NEON(s.Name, s.File, p) })
}
