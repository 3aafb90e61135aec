package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/posenc/posenc/spec"
)

// checkPNG fails unless path is a PNG of w×h pixels with at least three
// colors (background, axes, data).
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: %d×%d pixels, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	colors := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(colors) < 3; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colors) < 3 {
		t.Fatalf("%s: %d colors: the image is (nearly) flat", path, len(colors))
	}
}

// checkSVG fails unless path is well-formed XML whose root is <svg> and
// that holds at least one <path> with path data.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	root, paths := "", 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", path, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		if se.Name.Local == "path" {
			for _, a := range se.Attr {
				if a.Name.Local == "d" && len(a.Value) > 2 {
					paths++
				}
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element <%s>, want <svg>", path, root)
	}
	if paths == 0 {
		t.Fatalf("%s: no <path> with path data", path)
	}
}

// saveBoth writes f as PNG (w×h) and SVG into dir and checks both.
func saveBoth(t *testing.T, f *Figure, dir, name string, w, h int) {
	t.Helper()
	pngPath := filepath.Join(dir, name+".png")
	svgPath := filepath.Join(dir, name+".svg")
	if err := Save(f, pngPath, w, h); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, pngPath, w, h)
	if err := Save(f, svgPath, w, h); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svgPath)
}

// mustParse parses a spec written inline in a test.
func mustParse(t *testing.T, yaml string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustZoo loads a zoo spec.
func mustZoo(t *testing.T, name string) *spec.Spec {
	t.Helper()
	s, err := spec.ZooSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
