package absolute

import (
	"fmt"
	"io"

	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// Explain prints the shape, the sinusoid frequencies and the binary bit count.
func (c *Consts) Explain(w io.Writer) {
	s := c.Spec
	fmt.Fprintf(w, "d_model %d, max_len %d\n", s.DModel, s.MaxLen)
	if c.AbsFreqs != nil {
		family.PrintFreqs(w, "inverse frequencies 1/base^(2i/d)", c.AbsFreqs)
	}
	if memberOf(s) == binary {
		fmt.Fprintf(w, "binary: %d bits (PE(p,i) = (p>>i)&1 for i < %d, else 0)\n", c.BinBits, c.BinBits)
	}
}

// summary is an absolute spec's shape for `posenc list`.
func summary(s *spec.Spec) string {
	return fmt.Sprintf("d_model %d, max_len %d", s.DModel, s.MaxLen)
}
