// Package gen turns a parsed spec into the files of its generated package:
// the spec's family (families.go) derives the constants once and emits the
// Go files (always), the assembly (through the family's programs in asm/)
// and the CUDA files. Only the encodings a family says have a backend get
// its files.
package gen

import (
	"fmt"
	"sort"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Generate returns every file of the package generated for s, sorted by
// name. It writes nothing.
func Generate(s *spec.Spec) ([]emit.File, error) {
	c, err := Derive(s)
	if err != nil {
		return nil, err
	}
	files, err := c.GoFiles()
	if err != nil {
		return nil, err
	}
	b := Backends(s.Encoding)
	if b.Assembly {
		fs, err := c.AsmFiles(s.HasTarget(spec.TargetAVX2), s.HasTarget(spec.TargetAVX512), s.HasTarget(spec.TargetNEON))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.File, err)
		}
		files = append(files, fs...)
	}
	if s.HasTarget(spec.TargetCUDA) && b.CUDA {
		fs, err := c.CUDAFiles()
		if err != nil {
			return nil, fmt.Errorf("%s: cuda: %w", s.File, err)
		}
		files = append(files, fs...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for i := 1; i < len(files); i++ {
		if files[i].Name == files[i-1].Name {
			return nil, fmt.Errorf("%s: two emitters produced %s", s.File, files[i].Name)
		}
	}
	return files, nil
}
