package attention

import (
	"fmt"
	"testing"

	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/internal/asmtest"
)

// TestKernels16AMD64 runs TestKernels16QEMU's tests natively on the AVX2
// and AVX-512 scoresKV16 and valuesKV16 for f16 and bf16 and each of
// qemu16HeadDims (AVX-512: whole blocks of 32 in pair order, a 16-float
// piece after them (112, 80 in the goldens), tails of 1 to 15), and on
// pairOrder16, which only AVX-512 over bf16 registers: the kernels read q
// and keep acc in the order each variant declares.
func TestKernels16AMD64(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		for _, d := range qemu16HeadDims {
			pkg := fmt.Sprintf("attn%s_%d", st, d)
			files, err := amd64.Files(pkg, "test/"+pkg+".yaml", amd64.ISAs(true, true), AMD64Storage16(d, st))
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			cs = append(cs, kv16Case(pkg, st, d, files, asmtest.NativeVariants(pkg, kv16Kernels...)))
		}
	}
	out := asmtest.RunNativeAMD64(t, cs)
	asmtest.LogMatches(t, out, true, `scoresKV16 \w+ \w+ HeadDim \d+: .*`)
}
