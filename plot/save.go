package plot

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Image formats, by file extension.
const (
	FormatPNG = "png"
	FormatSVG = "svg"
)

// dpi is the resolution of PNG output: a pixel is 1/96 inch, the CSS pixel.
const dpi = 96

// Format returns the image format of path from its extension (.png or
// .svg, any case).
func Format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		return FormatPNG, nil
	case ".svg":
		return FormatSVG, nil
	case "":
		return "", fmt.Errorf("%q has no extension: want .png or .svg", path)
	default:
		return "", fmt.Errorf("unknown image extension %q: want .png or .svg", ext)
	}
}

// CheckSize reports whether width×height pixels is a size Save accepts:
// each side in [50, 20000].
func CheckSize(width, height int) error {
	if width < 50 || height < 50 || width > 20000 || height > 20000 {
		return fmt.Errorf("image size %d×%d: each side must be in [50, 20000] pixels", width, height)
	}
	return nil
}

// Save writes the figure to path as a width×height pixel image (PNG at 96
// dpi; SVG of the same size in points ×0.75), in the format its extension
// names. It writes a temporary file in the same directory and renames it,
// so path is either left as it was or holds a complete image.
func Save(f *Figure, path string, width, height int) (err error) {
	format, err := Format(path)
	if err != nil {
		return err
	}
	if err := CheckSize(width, height); err != nil {
		return err
	}
	// A pixel is 1/96 inch = 0.75 points.
	w, h := vg.Length(width)*vg.Inch/dpi, vg.Length(height)*vg.Inch/dpi
	var out io.WriterTo
	switch format {
	case FormatPNG:
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
		f.Draw(draw.New(c))
		out = vgimg.PngCanvas{Canvas: c}
	case FormatSVG:
		c := vgsvg.NewWith(vgsvg.UseWH(w, h))
		f.Draw(draw.New(c))
		out = c
	}
	return writeAtomic(path, out)
}

// writeAtomic writes w's output to a temporary file next to path, then
// renames it to path; on any error the temporary file is removed.
func writeAtomic(path string, w io.WriterTo) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = w.WriteTo(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
