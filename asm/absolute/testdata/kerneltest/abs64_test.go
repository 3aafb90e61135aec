// The addRows64 kernel tests of asm/absolute (see asmtest.RunAMD64).
package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// variant64 is the Variant of the addRows64 packages' harness.
type variant64 = struct {
	Name      string
	Available bool
	AddRows64 func(x []float32, table []float64, idx []int32)
}

type abs64Case struct {
	name     string
	dModel   int
	variants []variant64
}

// TestAddRows64 checks x = float32(float64(x) + table row) bit for bit
// against a float64 loop, with x cancelling the row (x ≈ −row) on half the
// tokens: a float32 table or a float32 add would lose the row's low bits.
func TestAddRows64(t *testing.T) {
	r := rand.New(rand.NewSource(64))
	const rows = 9
	for _, ac := range abs64Cases {
		D := ac.dModel
		p, checkTable := guarded(t, 2*rows*D)
		table := unsafe.Slice((*float64)(p), rows*D)
		for i := range table {
			// Magnitudes up to 2^31 with all 53 bits significant.
			table[i] = math.Ldexp(r.Float64()-0.5, r.Intn(33))
		}
		table0 := append([]float64(nil), table...)
		for _, v := range ac.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", ac.name, v.Name)
				continue
			}
			for _, tokens := range []int{0, 1, 2, 5} {
				name := fmt.Sprintf("addRows64 %s/%s/t%d", ac.name, v.Name, tokens)
				x, checkX := guardedF32(t, tokens*D)
				idx, checkIdx := guardedI32(t, tokens)
				for i := range idx {
					idx[i] = int32(r.Intn(rows))
				}
				if tokens > 0 {
					idx[tokens-1] = rows - 1
				}
				for tok := 0; tok < tokens; tok++ {
					for i := 0; i < D; i++ {
						pe := table[int(idx[tok])*D+i]
						if tok%2 == 0 {
							x[tok*D+i] = float32(-pe + r.Float64() - 0.5)
						} else {
							x[tok*D+i] = float32(6*r.Float64() - 3)
						}
					}
				}
				want := make([]float32, len(x))
				for tok := 0; tok < tokens; tok++ {
					for i := 0; i < D; i++ {
						want[tok*D+i] = float32(float64(x[tok*D+i]) + table[int(idx[tok])*D+i])
					}
				}
				v.AddRows64(x, table, idx)
				checkX(name)
				checkIdx(name)
				for i := range want {
					if x[i] != want[i] {
						t.Fatalf("%s: element %d: got %v want %v", name, i, x[i], want[i])
					}
				}
			}
			for i := range table {
				if math.Float64bits(table[i]) != math.Float64bits(table0[i]) {
					t.Fatalf("%s/%s: table changed", ac.name, v.Name)
				}
			}
			checkTable(ac.name + " table")
		}
	}
}
