package plot

import (
	"image/color"
	"math"

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
	ColorBar *gonum.Plot // nil when the picture has none

	legend      []*gonum.Legend // the legend's columns, left to right; none without one
	legendBelow bool            // the legend goes below the plot, not to its right
	// yLabel is the y axis label drawn by the figure left of the plot
	// instead of by gonum, which on a log axis reserves room for it around
	// the linear midpoint of the range (near the top) and so pushes the
	// data area far below the title.
	yLabel string
	lines  []*plotter.Line // a line chart's lines, in the order of its series
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
	plot  draw.Canvas    // the gonum plot: title, axes and data area
	data  vg.Rectangle   // the data area inside plot
	title vg.Rectangle   // the band of plot's title (empty without one)
	side  *draw.Canvas   // the color bar's strip, or nil
	leg   *vg.Rectangle  // the whole legend's rectangle, or nil
	cols  []vg.Rectangle // the rectangle of each legend column
}

// layout places the figure on c: the color bar or a long legend in a strip
// to the right of the plot, aligned with the data area; a short legend
// centred under the data area, below the x axis.
func (f *Figure) layout(c draw.Canvas) layout {
	var l layout
	var legSize vg.Point
	var colSizes []vg.Point
	for i, col := range f.legend {
		col.Top, col.Left = true, true
		sz := col.Rectangle(c).Size()
		// Legend.Draw starts a descent below the top and its last row
		// reaches a descent below the rectangle it reports.
		sz.Y += col.TextStyle.FontExtents().Descent
		colSizes = append(colSizes, sz)
		if i > 0 {
			legSize.X += colorBarGap
		}
		legSize.X += sz.X
		legSize.Y = max(legSize.Y, sz.Y)
	}
	hasLegend := len(f.legend) > 0
	switch {
	case f.ColorBar != nil:
		l.plot = draw.Crop(c, 0, -colorBarWidth, 0, 0)
	case hasLegend && f.legendBelow:
		l.plot = draw.Crop(c, 0, 0, legSize.Y+colorBarGap, 0)
	case hasLegend:
		l.plot = draw.Crop(c, 0, -(legSize.X + 2*colorBarGap), 0, 0)
	default:
		l.plot = c
	}
	if f.yLabel != "" {
		l.plot = draw.Crop(l.plot, f.yLabelWidth(), 0, 0, 0)
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
	case hasLegend && f.legendBelow:
		x := (l.data.Min.X+l.data.Max.X)/2 - legSize.X/2
		y := c.Min.Y + colorBarGap/2
		l.leg = &vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + legSize.X, Y: y + legSize.Y}}
	case hasLegend:
		x := c.Max.X - legSize.X - colorBarGap
		l.leg = &vg.Rectangle{Min: vg.Point{X: x, Y: l.data.Max.Y - legSize.Y}, Max: vg.Point{X: x + legSize.X, Y: l.data.Max.Y}}
	}
	if l.leg != nil {
		x := l.leg.Min.X
		for _, sz := range colSizes {
			l.cols = append(l.cols, vg.Rectangle{Min: vg.Point{X: x, Y: l.leg.Max.Y - sz.Y}, Max: vg.Point{X: x + sz.X, Y: l.leg.Max.Y}})
			x += sz.X + colorBarGap
		}
	}
	return l
}

// yLabelWidth is the width of the strip of yLabel.
func (f *Figure) yLabelWidth() vg.Length {
	ax := f.Plot.Y.Label
	return ax.TextStyle.Height(f.yLabel) + ax.TextStyle.FontExtents().Descent + ax.Padding
}

// Draw draws the figure on c.
func (f *Figure) Draw(c draw.Canvas) {
	// One background for the whole picture: the plots fill only their own
	// part, and an SVG is otherwise transparent.
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	l := f.layout(c)
	f.Plot.Draw(l.plot)
	if f.yLabel != "" {
		// As gonum draws a vertical axis label, centred on the data area.
		ax := f.Plot.Y.Label
		sty := ax.TextStyle
		sty.Rotation += math.Pi / 2
		x := c.Min.X + ax.TextStyle.Height(f.yLabel) - ax.TextStyle.FontExtents().Descent
		c.FillText(sty, vg.Point{X: x, Y: (l.data.Min.Y + l.data.Max.Y) / 2}, f.yLabel)
	}
	if l.side != nil {
		f.ColorBar.Draw(*l.side)
	}
	for i, col := range f.legend {
		col.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: l.cols[i]})
	}
}
