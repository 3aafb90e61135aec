package absolute

import (
	"fmt"
	"io"

	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// Explain prints the shape, the formula table (its rows, value type and
// size) and how Add rounds, the sinusoid frequencies and the binary bit
// count.
func (c *Consts) Explain(w io.Writer) {
	s := c.Spec
	fmt.Fprintf(w, "d_model %d, max_len %d\n", s.DModel, s.MaxLen)
	if absHasFormula(s) {
		rows, elem := absTableRows(s), absTableElem(s)
		kind := map[int]string{4: "float32", 8: "float64"}[elem]
		fmt.Fprintf(w, "table: %d rows of %s (%.1f MiB, capped at %d MiB); other positions computed exactly\n",
			rows, kind, float64(rows)*float64(s.DModel)*float64(elem)/(1<<20), absTableBytes>>20)
		if memberOf(s).wide() {
			fmt.Fprintln(w, "Add: x + PE summed in float64 and rounded once to float32 (PE up to 2^31 would lose half a float32 ulp, more than the bound, when x ≈ −PE)")
		}
	}
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
