// Package gen turns a parsed spec into the files of its generated package:
// it derives the constants once (gen/consts) and hands them to every
// emitter the spec's targets ask for — gen/golang (always), the assembly
// programs of asm/ (asmFiles) and gen/cuda.
package gen

import (
	"fmt"
	"sort"

	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/gen/golang"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Generate returns every file of the package generated for s, sorted by
// name. It writes nothing.
func Generate(s *spec.Spec) ([]emit.File, error) {
	c, err := consts.Derive(s)
	if err != nil {
		return nil, err
	}
	files, err := golang.Files(c)
	if err != nil {
		return nil, err
	}
	// Encodings without a backend get no files for it (emit.Backends).
	_, hasCUDA := emit.Backends(s.Encoding)
	fs, err := asmFiles(c, s)
	if err != nil {
		return nil, err
	}
	files = append(files, fs...)
	if s.HasTarget(spec.TargetCUDA) && hasCUDA {
		fs, err := cuda.Files(c)
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
