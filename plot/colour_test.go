package plot

import (
	"image/color"
	"math"
)

// linear returns the linear-light value of an 8-bit sRGB channel (IEC
// 61966-2-1).
func linear(v uint32) float64 {
	c := float64(v>>8) / 255
	if c <= 0.04045 {
		return c / 12.92
	}
	return math.Pow((c+0.055)/1.055, 2.4)
}

// luminance is the relative luminance of WCAG 2.1.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return 0.2126*linear(r) + 0.7152*linear(g) + 0.0722*linear(b)
}

// contrast is the WCAG 2.1 contrast ratio of two colours, from 1 to 21.
func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// lab returns the CIELAB coordinates of c (D65 white).
func lab(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lr, lg, lb := linear(r), linear(g), linear(b)
	x := (0.4124*lr + 0.3576*lg + 0.1805*lb) / 0.95047
	y := 0.2126*lr + 0.7152*lg + 0.0722*lb
	z := (0.0193*lr + 0.1192*lg + 0.9505*lb) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// deltaE is the CIE 1976 colour difference: about 2.3 is just noticeable
// side by side; thin lines far apart on a chart need several times that.
func deltaE(a, b color.Color) float64 {
	p, q := lab(a), lab(b)
	return math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2]))
}
