package absolute

import (
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// widths are the model widths of the kernel tests: full blocks, the block
// loop, tails of every kind.
var widths = []int{512, 33, 7, 1000, 80, 23}

// wideWidths are the model widths of the addRows64 tests: besides those of
// widths, 143 takes the AVX block loop and then whole vectors, a YMM
// operation on AVX-512 and scalars; 1 is a scalar only.
var wideWidths = []int{512, 33, 7, 1000, 143, 1}

// harness64 stands in for the <name>_variants.go of an algebraic package
// (the kernels struct with addRows64 only) and exports what was registered.
const harness64 = `package %s

` + "%s" + `
// Variant is one registered variant, with exported fields.
type Variant = struct {
	Name      string
	Available bool
	AddRows64 func(x []float32, table []float64, idx []int32)
}

// Registered lists the variants in registration order.
var Registered []Variant

func registerVariant(name string, available bool, k kernels) {
	Registered = append(Registered, Variant{name, available, k.addRows64})
}
`

// TestKernelsAMD64 generates a package per width with both variants of
// addRows and of addRows64, vets them and runs
// testdata/kerneltest/abs_test.go and abs64_test.go against them.
func TestKernelsAMD64(t *testing.T) {
	var pkgs []asmtest.Pkg
	var cases, cases64 strings.Builder
	for _, d := range widths[:4] {
		dir := fmt.Sprintf("abs%d", d)
		files, err := AMD64(dir, dir+".yaml", true, true, Params{DModel: d})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		files = append(files, emit.File{Name: "harness.go", Data: []byte(asmtest.Harness(dir))})
		pkgs = append(pkgs, asmtest.Pkg{Dir: dir, Files: files})
		fmt.Fprintf(&cases, "\t{%q, %d, %s.Registered},\n", dir, d, dir)
	}
	for _, d := range wideWidths {
		dir := fmt.Sprintf("wide%d", d)
		files, err := AMD64(dir, dir+".yaml", true, true, Params{DModel: d, Wide: true})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		h := fmt.Sprintf(harness64, dir, asmtest.KernelsStruct(abi.AddRows64))
		files = append(files, emit.File{Name: "harness.go", Data: []byte(h)})
		pkgs = append(pkgs, asmtest.Pkg{Dir: dir, Files: files})
		fmt.Fprintf(&cases64, "\t{%q, %d, %s.Registered},\n", dir, d, dir)
	}
	asmtest.RunAMD64(t, pkgs, "var absCases = []absCase{\n"+cases.String()+"}\n\nvar abs64Cases = []abs64Case{\n"+cases64.String()+"}\n",
		"testdata/kerneltest/abs_test.go", "testdata/kerneltest/abs64_test.go")
}

// TestFiles checks the AVX and NEON files of every width, the NEON WORD
// encodings and determinism.
func TestFiles(t *testing.T) {
	for _, d := range widths {
		p := Params{DModel: d}
		files, err := AMD64("sin", "s.yaml", true, true, p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckAMD64(t, files, "sin", "s.yaml", "kernels{addRows: addRowsAVX2}")
		asmtest.Deterministic(t, "sin", func() ([]emit.File, error) { return AMD64("sin", "s.yaml", true, true, p) })
		files, err = NEON("sin", "s.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckNEON(t, files, "sin", "s.yaml", []string{"func addRowsNEON(x []float32, table []float32, idx []int32)"}, "kernels{addRows: addRowsNEON}")
		if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
			t.Errorf("d_model %d: no WORD lines", d)
		}
		asmtest.Deterministic(t, "sin", func() ([]emit.File, error) { return NEON("sin", "s.yaml", p) })
	}
	for _, d := range wideWidths {
		p := Params{DModel: d, Wide: true}
		files, err := AMD64("alg", "a.yaml", true, true, p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckAMD64(t, files, "alg", "a.yaml", "kernels{addRows64: addRows64AVX2}")
		asmtest.Deterministic(t, "alg", func() ([]emit.File, error) { return AMD64("alg", "a.yaml", true, true, p) })
		files, err = NEON("alg", "a.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckNEON(t, files, "alg", "a.yaml", []string{"func addRows64NEON(x []float32, table []float64, idx []int32)"}, "kernels{addRows64: addRows64NEON}")
		if n := asmtest.CheckWords(t, files[0].Data); n == 0 && d >= 4 {
			t.Errorf("d_model %d: no WORD lines", d)
		}
		asmtest.Deterministic(t, "alg", func() ([]emit.File, error) { return NEON("alg", "a.yaml", p) })
	}
}
