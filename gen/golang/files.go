package golang

import (
	"fmt"

	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Files returns the Go files of the generated package for one spec: the
// API and tables (<name>.go), the generic kernels (<name>_generic.go), the
// variant registry (<name>_variants.go) and the verification test
// (<name>_test.go). Assembly files come from asm/amd64 and asm/arm64.
func Files(c *consts.Set) ([]emit.File, error) {
	switch c.Spec.Encoding {
	case spec.RoPE:
		return ropeFiles(c)
	case spec.ALiBi, spec.RPEBias:
		return biasFiles(c)
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned, spec.Mixture:
		return absoluteFiles(c)
	case spec.RPEFull:
		return rpeFullFiles(c)
	case spec.XL:
		return xlFiles(c)
	}
	return nil, fmt.Errorf("golang: %s: encoding %q has no Go emitter yet", c.Spec.File, c.Spec.Encoding)
}

// hasAssembly reports whether s's encoding has assembly kernels.
func hasAssembly(s *spec.Spec) bool {
	a, _ := emit.Backends(s.Encoding)
	return a
}
