package plot

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"
	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// svgTexts renders f as SVG and returns the text of every <text> element:
// title, axis labels, tick labels, legend entries, colour bar label.
func svgTexts(t *testing.T, f *Figure) []string {
	t.Helper()
	c := vgsvg.NewWith(vgsvg.UseWH(600*vg.Inch/dpi, 400*vg.Inch/dpi))
	f.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var texts []string
	d := xml.NewDecoder(&buf)
	in := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return texts
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			in = tok.Name.Local == "text"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in {
				texts = append(texts, string(tok))
			}
		}
	}
}

// Labels say θᵢ, not θ_i: no rendered text holds an underscore except in
// the spec's own name (llama31_8b), and the font has a glyph for every
// character (subscripts such as ₕ or ⱼ, which it lacks, would print as
// boxes).
func TestLabelsReadable(t *testing.T) {
	p := gonum.New()
	sty := p.Title.TextStyle
	face := sty.Handler.Cache().Lookup(sty.Font, sty.Font.Size)
	var buf sfnt.Buffer
	for _, nf := range figures(t) {
		texts := svgTexts(t, nf.f)
		if len(texts) < 4 {
			t.Fatalf("%s: %d texts: %q", nf.name, len(texts), texts)
		}
		for _, s := range texts {
			if strings.Contains(strings.ReplaceAll(s, nf.spec, ""), "_") {
				t.Errorf("%s: label %q has a raw underscore", nf.name, s)
			}
			for _, r := range s {
				if g, err := face.Face.GlyphIndex(&buf, r); err != nil || g == 0 {
					t.Errorf("%s: label %q: the font has no glyph for %q (%U)", nf.name, s, r, r)
				}
			}
		}
	}
}
