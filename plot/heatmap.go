package plot

import (
	"math"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
)

// grid is the data of a heatmap: z[r·len(xs)+c] is the cell at (xs[c], ys[r]).
// It implements plotter.GridXYZ.
type grid struct {
	xs, ys []float64
	z      []float64
}

func newGrid(xs, ys []float64) *grid {
	return &grid{xs: xs, ys: ys, z: make([]float64, len(xs)*len(ys))}
}

// Dims returns the number of columns and rows.
func (g *grid) Dims() (c, r int) { return len(g.xs), len(g.ys) }

// Z returns the value of the cell in column c and row r.
func (g *grid) Z(c, r int) float64 { return g.z[r*len(g.xs)+c] }

// X returns the x coordinate of column c.
func (g *grid) X(c int) float64 { return g.xs[c] }

// Y returns the y coordinate of row r.
func (g *grid) Y(r int) float64 { return g.ys[r] }

// set stores the value of column c and row r.
func (g *grid) set(c, r int, v float64) { g.z[r*len(g.xs)+c] = v }

// span returns the smallest and largest value, widened to a non-empty
// range when every cell is equal.
func (g *grid) span() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range g.z {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	return lo, hi
}

// coolwarm returns Moreland's smooth blue–red diverging color map (Kenneth
// Moreland, "Diverging Color Maps for Scientific Visualization", 2009): the
// "coolwarm" map of matplotlib.
func coolwarm() palette.ColorMap { return moreland.SmoothBlueRed() }

// colorMap returns the color map of a heatmap over [lo, hi] and the range
// it spans: coolwarm centred on 0 when the values have both signs, so that
// 0 is the neutral color; otherwise Moreland's sequential black-body map.
func colorMap(lo, hi float64) (cm palette.ColorMap, min, max float64) {
	if lo < 0 && hi > 0 {
		m := math.Max(-lo, hi)
		lo, hi = -m, m
		cm = coolwarm()
	} else {
		cm = moreland.ExtendedBlackBody()
	}
	cm.SetMax(hi)
	cm.SetMin(lo)
	return cm, lo, hi
}

// heatmapChart draws g as a rasterized heatmap (one image pixel per cell, so
// an SVG stays small) with a vertical color bar labelled zLabel.
func heatmapChart(title, xLabel, yLabel, zLabel string, g *grid) *Figure {
	cm, lo, hi := colorMap(g.span())
	p := gonum.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	h := plotter.NewHeatMap(g, cm.Palette(256))
	h.Min, h.Max = lo, hi
	h.Rasterized = true
	p.Add(h)

	return &Figure{Plot: p, ColorBar: colorBar(cm, zLabel)}
}

// colorBar returns the plot of a vertical color bar of cm over its range,
// labelled label.
func colorBar(cm palette.ColorMap, label string) *gonum.Plot {
	bar := gonum.New()
	bar.HideX()
	bar.X.Padding, bar.Y.Padding = 0, 0
	bar.Y.Label.Text = label
	bar.Y.Tick.Marker = plainTicks{}
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: 256})
	return bar
}
