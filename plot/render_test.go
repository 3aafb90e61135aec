package plot

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// plotSpecs returns a representative spec for every encoding that has
// pictures: zoo specs where the zoo has one, inline specs otherwise.
func plotSpecs(t *testing.T) []*spec.Spec {
	var ss []*spec.Spec
	for _, name := range []string{"llama31_8b", "qwen25_7b_yarn", "phi35_mini", "bloom_176b", "mpt_7b", "t5_base", "transformer_base"} {
		ss = append(ss, mustZoo(t, name))
	}
	for _, y := range []string{
		"name: alibi8\nencoding: alibi\nheads: 8\n", // few heads: one line per head
		"name: dyn\nencoding: rope\nhead_dim: 64\nlayout: interleaved\nscaling:\n  type: dynamic\n  factor: 2\n  original_max_position: 2048\n",
		"name: clamp\nencoding: rpe_bias\nheads: 2\nr_max: 4\n",
		"name: shaw\nencoding: rpe_full\nhead_dim: 8\nr_max: 3\n",
		"name: alg\nencoding: algebraic\nd_model: 16\nmax_len: 101\n",
		"name: bin\nencoding: binary\nd_model: 12\nmax_len: 512\n",
		"name: mix\nencoding: mixture\nd_model: 32\nmax_len: 64\n",
		"name: txl\nencoding: xl\nhead_dim: 32\n",
	} {
		ss = append(ss, mustParse(t, y))
	}
	return ss
}

// Every kind of every encoding renders to a valid PNG of the requested size
// and to a valid SVG.
func TestRenderEveryKind(t *testing.T) {
	dir := t.TempDir()
	covered := map[string]bool{}
	for _, s := range plotSpecs(t) {
		for _, k := range Kinds(s.Encoding) {
			if k == KindError {
				continue // TestRenderErrorFigure; the measurement is cmd/posenc's
			}
			t.Run(s.Name+"/"+k, func(t *testing.T) {
				f, err := Render(s, k)
				if err != nil {
					t.Fatal(err)
				}
				saveBoth(t, f, dir, s.Name+"-"+k, 640, 400)
			})
			covered[k] = true
		}
	}
	for _, k := range AllKinds() {
		if k != KindError && !covered[k] {
			t.Errorf("kind %s is not rendered by any test spec", k)
		}
	}
}

// syntheticCurves returns error curves shaped like a real measurement: a
// flat generated curve, a growing naive one, and an exact result (0) at
// position 1.
func syntheticCurves(s *spec.Spec) *ErrorCurves {
	pos := ErrorPositions(s)
	gen := make([]float64, len(pos))
	naive := make([]float64, len(pos))
	for i, p := range pos {
		gen[i] = 6e-8
		naive[i] = math.Min(2, 6e-8*float64(p))
	}
	gen[0] = 0
	return &ErrorCurves{Positions: pos, Curves: []ErrorCurve{
		{Label: "generated (go)", Err: gen},
		{Label: "naive float32 angle", Naive: true, Err: naive},
	}}
}

func TestRenderErrorFigure(t *testing.T) {
	s := mustZoo(t, "llama31_8b")
	f, err := RenderError(s, syntheticCurves(s))
	if err != nil {
		t.Fatal(err)
	}
	saveBoth(t, f, t.TempDir(), "error", 800, 500)

	bad := syntheticCurves(s)
	bad.Curves[0].Err = bad.Curves[0].Err[1:]
	if _, err := RenderError(s, bad); err == nil || !strings.Contains(err.Error(), "values for") {
		t.Errorf("a curve shorter than the positions: err = %v", err)
	}
	if _, err := RenderError(mustZoo(t, "t5_base"), syntheticCurves(s)); err == nil {
		t.Error("RenderError accepted an rpe_bias spec")
	}
	zero := syntheticCurves(s)
	zero.Positions[0] = 0
	if _, err := RenderError(s, zero); err == nil {
		t.Error("RenderError accepted position 0 on a log axis")
	}
}

// SVG output is byte-for-byte deterministic.
func TestSVGDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ spec, kind string }{{"qwen25_7b_yarn", KindDecay}, {"transformer_base", KindHeatmap}, {"t5_base", KindBuckets}} {
		s := mustZoo(t, c.spec)
		var files [2][]byte
		for i := range files {
			f, err := Render(s, c.kind)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, c.spec+".svg")
			if err := Save(f, p, 600, 400); err != nil {
				t.Fatal(err)
			}
			if files[i], err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("%s %s: two renders give different SVG", c.spec, c.kind)
		}
	}
}

func TestKindErrors(t *testing.T) {
	rope := mustZoo(t, "llama31_8b")
	for _, c := range []struct {
		s    *spec.Spec
		kind string
		want string
	}{
		{rope, "bias", `kind "bias" does not apply to encoding rope (its kinds: spectrum, decay, error)`},
		{mustZoo(t, "t5_base"), "heatmap", `kind "heatmap" does not apply to encoding rpe_bias`},
		{rope, "histogram", `unknown kind "histogram"`},
		{mustZoo(t, "bert_base"), "heatmap", "encoding learned has nothing to plot"},
	} {
		err := CheckKind(c.s, c.kind)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckKind(%s, %q) = %v, want an error containing %q", c.s.Name, c.kind, err, c.want)
		}
		if _, err := Render(c.s, c.kind); err == nil {
			t.Errorf("Render(%s, %q) succeeded", c.s.Name, c.kind)
		}
	}
	if _, err := DefaultKind(mustZoo(t, "bert_base")); err == nil {
		t.Error("learned has a default kind")
	}
	if k, err := DefaultKind(rope); err != nil || k != KindSpectrum {
		t.Errorf("rope's default kind = %q, %v; want spectrum", k, err)
	}
	if _, err := Render(rope, KindError); err == nil {
		t.Error("Render drew the error kind without measurements")
	}
	if !slices.Equal(Kinds(spec.ALiBi), []string{KindBias}) || len(Kinds(spec.Learned)) != 0 {
		t.Errorf("Kinds: alibi %v, learned %v", Kinds(spec.ALiBi), Kinds(spec.Learned))
	}
}

// A bad extension or size writes nothing; a good save leaves no temporary
// file and replaces an existing image whole.
func TestSaveErrorsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Render(mustZoo(t, "t5_base"), KindBucketCurve)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		w, h int
		want string
	}{
		{"a.jpg", 400, 300, `unknown image extension ".jpg"`},
		{"a", 400, 300, "has no extension"},
		{"a.png", 10, 300, "image size"},
	} {
		err := Save(f, filepath.Join(dir, c.name), c.w, c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Save(%s, %d×%d) = %v, want an error containing %q", c.name, c.w, c.h, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed saves left %d files", len(ents))
	}
	if err := Save(f, filepath.Join(dir, "missing", "a.svg"), 400, 300); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
	p := filepath.Join(dir, "b.PNG")
	os.WriteFile(p, []byte("old"), 0o644)
	if err := Save(f, p, 400, 300); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, p, 400, 300)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("after one save the directory holds %d entries, want 1", len(ents))
	}
}
