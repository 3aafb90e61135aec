package plot

import (
	"image/color"

	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/vg"
)

// lineColors is the palette of a line chart's series, in order: Okabe and
// Ito's colour-blind-safe set ("Color Universal Design", 2008) with its
// light orange, sky blue and yellow replaced by darker goldenrod and
// purple, so that every colour has a contrast of at least 3:1 (WCAG 2.1
// §1.4.11, non-text contrast) against the white background. A chart with
// more series than colours is an error (lineChart): colours never repeat.
var lineColors = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{170, 120, 0, 255},   // dark goldenrod
	color.RGBA{106, 61, 154, 255},  // purple
}

// gray is the color of reference lines (bounds, thresholds).
var gray = color.Gray{Y: 96}

// Dash patterns: besides its colour, each line of the error chart has its
// own pattern, so that it reads in grey print and for colour-blind readers.
var (
	solid   []vg.Length
	dotted  = []vg.Length{vg.Points(1.5), vg.Points(2)}
	dashDot = []vg.Length{vg.Points(6), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}
	dashed  = []vg.Length{vg.Points(5), vg.Points(3)}
	longDot = []vg.Length{vg.Points(9), vg.Points(3)}
)

// indexRamp returns the colour map of series ordered by an index (ALiBi
// heads, encoding dimensions), with a colour bar or legend saying which is
// which: dark purple, blue, teal, green, olive, vermillion, crimson. Its
// hue runs a long way so that ten or more lines stay apart, and every
// colour on it has at least 3:1 contrast against white, which the light
// end of viridis or the white middle of a diverging map (coolwarm) has not.
func indexRamp() palette.ColorMap {
	return &ramp{stops: []color.RGBA{
		{68, 1, 84, 255},    // viridis at 0
		{59, 82, 139, 255},  // viridis at 0.25
		{33, 145, 140, 255}, // viridis at 0.5
		{0, 140, 60, 255},
		{150, 130, 0, 255},
		{213, 94, 0, 255},
		{165, 15, 21, 255},
	}, max: 1}
}

// indexColors returns n colours of indexRamp for the indices 0 … n−1.
func indexColors(n int) []color.Color {
	cm := indexRamp()
	cm.SetMax(float64(max(n-1, 1)))
	cs := make([]color.Color, n)
	for i := range cs {
		c, err := cm.At(float64(i))
		if err != nil {
			panic(err) // i is within [0, n−1]
		}
		cs[i] = c
	}
	return cs
}
