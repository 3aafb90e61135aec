package plot

import (
	"image/color"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one rendered picture: a gonum plot, with a vertical color bar
// (heatmaps, lines coloured by an index) to its right or a legend below it
// or to its right: never inside the data area (Figure.layout).
type Figure struct {
	Plot     *gonum.Plot
	ColorBar *gonum.Plot   // nil when the picture has none
	Legend   *gonum.Legend // nil when the picture has none

	legendBelow bool            // the legend goes below the plot, not to its right
	lines       []*plotter.Line // a line chart's lines, in the order of its series
}

// colorBarWidth is the width of a figure's color bar strip, labels
// included; colorBarGap is the space between the plot and the strip or
// legend.
const (
	colorBarWidth = 24 * vg.Millimeter
	colorBarGap   = 4 * vg.Millimeter
)

// layout is where Draw puts the parts of a figure on a canvas.
type layout struct {
	plot  draw.Canvas   // the gonum plot: title, axes and data area
	data  vg.Rectangle  // the data area inside plot
	title vg.Rectangle  // the band of plot's title (empty without one)
	side  *draw.Canvas  // the color bar's strip, or nil
	leg   *vg.Rectangle // the legend's rectangle, or nil
}

// layout places the figure on c: the color bar or a long legend in a strip
// to the right of the plot, aligned with the data area; a short legend
// centred under the data area, below the x axis.
func (f *Figure) layout(c draw.Canvas) layout {
	var l layout
	var legSize vg.Point
	if f.Legend != nil {
		f.Legend.Top, f.Legend.Left = true, true
		legSize = f.Legend.Rectangle(c).Size()
		// Legend.Draw starts a descent below the top and its last row
		// reaches a descent below the rectangle it reports.
		legSize.Y += f.Legend.TextStyle.FontExtents().Descent
	}
	switch {
	case f.ColorBar != nil:
		l.plot = draw.Crop(c, 0, -colorBarWidth, 0, 0)
	case f.Legend != nil && f.legendBelow:
		l.plot = draw.Crop(c, 0, 0, legSize.Y+colorBarGap, 0)
	case f.Legend != nil:
		l.plot = draw.Crop(c, 0, -(legSize.X + 2*colorBarGap), 0, 0)
	default:
		l.plot = c
	}
	l.data = f.Plot.DataCanvas(l.plot).Rectangle
	if t := f.Plot.Title; t.Text != "" {
		h := t.TextStyle.Rectangle(t.Text).Size().Y + t.Padding
		l.title = vg.Rectangle{Min: vg.Point{X: l.plot.Min.X, Y: l.plot.Max.Y - h}, Max: l.plot.Max}
	}
	switch {
	case f.ColorBar != nil:
		s := draw.Crop(c, c.Max.X-c.Min.X-colorBarWidth+colorBarGap, 0, l.data.Min.Y-c.Min.Y, l.data.Max.Y-c.Max.Y)
		l.side = &s
	case f.Legend != nil && f.legendBelow:
		x := (l.data.Min.X+l.data.Max.X)/2 - legSize.X/2
		y := c.Min.Y + colorBarGap/2
		l.leg = &vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + legSize.X, Y: y + legSize.Y}}
	case f.Legend != nil:
		x := c.Max.X - legSize.X - colorBarGap
		l.leg = &vg.Rectangle{Min: vg.Point{X: x, Y: l.data.Max.Y - legSize.Y}, Max: vg.Point{X: x + legSize.X, Y: l.data.Max.Y}}
	}
	return l
}

// Draw draws the figure on c.
func (f *Figure) Draw(c draw.Canvas) {
	// One background for the whole picture: the plots fill only their own
	// part, and an SVG is otherwise transparent.
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	l := f.layout(c)
	f.Plot.Draw(l.plot)
	if l.side != nil {
		f.ColorBar.Draw(*l.side)
	}
	if l.leg != nil {
		f.Legend.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: *l.leg})
	}
}
