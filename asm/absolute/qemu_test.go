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
	for _, d := range wideWidths {
		pkg := fmt.Sprintf("wide%d", d)
		files, err := NEON(pkg, "test/"+pkg+".yaml", Params{DModel: d, Wide: true})
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, asmtest.QEMUCase{Package: pkg, Files: files,
			Variants: asmtest.QEMUVariants(pkg, abi.AddRows64),
			Test:     fmt.Sprintf(abs64Test, pkg, d)})
	}
	asmtest.RunQEMU(t, cs)
}

// abs64Test checks addRows64 bit for bit against a float64 loop, with x
// cancelling the table row on even tokens.
const abs64Test = `package %s

import (
	"math"
	"math/rand/v2"
	"testing"
)

const dModel = %d

func TestAddRows64(t *testing.T) {
	add := registered["neon"].addRows64
	rng := rand.New(rand.NewPCG(9, 10))
	const rows = 11
	table := make([]float64, rows*dModel+2*guard)
	for i := range table {
		table[i] = math.Ldexp(rng.Float64()-0.5, rng.IntN(33))
	}
	tb := table[guard : guard+rows*dModel : guard+rows*dModel]
	table0 := append([]float64(nil), table...)
	for _, tokens := range lengths {
		x, xbuf := guarded(tokens * dModel)
		idx := make([]int32, tokens)
		for i := range idx {
			idx[i] = int32(rng.IntN(rows))
		}
		for tk := 0; tk < tokens; tk++ {
			for i := 0; i < dModel; i++ {
				pe := tb[int(idx[tk])*dModel+i]
				if tk%%2 == 0 {
					x[tk*dModel+i] = float32(-pe + rng.Float64() - 0.5)
				} else {
					x[tk*dModel+i] = float32(rng.NormFloat64() * 5)
				}
			}
		}
		x0 := append([]float32(nil), x...)
		add(x, tb, idx)
		checkGuards(t, "x", xbuf)
		for tk := 0; tk < tokens; tk++ {
			for i := 0; i < dModel; i++ {
				j := tk*dModel + i
				if want := float32(float64(x0[j]) + tb[int(idx[tk])*dModel+i]); x[j] != want {
					t.Fatalf("tokens %%d t %%d i %%d: got %%g want %%g", tokens, tk, i, x[j], want)
				}
			}
		}
	}
	for i := range table {
		if math.Float64bits(table[i]) != math.Float64bits(table0[i]) {
			t.Fatalf("table element %%d changed", i)
		}
	}
}
`

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
