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

	"github.com/posenc/posenc/internal/emit"
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
	rel := func(dir, enc string, d int) testPkg {
		return testPkg{dir, Params{Package: dir, Source: dir + ".yaml", Encoding: enc, HeadDim: d, AVX2: true, AVX512: true}}
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
		rel("rpe1", spec.RPEFull, 1),
		rel("rpe7", spec.RPEFull, 7),
		rel("rpe64", spec.RPEFull, 64),
		rel("rpe72", spec.RPEFull, 72),
		rel("rpe600", spec.RPEFull, 600),
		rel("rpe1803", spec.RPEFull, 1803),
		rel("xl6", spec.XL, 6),
		rel("xl64", spec.XL, 64),
		rel("xl72", spec.XL, 72),
		rel("xl300", spec.XL, 300),
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

// relHarnessSrc is harnessSrc for rpe_full and xl packages, whose kernels
// struct has its own fields (scoresRow differs between the two); the
// registered kernels are exported as RelVariant, with the xl scoresRow in
// XLScoresRow.
const relHarnessSrc = `// Test harness standing in for gen/golang's <name>_variants.go.

package %s

type kernels struct {
%s}

// RelVariant is one registered variant, with exported fields.
type RelVariant = struct {
	Name        string
	Available   bool
	DotRows     func(dst, x, rows []float32)
	ScoresRow   func(dst, q, k, bias []float32, scale float32)
	AxpyRows    func(dst, w, rows []float32)
	XLScoresRow func(dst, qu, k, qv, r []float32)
}

// Registered lists the variants in registration order.
var Registered []RelVariant

func registerVariant(name string, available bool, k kernels) {
	Registered = append(Registered, RelVariant{Name: name, Available: available, %s})
}
`

// relHarness returns relHarnessSrc for package pkg of encoding enc.
func relHarness(pkg, enc string) string {
	if enc == spec.XL {
		return fmt.Sprintf(relHarnessSrc, pkg, "\tscoresRow func(dst, qu, k, qv, r []float32)\n", "XLScoresRow: k.scoresRow")
	}
	return fmt.Sprintf(relHarnessSrc, pkg,
		"\tdotRows   func(dst, x, rows []float32)\n\tscoresRow func(dst, q, k, bias []float32, scale float32)\n\taxpyRows  func(dst, w, rows []float32)\n",
		"DotRows: k.dotRows, ScoresRow: k.scoresRow, AxpyRows: k.axpyRows")
}

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
	fmt.Fprintf(&cfg, "// ropeGroupedMaxBytes is asm/amd64's: the largest rotate call in the grouped order.\nconst ropeGroupedMaxBytes = %d\n\n", ropeGroupedMaxBytes)
	fmt.Fprintf(&cfg, "// expClamp is each variant's exp input range (asm/amd64 expClamp).\nvar expClamp = map[string][2]float32{\"avx2\": {%v, %v}, \"avx512\": {%v, %v}}\n\n",
		expClamp[8][0], expClamp[8][1], expClamp[16][0], expClamp[16][1])
	var rope, abs, bias, rel strings.Builder
	for _, tp := range testPkgs() {
		sub := filepath.Join(dir, tp.dir)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		files, err := Files(tp.params)
		if err != nil {
			t.Fatalf("%s: %v", tp.dir, err)
		}
		harness := fmt.Sprintf(harnessSrc, tp.dir)
		if p := tp.params; p.Encoding == spec.RPEFull || p.Encoding == spec.XL {
			harness = relHarness(tp.dir, p.Encoding)
		}
		files = append(files, emit.File{Name: "harness.go", Data: []byte(harness)})
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
		case spec.RPEFull, spec.XL:
			fmt.Fprintf(&rel, "\t{%q, %t, %d, %s.Registered},\n", tp.dir, p.Encoding == spec.XL, p.HeadDim, tp.dir)
		default:
			fmt.Fprintf(&abs, "\t{%q, %d, %s.Registered},\n", tp.dir, p.DModel, tp.dir)
		}
	}
	fmt.Fprintf(&cfg, "var ropeCases = []ropeCase{\n%s}\n\nvar biasCases = []biasCase{\n%s}\n\nvar absCases = []absCase{\n%s}\n\nvar relCases = []relCase{\n%s}\n",
		rope.String(), bias.String(), abs.String(), rel.String())
	cfgSrc, err := format.Source(cfg.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config_test.go"), cfgSrc, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kernels_test.go", "bench_test.go", "rel_test.go"} {
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
// The rpe_full and xl kernels are checked by testdata/kerneltest/rel_test.go
// over row counts around every block size.
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
