// The addRows kernel tests of asm/absolute (see asmtest.RunAMD64).
package kerneltest

import (
	"fmt"
	"math/rand"
	"testing"
)

type absCase struct {
	name     string
	dModel   int
	variants []variant
}

func TestAddRows(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const rows = 9
	for _, ac := range absCases {
		D := ac.dModel
		table, checkTable := guardedF32(t, rows*D)
		fill(r, table, -1, 1)
		table0 := append([]float32(nil), table...)
		for _, v := range ac.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", ac.name, v.Name)
				continue
			}
			for _, tokens := range []int{0, 1, 2, 5} {
				name := fmt.Sprintf("addRows %s/%s/t%d", ac.name, v.Name, tokens)
				x, checkX := guardedF32(t, tokens*D)
				idx, checkIdx := guardedI32(t, tokens)
				fill(r, x, -3, 3)
				for i := range idx {
					idx[i] = int32(r.Intn(rows))
				}
				if tokens > 0 {
					idx[tokens-1] = rows - 1
				}
				want := make([]float32, len(x))
				for tok := 0; tok < tokens; tok++ {
					for i := 0; i < D; i++ {
						want[tok*D+i] = x[tok*D+i] + table[int(idx[tok])*D+i]
					}
				}
				v.AddRows(x, table, idx)
				checkX(name)
				checkIdx(name)
				for i := range want {
					if x[i] != want[i] {
						t.Fatalf("%s: element %d: got %v want %v", name, i, x[i], want[i])
					}
				}
			}
			for i := range table {
				if table[i] != table0[i] {
					t.Fatalf("%s/%s: table changed", ac.name, v.Name)
				}
			}
			checkTable(ac.name + " table")
		}
	}
}
