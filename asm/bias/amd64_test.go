package bias

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

var expStride = flag.Int("expstride", 97, "TestKernelsAMD64 checks exp at every expstride-th float32 bit pattern (1: exhaustive, minutes)")

const expHarnessSrc = `package %s

// ExpRow maps a variant name to its exp test kernel.
var ExpRow = map[string]func(dst, src []float32){"avx2": expRowAVX2, "avx512": expRowAVX512}
`

// TestKernelsAMD64 generates the bias package with both variants and the
// exp test kernel, vets it and runs testdata/kerneltest/bias_test.go
// against it: addRow and softmaxRow compared with float64 references, and
// the exp accuracy sweep.
func TestKernelsAMD64(t *testing.T) {
	files, err := AMD64("bias", "bias.yaml", true, true, Params{ExpTest: true, Ramp: true})
	if err != nil {
		t.Fatal(err)
	}
	files = append(files,
		emit.File{Name: "harness.go", Data: []byte(asmtest.Harness("bias"))},
		emit.File{Name: "expharness.go", Data: []byte(fmt.Sprintf(expHarnessSrc, "bias"))})
	config := fmt.Sprintf("const (\n\texpMaxULP = %v\n\texpStride = %d\n)\n\n", expMaxULP, *expStride) +
		fmt.Sprintf("// expClamp is each variant's exp input range (asm/bias expClamp).\nvar expClamp = map[string][2]float32{\"avx2\": {%v, %v}, \"avx512\": {%v, %v}}\n\n",
			expClamp[8][0], expClamp[8][1], expClamp[16][0], expClamp[16][1]) +
		"var biasCases = []biasCase{\n\t{\"bias\", bias.Registered, bias.ExpRow},\n}\n"
	asmtest.RunAMD64(t, []asmtest.Pkg{{Dir: "bias", Files: files}}, config, "testdata/kerneltest/bias_test.go")
}

// TestFiles checks the AVX and NEON files, with and without the exp test
// kernel, their WORD encodings and determinism.
func TestFiles(t *testing.T) {
	for _, exp := range []bool{false, true} {
		p := Params{ExpTest: exp}
		files, err := AMD64("alibi", "a.yaml", true, true, p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckAMD64(t, files, "alibi", "a.yaml", "kernels{addRow: addRowAVX2, softmaxRow: softmaxRowAVX2}")
		if strings.Contains(string(files[0].Data)+string(files[1].Data), "expRow") != exp {
			t.Errorf("ExpTest %v: expRow emitted %v", exp, !exp)
		}
		asmtest.Deterministic(t, "alibi", func() ([]emit.File, error) { return AMD64("alibi", "a.yaml", true, true, p) })
		files, err = NEON("t5", "t5.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		decls := []string{"func addRowNEON(dst, src []float32)", "func softmaxRowNEON(row, bias []float32, scale float32)"}
		if exp {
			decls = append(decls, "func expNEON(dst, src []float32)")
		}
		asmtest.CheckNEON(t, files, "t5", "t5.yaml", decls, "kernels{addRow: addRowNEON, softmaxRow: softmaxRowNEON}")
		if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
			t.Error("no WORD lines")
		}
		asmtest.Deterministic(t, "t5", func() ([]emit.File, error) { return NEON("t5", "t5.yaml", p) })
	}
	// The alibi kernels (softmaxRamp, addRamp: D2 FMAX/FMUL/FSUB, FCVTN)
	// disassemble as their comments say.
	files, err := NEON("alibi", "a.yaml", Params{Ramp: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
		t.Error("no WORD lines")
	}
}
