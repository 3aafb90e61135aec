package amd64

import "testing"

// TestReducePlan checks the simulated reduction trees of both ISAs: every
// lane of the result sums all lanes of one accumulator (reducePlan panics
// otherwise), each accumulator lands in exactly one lane, and a tree that
// adds a partial sum twice or mixes accumulators is rejected.
func TestReducePlan(t *testing.T) {
	for _, is := range []isa{isaAVX2, isaAVX512} {
		g := &gen{isa: is}
		rowOf := reducePlan(g.reduceTree(), is.lanes)
		seen := make([]bool, is.lanes)
		for a, l := range rowOf {
			if l < 0 || l >= is.lanes || seen[l] {
				t.Fatalf("%s: accumulator %d lands in lane %d (rowOf %v)", is.name, a, l, rowOf)
			}
			seen[l] = true
		}
		t.Logf("%s: row of each accumulator %v", is.name, rowOf)
	}
	bad := [][]redLevel{
		// The same shuffle for both summands adds each partial twice.
		{{"VPERM2F128", 0x20, 0x20}, {"VSHUFPS", 0x88, 0xdd}, {"VSHUFPS", 0x88, 0xdd}},
		// Pairing lanes across the two sources mixes accumulators.
		{{"VPERM2F128", 0x20, 0x31}, {"VSHUFPS", 0x88, 0xdd}, {"VSHUFPS", 0x44, 0xee}},
		// Too few levels leave two registers.
		{{"VPERM2F128", 0x20, 0x31}, {"VSHUFPS", 0x88, 0xdd}},
	}
	for i, tree := range bad {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("bad tree %d accepted", i)
				}
			}()
			reducePlan(tree, 8)
		}()
	}
}
