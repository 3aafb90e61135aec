package amd64

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/emit"
	"github.com/posenc/posenc/spec"
)

var expStride = flag.Int("expstride", 97, "TestKernels checks exp at every expstride-th float32 bit pattern (1: exhaustive, minutes)")

var kernelBench = flag.String("kernelbench", "", "also run the generated test packages' benchmarks matching this -bench pattern (slow; e.g. -kernelbench=.)")

// testPkg is one generated package of the kernel test module.
type testPkg struct {
	dir    string // subdirectory and package name
	params Params
}

// testPkgs are the shapes the kernel tests cover: every kernel of every
// encoding family, with tails of every kind.
func testPkgs() []testPkg {
	rope := func(dir string, hd, rd int, layout string) testPkg {
		return testPkg{dir, Params{Package: dir, Source: dir + ".yaml", Encoding: spec.RoPE, HeadDim: hd, RotaryDim: rd, Layout: layout, AVX2: true, AVX512: true}}
	}
	abs := func(dir, enc string, d int) testPkg {
		return testPkg{dir, Params{Package: dir, Source: dir + ".yaml", Encoding: enc, DModel: d, AVX2: true, AVX512: true}}
	}
	return []testPkg{
		rope("rope128h", 128, 128, spec.LayoutHalf),
		rope("rope128i", 128, 128, spec.LayoutInterleaved),
		rope("rope64x16h", 64, 16, spec.LayoutHalf),
		rope("rope256x64i", 256, 64, spec.LayoutInterleaved),
		rope("rope64x48i", 64, 48, spec.LayoutInterleaved),
		rope("rope32x24h", 32, 24, spec.LayoutHalf),
		rope("rope10x6h", 10, 6, spec.LayoutHalf),
		rope("rope512h", 512, 512, spec.LayoutHalf),
		{"bias", Params{Package: "bias", Source: "bias.yaml", Encoding: spec.ALiBi, AVX2: true, AVX512: true, ExpTest: true}},
		abs("abs512", spec.Sinusoidal, 512),
		abs("abs33", spec.Learned, 33),
		abs("abs7", spec.Binary, 7),
		abs("abs1000", spec.Algebraic, 1000),
	}
}

// harnessSrc stands in for the <name>_variants.go that gen/golang writes:
// it defines kernels and registerVariant and exports what was registered.
const harnessSrc = `// Test harness standing in for gen/golang's <name>_variants.go.

package %s

type kernels struct {
	rotate     func(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)
	addRow     func(dst, src []float32)
	softmaxRow func(row, bias []float32, scale float32)
	addRows    func(x []float32, table []float32, idx []int32)
}

// Variant is one registered variant, with exported fields.
type Variant = struct {
	Name       string
	Available  bool
	Rotate     func(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)
	AddRow     func(dst, src []float32)
	SoftmaxRow func(row, bias []float32, scale float32)
	AddRows    func(x []float32, table []float32, idx []int32)
}

// Registered lists the variants in registration order.
var Registered []Variant

func registerVariant(name string, available bool, k kernels) {
	Registered = append(Registered, Variant{name, available, k.rotate, k.addRow, k.softmaxRow, k.addRows})
}
`

const expHarnessSrc = `package %s

// ExpRow maps a variant name to its exp test kernel.
var ExpRow = map[string]func(dst, src []float32){"avx2": expRowAVX2, "avx512": expRowAVX512}
`

// goTool returns the go binary of the running toolchain (go env GOROOT).
func goTool(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	root := strings.TrimSpace(string(out))
	if err != nil || root == "" {
		root = runtime.GOROOT()
	}
	return filepath.Join(root, "bin", "go")
}

// writeTestModule generates every test package into a temporary directory
// inside this package (so it builds in this module) and returns it with the
// relative package paths to vet.
func writeTestModule(t *testing.T) (dir string, pkgs []string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err = os.MkdirTemp(wd, "_amd64test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	importBase := "github.com/posenc/posenc/asm/amd64/" + filepath.Base(dir)

	var cfg bytes.Buffer
	cfg.WriteString("package kerneltest\n\nimport (\n")
	for _, tp := range testPkgs() {
		fmt.Fprintf(&cfg, "\t%q\n", importBase+"/"+tp.dir)
	}
	fmt.Fprintf(&cfg, ")\n\nconst (\n\texpMaxULP = %v\n\texpStride = %d\n)\n\n", expMaxULP, *expStride)
	var rope, abs, bias strings.Builder
	for _, tp := range testPkgs() {
		sub := filepath.Join(dir, tp.dir)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		files, err := Files(tp.params)
		if err != nil {
			t.Fatalf("%s: %v", tp.dir, err)
		}
		files = append(files, emit.File{Name: "harness.go", Data: []byte(fmt.Sprintf(harnessSrc, tp.dir))})
		if tp.params.ExpTest {
			files = append(files, emit.File{Name: "expharness.go", Data: []byte(fmt.Sprintf(expHarnessSrc, tp.dir))})
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(sub, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pkgs = append(pkgs, "./"+tp.dir)
		p := tp.params
		switch p.Encoding {
		case spec.RoPE:
			fmt.Fprintf(&rope, "\t{%q, %d, %d, %t, %s.Registered},\n", tp.dir, p.HeadDim, p.RotaryDim, p.Layout == spec.LayoutHalf, tp.dir)
		case spec.ALiBi:
			fmt.Fprintf(&bias, "\t{%q, %s.Registered, %s.ExpRow},\n", tp.dir, tp.dir, tp.dir)
		default:
			fmt.Fprintf(&abs, "\t{%q, %d, %s.Registered},\n", tp.dir, p.DModel, tp.dir)
		}
	}
	fmt.Fprintf(&cfg, "var ropeCases = []ropeCase{\n%s}\n\nvar biasCases = []biasCase{\n%s}\n\nvar absCases = []absCase{\n%s}\n", rope.String(), bias.String(), abs.String())
	cfgSrc, err := format.Source(cfg.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config_test.go"), cfgSrc, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kernels_test.go", "bench_test.go"} {
		src, err := os.ReadFile(filepath.Join("testdata", "kerneltest", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, append(pkgs, ".")
}

func runGo(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestKernels generates packages for every shape of testPkgs, vets them
// (asmdecl checks the assembly against the Go declarations) and runs the
// tests of testdata/kerneltest against them: every kernel of both variants
// compared with a float64 reference, with the inputs placed against
// PROT_NONE pages and guard elements checked, and the exp accuracy sweep.
func TestKernels(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the generated kernels run on amd64 only")
	}
	dir, pkgs := writeTestModule(t)
	runGo(t, dir, append([]string{"vet"}, pkgs...)...)
	out := runGo(t, dir, "test", "-count=1", "-v", ".")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "max error") || strings.Contains(line, "SKIP") || strings.Contains(line, "skipped") {
			t.Log(strings.TrimSpace(line))
		}
	}
	if *kernelBench != "" {
		t.Log("\n" + runGo(t, dir, "test", "-count=3", "-run", "^$", "-bench", *kernelBench, "-benchtime", "1s", "."))
	}
}
