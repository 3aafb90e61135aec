package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/palette"
)

// ramp is a palette.ColorMap that interpolates linearly in sRGB between
// equally spaced stops over [min, max]. Interpolating gamma-encoded values
// never gives a colour lighter than both stops it lies between (relative
// luminance is convex in them), so the ramp keeps the contrast of its
// stops.
type ramp struct {
	stops    []color.RGBA
	min, max float64
	alpha    float64 // unused: the colours are opaque
}

// At returns the colour of v in [min, max].
func (r *ramp) At(v float64) (color.Color, error) {
	if !(v >= r.min && v <= r.max) {
		return nil, fmt.Errorf("plot: %g outside the colour map range [%g, %g]", v, r.min, r.max)
	}
	t := 0.0
	if r.max > r.min {
		t = (v - r.min) / (r.max - r.min) * float64(len(r.stops)-1)
	}
	k := min(int(t), len(r.stops)-2)
	f := t - float64(k)
	a, b := r.stops[k], r.stops[k+1]
	mix := func(x, y uint8) uint8 { return uint8(float64(x) + f*(float64(y)-float64(x)) + 0.5) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}, nil
}

func (r *ramp) SetMax(v float64)   { r.max = v }
func (r *ramp) SetMin(v float64)   { r.min = v }
func (r *ramp) Max() float64       { return r.max }
func (r *ramp) Min() float64       { return r.min }
func (r *ramp) SetAlpha(a float64) { r.alpha = a }
func (r *ramp) Alpha() float64     { return 1 }
func (r *ramp) Palette(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		v := r.min
		if n > 1 {
			v += (r.max - r.min) * float64(i) / float64(n-1)
		}
		cs[i], _ = r.At(min(v, r.max))
	}
	return colors(cs)
}

// colors is a palette.Palette of fixed colours.
type colors []color.Color

// Colors returns the colours.
func (c colors) Colors() []color.Color { return c }
