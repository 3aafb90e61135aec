package plot

import (
	"image/color"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one rendered picture: a gonum plot and, to its right, a
// vertical color bar (heatmaps) or a legend too long to sit inside the plot.
type Figure struct {
	Plot     *gonum.Plot
	ColorBar *gonum.Plot   // nil when the picture has none
	Legend   *gonum.Legend // nil when the legend (if any) is the plot's own
}

// colorBarWidth is the width of a figure's color bar strip, labels
// included; colorBarGap is the space between the plot and the strip.
const (
	colorBarWidth = 24 * vg.Millimeter
	colorBarGap   = 4 * vg.Millimeter
)

// Draw draws the figure on c. A color bar or side legend is vertically
// aligned with the plot's data area.
func (f *Figure) Draw(c draw.Canvas) {
	// One background for the whole picture: the plots fill only their own
	// part, and an SVG is otherwise transparent.
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	var side vg.Length
	switch {
	case f.ColorBar != nil:
		side = colorBarWidth
	case f.Legend != nil:
		side = f.Legend.Rectangle(c).Size().X + 2*colorBarGap
	default:
		f.Plot.Draw(c)
		return
	}
	main := draw.Crop(c, 0, -side, 0, 0)
	f.Plot.Draw(main)
	data := f.Plot.DataCanvas(main)
	strip := draw.Crop(c, c.Max.X-c.Min.X-side+colorBarGap, 0, data.Min.Y-c.Min.Y, data.Max.Y-c.Max.Y)
	if f.ColorBar != nil {
		f.ColorBar.Draw(strip)
		return
	}
	f.Legend.Top, f.Legend.Left = true, true
	f.Legend.Draw(strip)
}
