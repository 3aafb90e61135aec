package main

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/posenc/posenc/generated/llama2_7b"
	"github.com/posenc/posenc/plot"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// checkImage fails unless path is a decodable PNG of w×h pixels that is not
// one flat color, or an SVG document (by extension) with path data.
func checkImage(t *testing.T, path string, w, h int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".svg") {
		d := xml.NewDecoder(bytes.NewReader(data))
		root, paths := "", 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				if root == "" {
					root = se.Name.Local
				}
				if se.Name.Local == "path" {
					paths++
				}
			}
		}
		if root != "svg" || paths == 0 {
			t.Fatalf("%s: root <%s>, %d paths", path, root, paths)
		}
		return
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: %d×%d, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	first := img.At(0, 0)
	r0, g0, b0, _ := first.RGBA()
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 {
				return
			}
		}
	}
	t.Fatalf("%s: one flat color", path)
}

// Flags may follow the spec argument (t5_base -o FILE).
func TestPlotCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t5.svg")
	if code, stdout, errs := runCLI("plot", "t5_base", "-o", out); code != 0 || !strings.Contains(stdout, "t5_base buckets") {
		t.Fatalf("plot t5_base: code %d, stdout %q, stderr %q", code, stdout, errs)
	}
	checkImage(t, out, 0, 0)

	specFile := filepath.Join(dir, "a3.yaml")
	os.WriteFile(specFile, []byte("name: a3\nencoding: alibi\nheads: 3\n"), 0o644)
	out = filepath.Join(dir, "a3.png")
	if code, _, errs := runCLI("plot", "-kind", "bias", "-width", "300", "-height", "200", "-o", out, specFile); code != 0 {
		t.Fatalf("plot a3.yaml: code %d: %s", code, errs)
	}
	checkImage(t, out, 300, 200)

	pattern := filepath.Join(dir, "tb-{kind}.png")
	if code, _, errs := runCLI("plot", "-zoo", "transformer_base", "-kind", "all", "-o", pattern); code != 0 {
		t.Fatalf("plot -kind all: code %d: %s", code, errs)
	}
	for _, k := range plot.Kinds(spec.Sinusoidal) {
		checkImage(t, filepath.Join(dir, "tb-"+k+".png"), 800, 500)
	}
}

// Bad use exits 2 with a message naming the flag, and writes nothing.
func TestPlotCLIErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-zoo", "llama31_8b", "-kind", "bias", "-o", "x.png"}, 2, `-kind: llama31_8b: kind "bias" does not apply to encoding rope`},
		{[]string{"-zoo", "llama31_8b", "-kind", "nope", "-o", "x.png"}, 2, `-kind: llama31_8b: unknown kind "nope"`},
		{[]string{"-zoo", "llama31_8b", "-o", "x.jpg"}, 2, `-o: unknown image extension ".jpg"`},
		{[]string{"-zoo", "llama31_8b"}, 2, "-o FILE.png|FILE.svg is required"},
		{[]string{"-zoo", "llama31_8b", "-kind", "all", "-o", "x.png"}, 2, "-o must contain {kind}"},
		{[]string{"-zoo", "bert_base", "-o", "x.png"}, 2, "encoding learned has nothing to plot"},
		{[]string{"-o", "x.png"}, 2, "plot takes one spec"},
		{[]string{"-zoo", "t5_base", "-o", "x.png", "mpt_7b"}, 2, "plot takes one spec"},
		{[]string{"-zoo", "no_such_model", "-o", "x.png"}, 1, "no_such_model"},
		{[]string{"-zoo", "llama31_8b", "-kind", "error", "-width", "5", "-o", "x.png"}, 2, "-width, -height: image size 5×500"},
	} {
		args := append([]string{"plot"}, c.args...)
		for i, a := range args {
			if strings.HasPrefix(a, "x.") {
				args[i] = filepath.Join(dir, a)
			}
		}
		code, _, errs := runCLI(args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("posenc %s: code %d, stderr %q; want code %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed plots left %d files", len(ents))
	}
}

// The measured error curves: the generated kernels stay within the RoPE
// verification bound (docs/design) at every position up to 2^31−1; the
// naive float32-angle baseline does not.
func TestPlotErrorMeasurement(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a package and runs go test")
	}
	s, err := spec.ZooSpec("llama2_7b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := measureError(s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Curves) < 2 || c.Curves[0].Label != "generated (go)" || !c.Curves[len(c.Curves)-1].Naive {
		t.Fatalf("curves %+v", c.Curves)
	}
	// One curve per variant this CPU runs (go, avx2 and avx512 on an
	// AVX-512 machine), not only the generic and the active one.
	var want, got []string
	for _, v := range llama2_7b.Variants() {
		if llama2_7b.VariantAvailable(v) {
			want = append(want, "generated ("+v+")")
		}
	}
	for _, cv := range c.Curves[:len(c.Curves)-1] {
		got = append(got, cv.Label)
	}
	if !slices.Equal(got, want) {
		t.Errorf("generated curves %q, want %q", got, want)
	}
	last := len(c.Positions) - 1
	if c.Positions[last] != math.MaxInt32 {
		t.Fatalf("last position %d", c.Positions[last])
	}
	for _, cv := range c.Curves[:len(c.Curves)-1] {
		for i, p := range c.Positions {
			if e := cv.Err[i]; !(e <= verify.RoPEBound(p)) {
				t.Errorf("%s at position %d: error %g above the bound %g", cv.Label, p, e, verify.RoPEBound(p))
			}
		}
	}
	if e := c.Curves[len(c.Curves)-1].Err[last]; !(e > 100*verify.RoPEBound(math.MaxInt32)) {
		t.Errorf("naive baseline at 2^31−1: error %g, want far above the bound", e)
	}
}

// posenc plot -kind error, end to end through the CLI.
func TestPlotErrorKindCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a package and runs go test")
	}
	out := filepath.Join(t.TempDir(), "err.png")
	code, stdout, errs := runCLI("plot", "-kind", "error", "-width", "640", "-height", "480", "-o", out, "-zoo", "qwen25_7b_yarn")
	if code != 0 || !strings.Contains(stdout, "qwen25_7b_yarn error") {
		t.Fatalf("plot -kind error: code %d\nstdout %s\nstderr %s", code, stdout, errs)
	}
	checkImage(t, out, 640, 480)
}

func TestPlotParseErrorLines(t *testing.T) {
	pos := []int64{1, 10, 100}
	out := []byte(`=== RUN   TestPosencPlotError
POSENC-PLOT-ERR 1 generated-go 1e-8
POSENC-PLOT-ERR 1 generated-avx2 2e-8
POSENC-PLOT-ERR 1 naive-fp32 3e-8
POSENC-PLOT-ERR 10 generated-go 1.5e-8
POSENC-PLOT-ERR 10 generated-avx2 2.5e-8
POSENC-PLOT-ERR 10 naive-fp32 3e-7
POSENC-PLOT-ERR 100 generated-go 0
POSENC-PLOT-ERR 100 generated-avx2 2e-8
POSENC-PLOT-ERR 100 naive-fp32 3e-6
--- PASS: TestPosencPlotError (0.01s)
`)
	c, err := parseErrorLines(out, pos)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Curves) != 3 || c.Curves[0].Label != "generated (go)" || c.Curves[1].Label != "generated (avx2)" ||
		!c.Curves[2].Naive || c.Curves[2].Err[2] != 3e-6 || c.Curves[0].Err[2] != 0 || c.Curves[1].Err[1] != 2.5e-8 {
		t.Fatalf("parsed %+v", c.Curves)
	}
	missing := bytes.Replace(out, []byte("POSENC-PLOT-ERR 10 naive-fp32 3e-7\n"), nil, 1)
	if _, err := parseErrorLines(missing, pos); err == nil || !strings.Contains(err.Error(), "no naive-fp32 value at position 10") {
		t.Errorf("a missing value: err = %v", err)
	}
	if _, err := parseErrorLines([]byte("POSENC-PLOT-ERR 7 generated-go 1e-8\n"), pos); err == nil {
		t.Error("a position that was not asked for was accepted")
	}
	if _, err := parseErrorLines([]byte("ok\n"), pos); err == nil {
		t.Error("no measurements were accepted")
	}
}

// A file holding several specs (import-hf's stdout for Gemma 3): -name
// picks the one to plot; without it, or with a name the file lacks, the
// error lists the specs and nothing is written.
func TestPlotMultiDocument(t *testing.T) {
	dir := t.TempDir()
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte("name: a3\nencoding: alibi\nheads: 3\n---\nname: a5\nencoding: alibi\nheads: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a5.svg")
	code, _, errs := runCLI("plot", "-kind", "bias", "-o", out, both)
	if code != 2 || !strings.Contains(errs, "holds 2 specs (a3, a5)") || !strings.Contains(errs, "-name") {
		t.Errorf("plot of two specs without -name: code %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI("plot", "-kind", "bias", "-name", "a4", "-o", out, both)
	if code != 2 || !strings.Contains(errs, "a3, a5") {
		t.Errorf("plot -name a4: code %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused plot wrote %s", out)
	}
	code, stdout, errs := runCLI("plot", "-kind", "bias", "-name", "a5", "-o", out, both)
	if code != 0 || !strings.Contains(stdout, "(a5 bias)") {
		t.Fatalf("plot -name a5: code %d, stdout %q, stderr %q", code, stdout, errs)
	}
	checkImage(t, out, 0, 0)
}
