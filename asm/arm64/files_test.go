package arm64

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

func TestFilesHeaderAndDecls(t *testing.T) {
	for _, c := range []struct {
		p     Params
		decls []string
		reg   string
	}{
		{Params{Package: "llama", Source: "zoo/llama.yaml", Encoding: spec.RoPE, HeadDim: 128, RotaryDim: 128, Layout: spec.LayoutHalf},
			[]string{"func rotateNEON(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)"},
			"kernels{rotate: rotateNEON}"},
		{Params{Package: "alibi", Source: "a.yaml", Encoding: spec.ALiBi},
			[]string{"func addRowNEON(dst, src []float32)", "func softmaxRowNEON(row, bias []float32, scale float32)"},
			"kernels{addRow: addRowNEON, softmaxRow: softmaxRowNEON}"},
		{Params{Package: "t5", Source: "t5.yaml", Encoding: spec.RPEBias, ExpTest: true},
			[]string{"func addRowNEON(dst, src []float32)", "func expNEON(dst, src []float32)"},
			"kernels{addRow: addRowNEON, softmaxRow: softmaxRowNEON}"},
		{Params{Package: "sin", Source: "s.yaml", Encoding: spec.Sinusoidal, DModel: 512},
			[]string{"func addRowsNEON(x []float32, table []float32, idx []int32)"},
			"kernels{addRows: addRowsNEON}"},
		{Params{Package: "shaw", Source: "shaw.yaml", Encoding: spec.RPEFull, HeadDim: 64},
			[]string{"func dotRowsNEON(dst, x, rows []float32)", "func scoresRowNEON(dst, q, k, bias []float32, scale float32)", "func axpyRowsNEON(dst, w, rows []float32)"},
			"kernels{dotRows: dotRowsNEON, scoresRow: scoresRowNEON, axpyRows: axpyRowsNEON}"},
		{Params{Package: "txl", Source: "txl.yaml", Encoding: spec.XL, HeadDim: 6},
			[]string{"func scoresRowNEON(dst, qu, k, qv, r []float32)"},
			"kernels{scoresRow: scoresRowNEON}"},
	} {
		files, err := Files(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2 || files[0].Name != c.p.Package+"_arm64.s" || files[1].Name != c.p.Package+"_arm64.go" {
			t.Fatalf("%s: files %v", c.p.Package, names(files))
		}
		for _, f := range files {
			lines := strings.Split(string(f.Data), "\n")
			if lines[0] != emit.Header(c.p.Source) || lines[1] != "" || lines[2] != BuildTag || lines[3] != "" {
				t.Errorf("%s: bad preamble %q", f.Name, lines[:4])
			}
			if !bytes.HasSuffix(f.Data, []byte("\n")) || bytes.HasSuffix(f.Data, []byte("\n\n")) {
				t.Errorf("%s: must end in exactly one newline", f.Name)
			}
		}
		g := string(files[1].Data)
		for _, d := range c.decls {
			if !strings.Contains(g, "//go:noescape\n"+d+"\n") {
				t.Errorf("%s: missing %q in\n%s", c.p.Package, d, g)
			}
		}
		if !strings.Contains(g, `registerVariant("neon", true, `+c.reg+")") {
			t.Errorf("%s: registration missing in\n%s", c.p.Package, g)
		}
	}
}

func names(fs []emit.File) []string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Name)
	}
	return s
}

func TestFilesDeterministic(t *testing.T) {
	for _, c := range qemuCases() {
		a, err := Files(c.p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Files(c.p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
				t.Errorf("%s: %s differs between runs", c.p.Package, a[i].Name)
			}
		}
	}
}

func TestFilesErrors(t *testing.T) {
	ok := Params{Package: "p", Encoding: spec.RoPE, HeadDim: 64, RotaryDim: 64, Layout: spec.LayoutHalf}
	for _, c := range []struct {
		name string
		mod  func(p *Params)
	}{
		{"package", func(p *Params) { p.Package = "9x" }},
		{"keyword", func(p *Params) { p.Package = "func" }},
		{"encoding", func(p *Params) { p.Encoding = "nope" }},
		{"odd head", func(p *Params) { p.HeadDim = 63 }},
		{"rotary > head", func(p *Params) { p.RotaryDim = 66 }},
		{"rotary 0", func(p *Params) { p.RotaryDim = 0 }},
		{"odd rotary", func(p *Params) { p.RotaryDim = 33 }},
		{"layout", func(p *Params) { p.Layout = "" }},
		{"dmodel", func(p *Params) { p.Encoding, p.DModel = spec.Binary, 0 }},
	} {
		p := ok
		c.mod(&p)
		if _, err := Files(p); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	fs, err := Files(Params{Package: "m", Encoding: spec.Mixture})
	if err != nil || fs != nil {
		t.Errorf("mixture: got %v, %v; want no files", names(fs), err)
	}
	for _, p := range []Params{
		{Package: "m", Encoding: spec.RPEFull},
		{Package: "m", Encoding: spec.XL, HeadDim: 1 << 22},
	} {
		if _, err := Files(p); err == nil {
			t.Errorf("%s head_dim %d: no error", p.Encoding, p.HeadDim)
		}
	}
}

// hotLoop counts the instructions from label to the branch back to it
// (inclusive), skipping comments and labels.
func hotLoop(asm, label string) int {
	lines := strings.Split(asm, "\n")
	start := -1
	for i, l := range lines {
		if l == label+":" {
			start = i
			break
		}
	}
	if start < 0 {
		return 0
	}
	n := 0
	for _, l := range lines[start+1:] {
		if !strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "\t//") {
			continue
		}
		n++
		if strings.HasSuffix(l, " "+label) && strings.HasPrefix(l, "\tBNE") {
			return n
		}
	}
	return 0
}

// TestRopeInstructionCounts reports the instructions per rotated element of
// the per-head loop (Apply path), and bounds them.
func TestRopeInstructionCounts(t *testing.T) {
	for _, c := range []struct {
		h, r   int
		layout string
		max    float64 // instructions per rotated element
	}{
		{128, 128, spec.LayoutHalf, 0.8},
		{128, 128, spec.LayoutInterleaved, 1.1},
		{64, 16, spec.LayoutHalf, 1.05},
		{256, 64, spec.LayoutInterleaved, 1.2},
		{64, 48, spec.LayoutInterleaved, 1.2},
		{32, 24, spec.LayoutHalf, 0.9},
		{256, 256, spec.LayoutHalf, 0.85},
	} {
		files, err := Files(Params{Package: "p", Encoding: spec.RoPE, HeadDim: c.h, RotaryDim: c.r, Layout: c.layout})
		if err != nil {
			t.Fatal(err)
		}
		asm := string(files[0].Data)
		label := regexp.MustCompile(`(?m)^(qhead\d+):$`).FindStringSubmatch(asm)
		if label == nil {
			t.Fatalf("%d/%d %s: no head loop", c.h, c.r, c.layout)
		}
		n := hotLoop(asm, label[1])
		if blk := regexp.MustCompile(`(?m)^(blk\d+):$`).FindStringSubmatch(asm); blk != nil {
			// The block loop's body appears once in the head loop but
			// runs once per 16 pairs.
			b := hotLoop(asm, blk[1])
			n += (c.r/32 - 1) * b
			t.Logf("rope %d/%d %s: inner block loop %d instructions per 32 elements", c.h, c.r, c.layout, b)
		}
		per := float64(n) / float64(c.r)
		t.Logf("rope %d/%d %-11s: %3d instructions per head, %.3f per rotated element", c.h, c.r, c.layout, n, per)
		if n == 0 || per > c.max {
			t.Errorf("%d/%d %s: %.3f instructions per element, want <= %.2f", c.h, c.r, c.layout, per, c.max)
		}
	}
}

// softmaxCounts returns the instructions per element of the main
// (16-element) loop of each softmaxRow pass in asm: the max, the exp pass
// on its precise and huge-max paths, and the scaling.
func softmaxCounts(t *testing.T, asm string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, hint := range []string{"max", "exp", "exphuge", "scale"} {
		label := regexp.MustCompile(`(?m)^(` + hint + `_x16_\d+):$`).FindStringSubmatch(asm)
		if label == nil {
			t.Fatalf("no %s_x16 loop", hint)
		}
		n := hotLoop(asm, label[1])
		if n == 0 {
			t.Fatalf("%s: loop %s not closed", hint, label[1])
		}
		out[hint] = float64(n) / 16
	}
	return out
}

// TestSoftmaxInstructionCounts reports the instructions per element of the
// main loops of softmaxRow (static counts of the loop bodies, as
// TestRopeInstructionCounts), and bounds them. A row of length n ≥ 16 runs
// about n·(max + exp + scale) instructions, plus at most 3 one-vector and 3
// one-lane iterations per pass.
func TestSoftmaxInstructionCounts(t *testing.T) {
	files, err := Files(Params{Package: "p", Encoding: spec.ALiBi})
	if err != nil {
		t.Fatal(err)
	}
	c := softmaxCounts(t, string(files[0].Data))
	total := c["max"] + c["exp"] + c["scale"]
	t.Logf("softmaxRow per element: max %.4f, exp %.4f (huge max %.4f), scale %.4f; total %.4f",
		c["max"], c["exp"], c["exphuge"], c["scale"], total)
	for _, b := range []struct {
		what       string
		got, bound float64
	}{
		{"max", c["max"], 0.75},
		{"exp", c["exp"], 6.32},
		{"exphuge", c["exphuge"], 6.32},
		{"scale", c["scale"], 0.5},
		{"total", total, 7.57},
	} {
		if b.got > b.bound {
			t.Errorf("%s: %.4f instructions per element, want <= %.2f", b.what, b.got, b.bound)
		}
	}
}
