package absolute

import (
	"fmt"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
)

// TestKernelsQEMU runs the NEON addRows of several model widths (blocks,
// the block loop, every tail) under qemu-aarch64-static.
func TestKernelsQEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, d := range []int{512, 33, 7, 80} {
		pkg := fmt.Sprintf("abs%d", d)
		files, err := NEON(pkg, "test/"+pkg+".yaml", Params{DModel: d})
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, asmtest.QEMUCase{Package: pkg, Files: files,
			Variants: asmtest.QEMUVariants(pkg, abi.AddRows),
			Test:     fmt.Sprintf(absTest, pkg, d)})
	}
	asmtest.RunQEMU(t, cs)
}

// absTest checks addRows.
const absTest = `package %s

import (
	"math/rand/v2"
	"testing"
)

const dModel = %d

func TestAddRows(t *testing.T) {
	add := registered["neon"].addRows
	rng := rand.New(rand.NewPCG(7, 8))
	const rows = 11
	table := make([]float32, rows*dModel)
	for i := range table {
		table[i] = float32(rng.NormFloat64())
	}
	for _, tokens := range lengths {
		x, xbuf := guarded(tokens * dModel)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 5)
		}
		x0 := append([]float32(nil), x...)
		idx := make([]int32, tokens)
		for i := range idx {
			idx[i] = int32(rng.IntN(rows))
		}
		add(x, table, idx)
		checkGuards(t, "x", xbuf)
		for tk := 0; tk < tokens; tk++ {
			for i := 0; i < dModel; i++ {
				j := tk*dModel + i
				if want := x0[j] + table[int(idx[tk])*dModel+i]; x[j] != want {
					t.Fatalf("tokens %%d t %%d i %%d: got %%g want %%g", tokens, tk, i, x[j], want)
				}
			}
		}
	}
}
`
