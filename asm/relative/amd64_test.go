package relative

import (
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// relHarnessSrc is harnessSrc for rpe_full and xl packages, whose kernels
// struct has its own fields (scoresRow differs between the two); the
// registered kernels are exported as RelVariant, with the xl scoresRow in
// XLScoresRow.
const relHarnessSrc = `// Test harness standing in for the <name>_variants.go of gen/gocode's registry.

package %s

type kernels struct {
%s}

// RelVariant is one registered variant, with exported fields.
type RelVariant = struct {
	Name        string
	Available   bool
	DotRows     func(dst, x, rows []float32)
	ScoresRow   func(dst, q, k, bias []float32, scale float32)
	AxpyRows    func(dst, w, rows []float32)
	XLScoresRow func(dst, qu, k, qv, r []float32)
}

// Registered lists the variants in registration order.
var Registered []RelVariant

func registerVariant(name string, available bool, k kernels) {
	Registered = append(Registered, RelVariant{Name: name, Available: available, %s})
}
`

// relHarness returns relHarnessSrc for package pkg.
func relHarness(pkg string, xl bool) string {
	// Both families' packages also carry the attention form's kernels (tested
	// in asm/attention and asm/bias; here they only have to link).
	var att strings.Builder
	for _, k := range []abi.Kernel{abi.ScoresKV, abi.ValuesKV, abi.MaxRow, abi.ExpShift} {
		fmt.Fprintf(&att, "\t%s %s\n", k.Field, k.FuncType())
	}
	if xl {
		return fmt.Sprintf(relHarnessSrc, pkg, "\tscoresRow func(dst, qu, k, qv, r []float32)\n"+att.String(), "XLScoresRow: k.scoresRow")
	}
	return fmt.Sprintf(relHarnessSrc, pkg,
		"\tdotRows   func(dst, x, rows []float32)\n\tscoresRow func(dst, q, k, bias []float32, scale float32)\n\taxpyRows  func(dst, w, rows []float32)\n"+att.String(),
		"DotRows: k.dotRows, ScoresRow: k.scoresRow, AxpyRows: k.axpyRows")
}

// amd64Shapes are the members and head dims of TestKernelsAMD64.
var amd64Shapes = []struct {
	xl bool
	d  int
}{
	{false, 1}, {false, 7}, {false, 64}, {false, 72}, {false, 600}, {false, 1803},
	{true, 6}, {true, 64}, {true, 72}, {true, 300},
}

// dirOf is the test package of a shape.
func dirOf(xl bool, d int) string {
	if xl {
		return fmt.Sprintf("xl%d", d)
	}
	return fmt.Sprintf("rpe%d", d)
}

// TestKernelsAMD64 generates a package per shape with both variants, vets
// it and runs testdata/kerneltest/rel_test.go against it over row counts
// around every block size.
func TestKernelsAMD64(t *testing.T) {
	var pkgs []asmtest.Pkg
	var cases strings.Builder
	for _, s := range amd64Shapes {
		dir := dirOf(s.xl, s.d)
		files, err := AMD64(dir, dir+".yaml", true, true, Params{HeadDim: s.d, XL: s.xl})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		files = append(files, emit.File{Name: "harness.go", Data: []byte(relHarness(dir, s.xl))})
		pkgs = append(pkgs, asmtest.Pkg{Dir: dir, Files: files})
		fmt.Fprintf(&cases, "\t{%q, %t, %d, %s.Registered},\n", dir, s.xl, s.d, dir)
	}
	asmtest.RunAMD64(t, pkgs, "var relCases = []relCase{\n"+cases.String()+"}\n", "testdata/kerneltest/rel_test.go")
}

// TestFiles checks the AVX and NEON files of both members, the NEON WORD
// encodings and determinism.
func TestFiles(t *testing.T) {
	for _, c := range []struct {
		p         Params
		amd, neon string
		neonDecls []string
	}{
		{Params{HeadDim: 64}, "kernels{dotRows: dotRowsAVX2, scoresRow: scoresRowAVX2, axpyRows: axpyRowsAVX2, scoresKV: scoresKVAVX2, valuesKV: valuesKVAVX2, maxRow: maxRowAVX2, expShift: expShiftAVX2}",
			"kernels{dotRows: dotRowsNEON, scoresRow: scoresRowNEON, axpyRows: axpyRowsNEON, scoresKV: scoresKVNEON, valuesKV: valuesKVNEON, maxRow: maxRowNEON, expShift: expShiftNEON}",
			[]string{"func dotRowsNEON(dst, x, rows []float32)", "func scoresRowNEON(dst, q, k, bias []float32, scale float32)", "func axpyRowsNEON(dst, w, rows []float32)"}},
		{Params{HeadDim: 7}, "kernels{dotRows: dotRowsAVX2, scoresRow: scoresRowAVX2, axpyRows: axpyRowsAVX2, scoresKV: scoresKVAVX2, valuesKV: valuesKVAVX2, maxRow: maxRowAVX2, expShift: expShiftAVX2}",
			"kernels{dotRows: dotRowsNEON, scoresRow: scoresRowNEON, axpyRows: axpyRowsNEON, scoresKV: scoresKVNEON, valuesKV: valuesKVNEON, maxRow: maxRowNEON, expShift: expShiftNEON}", nil},
		{Params{HeadDim: 6, XL: true}, "kernels{scoresRow: scoresRowAVX2, scoresKV: scoresKVAVX2, valuesKV: valuesKVAVX2, maxRow: maxRowAVX2, expShift: expShiftAVX2}",
			"kernels{scoresRow: scoresRowNEON, scoresKV: scoresKVNEON, valuesKV: valuesKVNEON, maxRow: maxRowNEON, expShift: expShiftNEON}",
			[]string{"func scoresRowNEON(dst, qu, k, qv, r []float32)"}},
		{Params{HeadDim: 274, XL: true}, "kernels{scoresRow: scoresRowAVX2, scoresKV: scoresKVAVX2, valuesKV: valuesKVAVX2, maxRow: maxRowAVX2, expShift: expShiftAVX2}",
			"kernels{scoresRow: scoresRowNEON, scoresKV: scoresKVNEON, valuesKV: valuesKVNEON, maxRow: maxRowNEON, expShift: expShiftNEON}", nil},
	} {
		files, err := AMD64("shaw", "shaw.yaml", true, true, c.p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckAMD64(t, files, "shaw", "shaw.yaml", c.amd)
		asmtest.Deterministic(t, "shaw", func() ([]emit.File, error) { return AMD64("shaw", "shaw.yaml", true, true, c.p) })
		files, err = NEON("shaw", "shaw.yaml", c.p)
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckNEON(t, files, "shaw", "shaw.yaml", c.neonDecls, c.neon)
		if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
			t.Errorf("%+v: no WORD lines", c.p)
		}
		asmtest.Deterministic(t, "shaw", func() ([]emit.File, error) { return NEON("shaw", "shaw.yaml", c.p) })
	}
	// Row strides beyond an ADD immediate are the emitter's error.
	if _, err := NEON("m", "m.yaml", Params{HeadDim: 1 << 22, XL: true}); err == nil {
		t.Error("head_dim 2^22: no error")
	}
}

// TestReducePlan checks the simulated reduction trees of both ISAs: every
// lane of the result sums all lanes of one accumulator (reducePlan panics
// otherwise), each accumulator lands in exactly one lane, and a tree that
// adds a partial sum twice or mixes accumulators is rejected.
func TestReducePlan(t *testing.T) {
	for _, is := range []amd64.ISA{amd64.AVX2, amd64.AVX512} {
		g := gen{&amd64.Gen{ISA: is}}
		rowOf := reducePlan(g.reduceTree(), is.Lanes)
		seen := make([]bool, is.Lanes)
		for a, l := range rowOf {
			if l < 0 || l >= is.Lanes || seen[l] {
				t.Fatalf("%s: accumulator %d lands in lane %d (rowOf %v)", is.Name, a, l, rowOf)
			}
			seen[l] = true
		}
		t.Logf("%s: row of each accumulator %v", is.Name, rowOf)
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
