package plot

import (
	"fmt"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
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
// with k = max(1, d/10).
func componentSeries(s *spec.Spec) []series {
	rows, d := encodingRows(s, absPositions)
	var ss []series
	for i := 0; i < d; i += max(1, d/10) {
		y := make([]float64, len(rows))
		for p, row := range rows {
			y[p] = row[i]
		}
		ss = append(ss, series{label: fmt.Sprintf("dim %d", i), x: ints(0, len(rows)-1), y: y})
	}
	return ss
}

// componentsFigure plots componentSeries.
func componentsFigure(s *spec.Spec) (*Figure, error) {
	return lineChart(encodingTitle(s)+", components", positionLabel(s), "PE", axes{}, componentSeries(s))
}
