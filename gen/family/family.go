// Package family declares what an encoding family provides to the
// generator and the command: the backends each member encoding
// has, the one-line summary of `posenc list`, and Derive, which computes a
// spec's constants once and returns the value every emitter reads. The
// table of families (encoding → family) is gen/families.go.
package family

import (
	"io"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Backends are the generated backends of an encoding besides the generic
// Go kernels. A spec's targets may name more; the missing ones are simply
// not emitted, and tests only require the variants that exist.
type Backends struct {
	Assembly bool // AVX2, AVX-512 and NEON kernels
	CUDA     bool // the .cu/.cuh pair
}

// Family is one encoding family. Its member encodings are listed by the
// table, gen/families.go.
type Family struct {
	Name string // the family's name, also its CUDA template (templates.CUDAFile)

	// Backends returns the backends of a member encoding.
	Backends func(encoding string) Backends
	// Summary is a spec's shape in one short phrase (`posenc list`).
	Summary func(s *spec.Spec) string
	// Derive computes the constants of a parsed (defaulted and validated)
	// spec of a member encoding.
	Derive func(s *spec.Spec) (Derived, error)
}

// Derived is one spec with its family's derived constants.
type Derived interface {
	// Input is the spec the constants were derived from.
	Input() *spec.Spec
	// GoFiles are the Go files of the generated package: the API and
	// tables, the generic kernels, the variant registry and the test.
	GoFiles() ([]emit.File, error)
	// AsmFiles are <name>_amd64.s/.go (when avx2 or avx512) and
	// <name>_arm64.s/.go (when neon), from the family's programs in asm/;
	// nil for a member without assembly (Backends.Assembly false).
	AsmFiles(avx2, avx512, neon bool) ([]emit.File, error)
	// CUDAFiles are <name>.cu and <name>.cuh (nil when the spec does not
	// list the cuda target).
	CUDAFiles() ([]emit.File, error)
	// Explain prints every derived constant (`posenc explain`), after the
	// line naming the spec.
	Explain(w io.Writer)
}
