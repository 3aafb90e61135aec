package family

import (
	"fmt"
	"io"
	"math"
)

// PrintFreqs prints a titled list of frequencies with their wavelengths,
// for the families' Explain.
func PrintFreqs(w io.Writer, title string, f []float64) {
	fmt.Fprintf(w, "%s (%d):\n", title, len(f))
	for i, x := range f {
		fmt.Fprintf(w, "  %3d  %.17g  wavelength %.6g\n", i, x, 2*math.Pi/x)
	}
}
