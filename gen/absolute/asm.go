package absolute

import (
	asm "github.com/posenc/posenc/asm/absolute"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/internal/emit"
)

// AsmFiles returns the AVX2/AVX-512 and NEON addRows kernels of
// asm/absolute for rows of d_model floats (addRows64, float64 rows, for a
// wide member); nil for mixture, which has generic Go kernels only
// (member.backends).
func (c *Consts) AsmFiles(avx2, avx512, neon bool) ([]emit.File, error) {
	s := c.Spec
	if !memberOf(s).backends().Assembly {
		return nil, nil
	}
	p := asm.Params{DModel: s.DModel, Wide: memberOf(s).wide()}
	return family.AsmFiles(avx2, avx512, neon,
		func() ([]emit.File, error) { return asm.AMD64(s.Name, s.File, avx2, avx512, p) },
		func() ([]emit.File, error) { return asm.NEON(s.Name, s.File, p) })
}
