package plot

import (
	"fmt"
	"image/color"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one line of a line chart.
type series struct {
	label  string
	x, y   []float64
	color  color.Color // nil: the chart's next colour of lineColors
	dashes []vg.Length // dash pattern; nil: solid
	step   bool        // drawn as steps (integer-valued data)
	dim    int         // components: the encoding dimension drawn
}

// axes says which axes of a line chart are logarithmic.
type axes struct{ logX, logY bool }

// maxBelowLegend is the most legend entries drawn below a line chart, in
// two columns when there are more than two; longer legends go to its right
// in one column. Either way the legend is outside the data area and clear
// of the title (Figure.layout).
const maxBelowLegend = 4

// lineChart draws the series in one plot with a legend (series without a
// label stay out of it). Series without a colour take the next one of
// lineColors; more of them than lineColors holds is an error, so that no
// two lines share a colour. Values must be positive on a log axis.
func lineChart(title, xLabel, yLabel string, ax axes, ss []series) (*Figure, error) {
	p := gonum.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	if ax.logX {
		p.X.Scale, p.X.Tick.Marker = gonum.LogScale{}, logTicks{}
	}
	f := &Figure{Plot: p}
	if ax.logY {
		p.Y.Scale, p.Y.Tick.Marker = gonum.LogScale{}, logTicks{}
		f.yLabel = yLabel // see Figure.yLabel
	} else {
		p.Y.Label.Text = yLabel
	}
	p.Add(plotter.NewGrid())
	n := labelled(ss)
	f.legendBelow = n <= maxBelowLegend
	rows := n // entries per legend column
	if f.legendBelow && n > 2 {
		rows = (n + 1) / 2
	}
	entries := 0
	next := 0
	for _, s := range ss {
		if len(s.x) != len(s.y) || len(s.x) == 0 {
			return nil, fmt.Errorf("plot: series %q has %d x and %d y values", s.label, len(s.x), len(s.y))
		}
		xy := make(plotter.XYs, len(s.x))
		for i := range s.x {
			if (ax.logX && !(s.x[i] > 0)) || (ax.logY && !(s.y[i] > 0)) {
				return nil, fmt.Errorf("plot: series %q: point (%g, %g) on a log axis", s.label, s.x[i], s.y[i])
			}
			xy[i] = plotter.XY{X: s.x[i], Y: s.y[i]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plot: series %q: %w", s.label, err)
		}
		l.Width = vg.Points(1.25)
		l.Color = s.color
		if l.Color == nil {
			if next == len(lineColors) {
				return nil, fmt.Errorf("plot: more than %d series to colour: give them colours of a colour map", len(lineColors))
			}
			l.Color = lineColors[next]
			next++
		}
		l.Dashes = s.dashes
		if s.step {
			l.StepStyle = plotter.MidStep
		}
		p.Add(l)
		f.lines = append(f.lines, l)
		if s.label != "" {
			if entries%rows == 0 {
				col := gonum.NewLegend()
				f.legend = append(f.legend, &col)
			}
			f.legend[len(f.legend)-1].Add(s.label, l)
			entries++
		}
	}
	return f, nil
}

// labelled counts the series with a legend label.
func labelled(ss []series) int {
	n := 0
	for _, s := range ss {
		if s.label != "" {
			n++
		}
	}
	return n
}

// ints returns the float64 values lo, lo+1, …, hi.
func ints(lo, hi int) []float64 {
	v := make([]float64, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		v = append(v, float64(i))
	}
	return v
}
