package bias

import (
	asm "github.com/posenc/posenc/asm/bias"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/internal/emit"
)

// AsmFiles returns the AVX2/AVX-512 and NEON addRow and softmaxRow kernels
// of asm/bias (shape-free: the same for alibi and rpe_bias), and for alibi
// softmaxRamp and addRamp, which compute the ALiBi bias in registers.
func (c *Consts) AsmFiles(avx2, avx512, neon bool) ([]emit.File, error) {
	s := c.Spec
	p := asm.Params{Ramp: !isRPE(s), AttentionHeadDim: s.HeadDim}
	return family.AsmFiles(avx2, avx512, neon,
		func() ([]emit.File, error) { return asm.AMD64(s.Name, s.File, avx2, avx512, p) },
		func() ([]emit.File, error) { return asm.NEON(s.Name, s.File, p) })
}
