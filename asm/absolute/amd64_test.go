package absolute

import (
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// widths are the model widths of the kernel tests: full blocks, the block
// loop, tails of every kind.
var widths = []int{512, 33, 7, 1000, 80, 23}

// TestKernelsAMD64 generates a package per width with both variants, vets
// it and runs testdata/kerneltest/abs_test.go against it.
func TestKernelsAMD64(t *testing.T) {
	var pkgs []asmtest.Pkg
	var cases strings.Builder
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
	asmtest.RunAMD64(t, pkgs, "var absCases = []absCase{\n"+cases.String()+"}\n", "testdata/kerneltest/abs_test.go")
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
}
