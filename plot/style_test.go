package plot

import (
	"fmt"
	"image/color"
	"slices"
	"testing"

	"github.com/posenc/posenc/spec"
)

// namedFigure is a rendered figure and what it shows.
type namedFigure struct {
	name string // spec and kind
	spec string // the spec's name
	kind string
	f    *Figure
}

// figures renders every kind of every plot spec, and the error kind from
// synthetic measurements of two generated variants and the baseline.
func figures(t *testing.T) []namedFigure {
	t.Helper()
	var fs []namedFigure
	// alibi16: the most heads drawn as lines (alibiMaxLines).
	all := append(plotSpecs(t), mustParse(t, "name: alibi16\nencoding: alibi\nheads: 16\n"))
	for _, s := range all {
		for _, k := range Kinds(s.Encoding) {
			if k == KindError {
				continue
			}
			f, err := Render(s, k)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, k, err)
			}
			fs = append(fs, namedFigure{s.Name + " " + k, s.Name, k, f})
		}
	}
	s := mustZoo(t, "llama31_8b")
	f, err := RenderError(s, twoVariantCurves(s))
	if err != nil {
		t.Fatal(err)
	}
	return append(fs, namedFigure{s.Name + " error", s.Name, KindError, f})
}

// twoVariantCurves are syntheticCurves with a second generated variant, as
// on a machine whose active variant is not the generic one.
func twoVariantCurves(s *spec.Spec) *ErrorCurves {
	c := syntheticCurves(s)
	avx := ErrorCurve{Label: "generated (avx512)", Err: slices.Clone(c.Curves[0].Err)}
	c.Curves = slices.Insert(c.Curves, 1, avx)
	return c
}

// Minimum colour difference (CIE76) between any two lines of a chart:
// lines told apart only by a legend need a clear difference; lines
// coloured by their index on a colour map (ALiBi heads, encoding
// dimensions, up to 16 of them), read against a colour bar or an ordered
// legend, only need to differ. Minimum contrast of a line against the
// white background: WCAG 2.1 §1.4.11 asks 3:1 of graphical objects.
const (
	minLineDeltaE    = 20
	minIndexedDeltaE = 10
	minLineContrast  = 3
)

// No two lines of a chart share a colour, or nearly: the components chart
// of transformer_base once drew dims 0 and 357 in the same red, and the
// error chart its generated and naive curves in two reds.
func TestLineColorsDistinct(t *testing.T) {
	for _, nf := range figures(t) {
		ls := nf.f.lines
		limit := float64(minLineDeltaE)
		if nf.kind == KindComponents || nf.kind == KindBias {
			limit = minIndexedDeltaE
		}
		for i := range ls {
			for j := i + 1; j < len(ls); j++ {
				if d := deltaE(ls[i].Color, ls[j].Color); d < limit {
					t.Errorf("%s: lines %d and %d have colours %v and %v, ΔE %.1f < %g", nf.name, i, j, ls[i].Color, ls[j].Color, d, limit)
				}
			}
		}
	}
}

// Every line shows on the white background: the ALiBi heads in the middle
// of the coolwarm map were near-white on white.
func TestLinesVisibleOnWhite(t *testing.T) {
	for _, nf := range figures(t) {
		for i, l := range nf.f.lines {
			if c := contrast(l.Color, color.White); c < minLineContrast {
				t.Errorf("%s: line %d, colour %v, contrast %.2f:1 against white, want ≥ %d:1", nf.name, i, l.Color, c, minLineContrast)
			}
		}
	}
	// The colours of indexed series, up to the most lines a chart draws.
	for n := 1; n <= max(alibiMaxLines, 11); n++ {
		for i, c := range indexColors(n) {
			if r := contrast(c, color.White); r < minLineContrast {
				t.Errorf("indexColors(%d)[%d] = %v: contrast %.2f:1", n, i, c, r)
			}
		}
	}
}

// The error chart's lines differ in dash pattern as well as colour, for
// readers who cannot tell the colours apart.
func TestErrorLineDashes(t *testing.T) {
	s := mustZoo(t, "llama31_8b")
	for _, c := range []*ErrorCurves{syntheticCurves(s), twoVariantCurves(s)} {
		f, err := RenderError(s, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.lines) != len(c.Curves)+1 {
			t.Fatalf("%d lines for %d curves and the bound", len(f.lines), len(c.Curves))
		}
		for i, a := range f.lines {
			for j := i + 1; j < len(f.lines); j++ {
				if slices.Equal(a.Dashes, f.lines[j].Dashes) {
					t.Errorf("%d curves: lines %d and %d both have dashes %v", len(c.Curves), i, j, a.Dashes)
				}
			}
		}
	}
}

// A line chart never reuses a colour: more uncoloured series than the
// palette holds is an error, not a repeat.
func TestLineChartRefusesRepeatedColors(t *testing.T) {
	var ss []series
	for i := range len(lineColors) + 1 {
		ss = append(ss, series{label: fmt.Sprint(i), x: []float64{0, 1}, y: []float64{0, float64(i)}})
	}
	if _, err := lineChart("t", "x", "y", axes{}, ss[:len(lineColors)]); err != nil {
		t.Fatalf("%d series: %v", len(lineColors), err)
	}
	if _, err := lineChart("t", "x", "y", axes{}, ss); err == nil {
		t.Errorf("%d series with %d colours: no error", len(ss), len(lineColors))
	}
}
