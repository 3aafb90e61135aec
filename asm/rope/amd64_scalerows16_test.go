package rope

import (
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
)

// TestScaleRows16AMD64 runs TestScaleRows16 (qemu_scalerows16_test.go: the
// exact reference, bit for bit, NaN rules included) natively on the AVX2
// and AVX-512 scaleRows over f16 and bf16 (scalerows16.go), with x86's
// default NaN 0xFFC00000 for 0·∞.
func TestScaleRows16AMD64(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		pkg := "scale16" + st
		p := shape(8, 8, false)
		p.Storage, p.ScaleRows = st, true
		files, err := AMD64(pkg, "test/"+pkg+".yaml", true, true, p)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		variants := asmtest.NativeVariants(pkg, abi.Rotate16, abi.FarRows, abi.ScaleRows16)
		cs = append(cs, scale16Case(pkg, st, files, variants, 0xffc00000))
	}
	checkScale16Coverage(t, asmtest.RunNativeAMD64(t, cs), 2*2)
}
