package plot

import (
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// overlaps reports whether two rectangles share more than an edge.
func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// inside reports whether a lies within b, to rounding.
func inside(a, b vg.Rectangle) bool {
	const eps = 1e-9
	return a.Min.X >= b.Min.X-eps && a.Max.X <= b.Max.X+eps && a.Min.Y >= b.Min.Y-eps && a.Max.Y <= b.Max.Y+eps
}

// The legend and the colour bar lie inside the picture, clear of the data
// area and of the title: the decay legend once covered the curves, the
// error legend the title. The data area starts right under the title (a log
// y axis once pushed it a fifth of the picture down).
func TestLegendOutsideDataAndTitle(t *testing.T) {
	for _, nf := range figures(t) {
		for _, size := range [][2]int{{800, 500}, {640, 400}, {1200, 500}} {
			w, h := vg.Length(size[0])*vg.Inch/dpi, vg.Length(size[1])*vg.Inch/dpi
			c := draw.New(vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi)))
			l := nf.f.layout(c)
			if l.data.Size().X < w/2 || l.data.Size().Y < h/2 {
				t.Errorf("%s at %v: data area %v is less than half the picture", nf.name, size, l.data.Size())
			}
			if gap := l.title.Min.Y - l.data.Max.Y; l.title.Size().Y == 0 || gap > h/20 {
				t.Errorf("%s at %v: title band %v, data area %v: %v between them", nf.name, size, l.title, l.data, gap)
			}
			var parts []vg.Rectangle
			if len(nf.f.legend) > 0 {
				if l.leg == nil || len(l.cols) != len(nf.f.legend) {
					t.Fatalf("%s: a legend of %d columns has no place", nf.name, len(nf.f.legend))
				}
				parts = append(parts, *l.leg)
				for _, col := range l.cols {
					if !inside(col, *l.leg) {
						t.Errorf("%s at %v: legend column %v outside the legend %v", nf.name, size, col, *l.leg)
					}
				}
			}
			if nf.f.ColorBar != nil {
				parts = append(parts, l.side.Rectangle)
			}
			for _, r := range parts {
				if !inside(r, c.Rectangle) {
					t.Errorf("%s at %v: %v outside the picture %v", nf.name, size, r, c.Rectangle)
				}
				if overlaps(r, l.data) {
					t.Errorf("%s at %v: %v overlaps the data area %v", nf.name, size, r, l.data)
				}
				if overlaps(r, l.title) {
					t.Errorf("%s at %v: %v overlaps the title %v", nf.name, size, r, l.title)
				}
			}
		}
	}
}
