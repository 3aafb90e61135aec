package rope

import (
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// amd64Shapes are the head shapes of TestKernelsAMD64: full and partial
// rotation, both layouts, tails of every kind, the grouped and streaming
// token orders.
var amd64Shapes = []struct {
	dir         string
	h, r        int
	interleaved bool
}{
	{"rope128h", 128, 128, false},
	{"rope128i", 128, 128, true},
	{"rope64x16h", 64, 16, false},
	{"rope256x64i", 256, 64, true},
	{"rope64x48i", 64, 48, true},
	{"rope32x24h", 32, 24, false},
	{"rope10x6h", 10, 6, false},
	{"rope512h", 512, 512, false},
	{"rope64x42i", 64, 42, true},  // 21 pairs: vector blocks and an odd scalar rest
	{"rope40x34h", 40, 34, false}, // 17 pairs
	// With the shapes above, every tail of farRows' 16, 8 and 4 lanes:
	{"rope16x14h", 16, 14, false}, // 7 pairs: 4+1+1+1
	{"rope64x12i", 64, 12, true},  // 6 pairs: 4+1+1
	{"rope8x4h", 8, 4, false},     // 2 pairs
}

// TestKernelsAMD64 generates a package per shape with both variants, vets
// it and runs testdata/kerneltest/rope_test.go against it: rotate compared
// with a float64 reference, inputs against PROT_NONE pages.
func TestKernelsAMD64(t *testing.T) {
	var pkgs []asmtest.Pkg
	var cases strings.Builder
	for _, s := range amd64Shapes {
		files, err := AMD64(s.dir, s.dir+".yaml", true, true, shape(s.h, s.r, s.interleaved))
		if err != nil {
			t.Fatalf("%s: %v", s.dir, err)
		}
		files = append(files, emit.File{Name: "harness.go", Data: []byte(asmtest.Harness(s.dir))})
		pkgs = append(pkgs, asmtest.Pkg{Dir: s.dir, Files: files})
		fmt.Fprintf(&cases, "\t{%q, %d, %d, %t, %s.Registered},\n", s.dir, s.h, s.r, !s.interleaved, s.dir)
	}
	config := fmt.Sprintf("// ropeGroupedMaxBytes is asm/rope's: the largest rotate call in the grouped order.\nconst ropeGroupedMaxBytes = %d\n\nvar ropeCases = []ropeCase{\n%s}\n", ropeGroupedMaxBytes, cases.String())
	asmtest.RunAMD64(t, pkgs, config, "testdata/kerneltest/rope_test.go")
}

// TestFilesAMD64 checks the files of every shape and that generation is
// deterministic; no variant asked gives no files.
func TestFilesAMD64(t *testing.T) {
	for _, s := range amd64Shapes {
		files, err := AMD64(s.dir, s.dir+".yaml", true, true, shape(s.h, s.r, s.interleaved))
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckAMD64(t, files, s.dir, s.dir+".yaml", "kernels{rotate: rotateAVX2, farRows: farRowsAVX2}")
		asmtest.Deterministic(t, s.dir, func() ([]emit.File, error) {
			return AMD64(s.dir, s.dir+".yaml", true, true, shape(s.h, s.r, s.interleaved))
		})
	}
	files, err := AMD64("p", "p.yaml", true, false, shape(64, 64, false))
	if err != nil || strings.Contains(string(files[1].Data), "avx512") {
		t.Errorf("AVX2 only: %v, %v", asmtest.Names(files), err)
	}
	if files, err := AMD64("p", "p.yaml", false, false, shape(64, 64, false)); files != nil || err != nil {
		t.Errorf("no variant: got %v, %v; want no files", asmtest.Names(files), err)
	}
}

// TestFilesNEON checks the NEON files of every shape, their WORD encodings
// against go tool objdump, and determinism.
func TestFilesNEON(t *testing.T) {
	for _, s := range qemuShapes {
		p := shape(s.h, s.r, s.interleaved)
		files, err := NEON("llama", "zoo/llama.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckNEON(t, files, "llama", "zoo/llama.yaml",
			[]string{"func rotateNEON" + abi.Rotate.Signature(), "func farRowsNEON" + abi.FarRows.Signature()},
			"kernels{rotate: rotateNEON, farRows: farRowsNEON}")
		asmtest.Deterministic(t, "llama", func() ([]emit.File, error) { return NEON("llama", "zoo/llama.yaml", p) })
	}
	for _, p := range []Params{shape(64, 46, true), shape(128, 110, false)} {
		files, err := NEON("a", "a.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
			t.Errorf("%+v: no WORD lines", p)
		}
	}
}
