package family

import (
	"fmt"

	"github.com/posenc/posenc/internal/emit"
)

// AsmFiles runs a family's two assembly programs as the targets ask: amd64
// (AVX2 and/or AVX-512 in one .s) when avx2 or avx512, NEON when neon. The
// families' Derived.AsmFiles call it with closures over their asm/ package.
func AsmFiles(avx2, avx512, neon bool, amd64 func() ([]emit.File, error), arm64 func() ([]emit.File, error)) ([]emit.File, error) {
	var files []emit.File
	if avx2 || avx512 {
		fs, err := amd64()
		if err != nil {
			return nil, fmt.Errorf("amd64: %w", err)
		}
		files = append(files, fs...)
	}
	if neon {
		fs, err := arm64()
		if err != nil {
			return nil, fmt.Errorf("arm64: %w", err)
		}
		files = append(files, fs...)
	}
	return files, nil
}
