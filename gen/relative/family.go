package relative

import (
	"fmt"
	"io"
	"math"

	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Family is the relative family (members rpe_full and xl).
var Family = family.Family{
	Name:     "relative",
	Backends: func(string) family.Backends { return Backends },
	Summary:  summary,
	Derive:   func(s *spec.Spec) (family.Derived, error) { return derive(s) },
}

// Input is the spec c was derived from.
func (c *Consts) Input() *spec.Spec { return c.Spec }

// GoFiles returns the Go files of the member's package.
func (c *Consts) GoFiles() ([]emit.File, error) {
	if isXL(c.Spec) {
		return xlFiles(c)
	}
	return rpeFullFiles(c)
}

// Explain prints the table shape (rpe_full) or the sinusoid (xl).
func (c *Consts) Explain(w io.Writer) {
	s := c.Spec
	if isXL(s) {
		fmt.Fprintf(w, "head_dim %d, base %g; R_rel[2i] = sin(rel/base^(2i/d)), R_rel[2i+1] = cos(rel/base^(2i/d)), rel = query − key\n", s.HeadDim, s.Base)
		if c.AbsFreqs != nil {
			family.PrintFreqs(w, "inverse frequencies 1/base^(2i/d)", c.AbsFreqs)
		}
		return
	}
	fmt.Fprintf(w, "head_dim %d, r_max %d: tables a^K, a^V of %d rows × %d; row(rel) = clip(rel, ±%d) + %d, rel = query − key\n",
		s.HeadDim, s.RMax, c.NumBuckets, s.HeadDim, c.BucketSpan, c.BucketSpan)
	fmt.Fprintf(w, "scores scaled by 1/√head_dim = %.9g\n", 1/math.Sqrt(float64(s.HeadDim)))
}

// summary is a relative spec's shape for `posenc list`.
func summary(s *spec.Spec) string {
	if isXL(s) {
		return fmt.Sprintf("head_dim %d, base %g", s.HeadDim, s.Base)
	}
	return fmt.Sprintf("head_dim %d, r_max %d", s.HeadDim, s.RMax)
}
