package golang

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/gen/emit"
	"github.com/posenc/posenc/spec"
)

// relSpecs are the rpe_full and xl example specs in testdata: HeadDim 64
// with r_max 128 (the benchmark configuration), r_max 1 with an odd
// HeadDim, r_max beyond every tested length, and two xl sizes.
var relSpecs = []string{"rpefull64", "rpefull_r1", "rpefull_wide", "xl64", "xl6"}

// relGenerate parses testdata/<name>.yaml, derives and emits its Go files.
func relGenerate(t *testing.T, name string) []emit.File {
	t.Helper()
	file := filepath.Join("testdata", name+".yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(file, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c, err := consts.Derive(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	files, err := Files(c)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return files
}

func TestRelOutput(t *testing.T) {
	for _, name := range relSpecs {
		t.Run(name, func(t *testing.T) {
			a, b := relGenerate(t, name), relGenerate(t, name)
			want := []string{name + ".go", name + "_generic.go", name + "_test.go", name + "_variants.go"}
			if len(a) != len(want) {
				t.Fatalf("%d files, want %v", len(a), want)
			}
			for i, f := range a {
				if f.Name != want[i] {
					t.Errorf("file %d is %s, want %s", i, f.Name, want[i])
				}
				if !bytes.Equal(f.Data, b[i].Data) {
					t.Errorf("%s differs between two runs", f.Name)
				}
				if !bytes.HasPrefix(f.Data, []byte(emit.Header(filepath.Join("testdata", name+".yaml"))+"\n")) {
					t.Errorf("%s does not start with the generated-code header", f.Name)
				}
				src, err := format.Source(f.Data)
				if err != nil {
					t.Errorf("%s: %v", f.Name, err)
				} else if !bytes.Equal(src, f.Data) {
					t.Errorf("%s is not gofmt-clean", f.Name)
				}
			}
		})
	}
	api := string(relGenerate(t, "rpefull64")[0].Data)
	for _, w := range []string{"const HeadDim = 64", "const RMax = 128", "const Buckets = 255", "func Scores(dst, q, k, aK []float32, lq, lk, qOffset int)", "func Output(dst, weights, v, aV []float32, lq, lk, qOffset int)"} {
		if !strings.Contains(api, w) {
			t.Errorf("rpefull64.go lacks %q", w)
		}
	}
	api = string(relGenerate(t, "xl6")[0].Data)
	for _, w := range []string{"const HeadDim = 6", "const Base = 500.0", "func Scores(dst, q, k, r, u, v []float32, lq, lk, qOffset int)", "func Relative(dst []float32, n int)"} {
		if !strings.Contains(api, w) {
			t.Errorf("xl6.go lacks %q", w)
		}
	}
}

// TestRelGeneratedPackages writes every rpe_full and xl example package
// into a temporary directory inside the module (named with a leading
// underscore, so ./... ignores it) and runs go vet and go test there: each
// package's TestVariants checks it against verify's float64 reference, and
// TestNaiveAgrees checks the benchmarks' naive baselines.
func TestRelGeneratedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	root, tmp := scratchModuleDir(t, "reltest")
	var pkgs []string
	for _, name := range relSpecs {
		pkgs = append(pkgs, writeScratchPackage(t, root, tmp, name, relGenerate(t, name)))
	}
	run := func(args ...string) string {
		out, err := goOnPackages(t, root, pkgs, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	run("vet")
	out := run("test", "-count=1", "-v", "-run", "TestVariants|TestNaive")
	if n := strings.Count(out, "POSENC-ROW "); n < len(relSpecs) {
		t.Errorf("%d POSENC-ROW lines for %d packages:\n%s", n, len(relSpecs), out)
	}
	t.Logf("%s", out)
}
