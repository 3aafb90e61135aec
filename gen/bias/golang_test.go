package bias

import (
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/gocode/gocodetest"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// biasSpecs are the alibi and rpe_bias specs the generated-package tests
// build. The g* names are those of golden cases, which verify's harness
// checks whenever the spec name matches.
var biasSpecs = map[string]string{
	"galibi6":     "name: galibi6\nencoding: alibi\nheads: 6\ncausal: true\n",
	"galibi40":    "name: galibi40\nencoding: alibi\nheads: 40\ncausal: true\n",
	"galibi4":     "name: galibi4\nencoding: alibi\nheads: 4\ncausal: false\n",
	"talibi12":    "name: talibi12\nencoding: alibi\nheads: 12\ncausal: false\nmax_bias: 4\n",
	"talibi_sl":   "name: talibi_sl\nencoding: alibi\nheads: 3\nslopes: [0.5, 0.1, 0.0125]\n",
	"grpe_clamp":  "name: grpe_clamp\nencoding: rpe_bias\nheads: 2\nr_max: 3\n",
	"grpe_t5":     "name: grpe_t5\nencoding: rpe_bias\nheads: 4\nbuckets:\n  num: 32\n  max_distance: 128\n  bidirectional: true\n",
	"grpe_t5_uni": "name: grpe_t5_uni\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 16\n  max_distance: 64\n  bidirectional: false\n",
}

// biasGenerate parses, derives and emits the Go files of one spec.
func biasGenerate(t *testing.T, name string) []emit.File {
	t.Helper()
	s, err := spec.Parse(name+".yaml", []byte(biasSpecs[name]))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c, err := derive(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	files, err := c.GoFiles()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return files
}

func TestBiasOutput(t *testing.T) {
	for name := range biasSpecs {
		t.Run(name, func(t *testing.T) {
			gocodetest.CheckGoFiles(t, name, name+".yaml", biasGenerate(t, name), biasGenerate(t, name))
		})
	}
}

func TestBiasSlopeLiterals(t *testing.T) {
	files := biasGenerate(t, "galibi6")
	api := string(files[0].Data)
	// get_slopes(6) = 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1, 2^-3.
	if !strings.Contains(api, "var slopes = [Heads]float64{\n\t0.25,\n\t0.0625,\n\t0.015625,\n\t0.00390625,\n\t0.5,\n\t0.125,\n}") {
		t.Errorf("galibi6 slopes not as expected:\n%s", api)
	}
	if !strings.Contains(api, "const Heads = 6") || !strings.Contains(api, "const Causal = true") {
		t.Error("galibi6: Heads or Causal missing")
	}
}

// TestBiasGeneratedPackages is the end-to-end proof: it writes every
// spec's package into a temporary directory inside the module and runs go
// vet and go test on them, so each is checked by verify's float64
// reference, edge cases and golden data.
func TestBiasGeneratedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	root, tmp := gocodetest.ScratchModuleDir(t, "biastest")
	var pkgs []string
	for name := range biasSpecs {
		pkgs = append(pkgs, gocodetest.WriteScratchPackage(t, root, tmp, name, biasGenerate(t, name)))
	}
	run := func(args ...string) string {
		out, err := gocodetest.GoOnPackages(t, root, pkgs, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	run("vet")
	out := run("test", "-count=1", "-v", "-run", "TestVariants")
	if n := strings.Count(out, "POSENC-ROW "); n < len(biasSpecs) {
		t.Errorf("%d POSENC-ROW lines for %d packages:\n%s", n, len(biasSpecs), out)
	}
	t.Logf("%s", out)
}
