package plot

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"gonum.org/v1/plot/palette"
)

// absPositions is the number of positions of the absolute-encoding
// pictures.
const absPositions = 100

// encodingRows returns the rows of the heatmap and components pictures
// for p in [0, n), one row of width dims per position, as the spec's
// encoding gives them (plotsOf: absoluteRows or xlRows).
func encodingRows(s *spec.Spec, n int) (rows [][]float64, dims int) {
	return plotsFor(s).rows(s, n)
}

// absoluteRows returns PE(p) for p in [0, n): verify.AbsoluteEncoding, for
// sinusoidal (Vaswani et al. 2017 §3.5), algebraic (PE(p, i) =
// p/(max_len−1)^(i/(d−1))), binary (bit i of p) and the sinusoidal half of
// mixture.
func absoluteRows(s *spec.Spec, n int) (rows [][]float64, dims int) {
	rows = make([][]float64, n)
	for p := range rows {
		rows[p] = verify.AbsoluteEncoding(s, p)
	}
	return rows, s.DModel
}

// xlRows returns Transformer-XL's unprojected relative sinusoid R_p (Dai et
// al. 2019 §3.3, verify.XLRelative) for the distances p in [0, n).
func xlRows(s *spec.Spec, n int) (rows [][]float64, dims int) {
	rows = make([][]float64, n)
	d := s.HeadDim
	r := verify.XLRelative(s, n) // row m holds distance n−1−m
	for p := range rows {
		m := n - 1 - p
		rows[p] = r[m*d : (m+1)*d]
	}
	return rows, d
}

// encodingTitle names the encoding plotted, saying what mixture and xl show.
func encodingTitle(s *spec.Spec) string {
	return fmt.Sprintf("%s: %s", s.Name, plotsFor(s).subject)
}

// positionLabel is the axis label of p in encodingRows.
func positionLabel(s *spec.Spec) string { return plotsFor(s).position }

// heatmapFigure draws PE[position][dim] with matplotlib's "coolwarm"
// diverging map.
func heatmapFigure(s *spec.Spec) *Figure {
	rows, d := encodingRows(s, absPositions)
	g := newGrid(ints(0, d-1), ints(0, absPositions-1))
	for p, row := range rows {
		for i, v := range row {
			g.set(i, p, v)
		}
	}
	return heatmapChart(encodingTitle(s), "encoding dimension", positionLabel(s), "PE", g)
}

// componentSeries returns PE(p, i) against p for the dims i = 0, k, 2k, …
// with k = max(1, d/10), each coloured by its dimension on the colour map
// cm (indexRamp over [0, d−1]), and that map.
func componentSeries(s *spec.Spec) ([]series, palette.ColorMap) {
	rows, d := encodingRows(s, absPositions)
	cm := indexRamp()
	cm.SetMin(0)
	cm.SetMax(float64(max(d-1, 1)))
	var ss []series
	for i := 0; i < d; i += max(1, d/10) {
		y := make([]float64, len(rows))
		for p, row := range rows {
			y[p] = row[i]
		}
		c, err := cm.At(float64(i))
		if err != nil {
			panic(err) // i is within [0, d−1]
		}
		ss = append(ss, series{dim: i, x: ints(0, len(rows)-1), y: y, color: c})
	}
	return ss, cm
}

// componentsFigure plots componentSeries, with a colour bar from dimension
// to colour in place of a legend: a categorical palette runs out of
// distinguishable colours long before d/10 + 1 lines.
func componentsFigure(s *spec.Spec) (*Figure, error) {
	ss, cm := componentSeries(s)
	f, err := lineChart(encodingTitle(s)+", components", positionLabel(s), "PE", axes{}, ss)
	if err != nil {
		return nil, err
	}
	f.ColorBar = colorBar(cm, "encoding dimension")
	return f, nil
}
