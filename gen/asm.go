package gen

import (
	"fmt"

	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// asmFiles returns the assembly files of s (an encoding with assembly
// kernels): AVX2/AVX-512 from asm/amd64 and NEON from asm/arm64, as the
// spec's targets ask.
func asmFiles(c family.Derived, s *spec.Spec) ([]emit.File, error) {
	_ = c
	var files []emit.File
	if s.HasTarget(spec.TargetAVX2) || s.HasTarget(spec.TargetAVX512) {
		fs, err := amd64.Files(amd64.Params{
			Package:   s.Name,
			Source:    s.File,
			Encoding:  s.Encoding,
			HeadDim:   s.HeadDim,
			RotaryDim: s.RotaryDim,
			Layout:    s.Layout,
			DModel:    s.DModel,
			AVX2:      s.HasTarget(spec.TargetAVX2),
			AVX512:    s.HasTarget(spec.TargetAVX512),
		})
		if err != nil {
			return nil, fmt.Errorf("%s: amd64: %w", s.File, err)
		}
		files = append(files, fs...)
	}
	if s.HasTarget(spec.TargetNEON) {
		fs, err := arm64.Files(arm64.Params{
			Package:   s.Name,
			Source:    s.File,
			Encoding:  s.Encoding,
			HeadDim:   s.HeadDim,
			RotaryDim: s.RotaryDim,
			Layout:    s.Layout,
			DModel:    s.DModel,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: arm64: %w", s.File, err)
		}
		files = append(files, fs...)
	}
	return files, nil
}
