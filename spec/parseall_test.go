package spec

import (
	"strings"
	"testing"
)

// Several documents give several specs with their own sources and lines;
// one document gives Parse's result.
func TestParseAll(t *testing.T) {
	a := "# first\nname: a\nencoding: rope\nhead_dim: 8\nlayout: half\n"
	b := "# second\nname: b\nencoding: rope\nhead_dim: 16\nlayout: interleaved\n"
	ss, err := ParseAll("two.yaml", []byte(a+"---\n"+b))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].Name != "a" || ss[1].Name != "b" || ss[1].HeadDim != 16 || ss[0].Source != a || ss[1].Source != "---\n"+b {
		t.Fatalf("%+v", ss)
	}
	// A leading marker and a comment header before it.
	ss, err = ParseAll("lead.yaml", []byte("# header\n---\n"+a+"--- # next\n"+b))
	if err != nil || len(ss) != 2 || ss[0].Name != "a" || ss[1].Name != "b" {
		t.Fatalf("leading marker: %v %+v", err, ss)
	}
	one, err := ParseAll("one.yaml", []byte(a))
	if err != nil || len(one) != 1 || one[0].Source != a {
		t.Fatalf("one document: %v %+v", err, one)
	}
	// An error in the second document names its line in the file.
	_, err = ParseAll("bad.yaml", []byte(a+"---\n"+strings.Replace(b, "head_dim: 16", "head_dim: 15", 1)))
	e, ok := err.(*Error)
	if !ok || e.Line != 10 || e.Field != "head_dim" {
		t.Fatalf("error %v, want bad.yaml:10: head_dim", err)
	}
}

// A YAML syntax error in a later document names its line in the file.
func TestParseAllSyntaxLine(t *testing.T) {
	src := "name: a\nencoding: alibi\nheads: 3\n---\nname: b\nencoding: alibi\nheads: [\n"
	_, err := ParseAll("syn.yaml", []byte(src))
	if e, ok := err.(*Error); !ok || e.Line != 7 || !strings.Contains(e.Msg, "YAML syntax") {
		t.Fatalf("error %v, want syn.yaml:7: YAML syntax", err)
	}
}
