package gen

import (
	"fmt"

	"github.com/posenc/posenc/asm/absolute"
	"github.com/posenc/posenc/asm/bias"
	"github.com/posenc/posenc/asm/relative"
	"github.com/posenc/posenc/asm/rope"
	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// asmFiles returns the assembly files of s's AVX2/AVX-512 and NEON targets:
// it picks the encoding family's program (asm/rope, asm/bias, asm/absolute,
// asm/relative) and hands it the shape derived in c. The spec was validated
// and c derived before this; the asm programs trust both. Encodings without
// assembly (mixture, see emit.Backends) get no files.
//
// This glue is temporary: each branch belongs with its family's generator.
func asmFiles(c *consts.Set, s *spec.Spec) ([]emit.File, error) {
	if hasAsm, _ := emit.Backends(s.Encoding); !hasAsm {
		return nil, nil
	}
	avx2, avx512 := s.HasTarget(spec.TargetAVX2), s.HasTarget(spec.TargetAVX512)
	neon := s.HasTarget(spec.TargetNEON)
	var amd, arm func() ([]emit.File, error)
	switch s.Encoding {
	case spec.RoPE:
		p := rope.Params{HeadDim: s.HeadDim, RotaryDim: s.RotaryDim, RowLen: c.RowLen, Interleaved: s.Layout == spec.LayoutInterleaved}
		amd = func() ([]emit.File, error) { return rope.AMD64(s.Name, s.File, avx2, avx512, p) }
		arm = func() ([]emit.File, error) { return rope.NEON(s.Name, s.File, p) }
	case spec.ALiBi, spec.RPEBias:
		amd = func() ([]emit.File, error) { return bias.AMD64(s.Name, s.File, avx2, avx512, bias.Params{}) }
		arm = func() ([]emit.File, error) { return bias.NEON(s.Name, s.File, bias.Params{}) }
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned:
		p := absolute.Params{DModel: s.DModel}
		amd = func() ([]emit.File, error) { return absolute.AMD64(s.Name, s.File, avx2, avx512, p) }
		arm = func() ([]emit.File, error) { return absolute.NEON(s.Name, s.File, p) }
	case spec.RPEFull, spec.XL:
		p := relative.Params{HeadDim: s.HeadDim, XL: s.Encoding == spec.XL}
		amd = func() ([]emit.File, error) { return relative.AMD64(s.Name, s.File, avx2, avx512, p) }
		arm = func() ([]emit.File, error) { return relative.NEON(s.Name, s.File, p) }
	default:
		return nil, fmt.Errorf("%s: no assembly program for encoding %q", s.File, s.Encoding)
	}
	var files []emit.File
	if avx2 || avx512 {
		fs, err := amd()
		if err != nil {
			return nil, fmt.Errorf("%s: amd64: %w", s.File, err)
		}
		files = append(files, fs...)
	}
	if neon {
		fs, err := arm()
		if err != nil {
			return nil, fmt.Errorf("%s: arm64: %w", s.File, err)
		}
		files = append(files, fs...)
	}
	return files, nil
}
