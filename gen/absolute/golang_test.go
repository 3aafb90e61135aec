package absolute

import (
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/gocode/gocodetest"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// absSpecs are the absolute specs the generated-package tests
// build. The g* names are those of golden cases, which verify's harness
// checks whenever the spec name matches.
var absSpecs = map[string]string{
	"gsin":     "name: gsin\nencoding: sinusoidal\nd_model: 32\nmax_len: 5000\nbase: 10000\n",
	"tsin6":    "name: tsin6\nencoding: sinusoidal\nd_model: 6\nmax_len: 64\nbase: 500\n",
	"talg":     "name: talg\nencoding: algebraic\nd_model: 24\nmax_len: 512\n",
	"tbin":     "name: tbin\nencoding: binary\nd_model: 16\nmax_len: 1000\n",
	"tlearned": "name: tlearned\nencoding: learned\nd_model: 20\nmax_len: 300\n",
	"tmix":     "name: tmix\nencoding: mixture\nd_model: 18\nmax_len: 200\n",
}

// absGenerate parses, derives and emits the Go files of one spec.
func absGenerate(t *testing.T, name string) []emit.File {
	t.Helper()
	s, err := spec.Parse(name+".yaml", []byte(absSpecs[name]))
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

func TestAbsoluteOutput(t *testing.T) {
	for name := range absSpecs {
		t.Run(name, func(t *testing.T) {
			gocodetest.CheckGoFiles(t, name, name+".yaml", absGenerate(t, name), absGenerate(t, name))
		})
	}
}

// TestAbsoluteGeneratedPackages is the end-to-end proof: it writes every
// spec's package into a temporary directory inside the module and runs go
// vet and go test on them, so each is checked by verify's float64
// reference, edge cases and golden data.
func TestAbsoluteGeneratedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	root, tmp := gocodetest.ScratchModuleDir(t, "abstest")
	var pkgs []string
	for name := range absSpecs {
		pkgs = append(pkgs, gocodetest.WriteScratchPackage(t, root, tmp, name, absGenerate(t, name)))
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
	if n := strings.Count(out, "POSENC-ROW "); n < len(absSpecs) {
		t.Errorf("%d POSENC-ROW lines for %d packages:\n%s", n, len(absSpecs), out)
	}
	t.Logf("%s", out)
}
