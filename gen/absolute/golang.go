package absolute

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// absTableBytes caps the lazily built table of the formula encodings at
// 64 MiB: 16 Mi float32 values, or 8 Mi float64 values for a wide member
// (algebraic); positions past the capped rows take the exact path.
const absTableBytes = 64 << 20

// absChunk is the number of tokens Add hands to the kernel at a time.
const absChunk = 256

// absAddRowsField is the kernels field of sinusoidal, algebraic, binary and
// learned packages (docs/internals.md, kernel ABI "absolute").
var absAddRowsField = gocode.KernelField{Name: "addRows", Type: "func(x, table []float32, idx []int32)"}

// absAddRows64Field is the kernels field of algebraic packages: addRows64
// adds float64 rows with one rounding (abi.AddRows64).
var absAddRows64Field = gocode.KernelField{Name: abi.AddRows64.Field, Type: abi.AddRows64.FuncType()}

// absMixRowsField is the kernels field of mixture packages (generic only):
// x[t] += α·pe[idx[t]] + (1−α)·table[idx[t]].
var absMixRowsField = gocode.KernelField{Name: "mixRows", Type: "func(x, pe, table []float32, idx []int32, alpha float32)"}

// GoFiles returns the Go files of a sinusoidal, algebraic, binary,
// learned or mixture package.
func (c *Consts) GoFiles() ([]emit.File, error) {
	s := c.Spec
	switch memberOf(s) {
	case sinusoidal, mixture:
		if len(c.AbsDivisors) != (s.DModel+1)/2 {
			return nil, fmt.Errorf("golang: %s: %d sinusoidal divisors for d_model %d", s.File, len(c.AbsDivisors), s.DModel)
		}
	case algebraic:
		if len(c.AbsDivisors) != s.DModel {
			return nil, fmt.Errorf("golang: %s: %d algebraic divisors for d_model %d", s.File, len(c.AbsDivisors), s.DModel)
		}
	case binary, learned:
	default:
		return nil, fmt.Errorf("golang: %s: encoding %q is not an absolute encoding", s.File, s.Encoding)
	}
	var files []emit.File
	for _, build := range []func(*Consts) (emit.File, error){absAPI, absGeneric, absTest} {
		f, err := build(c)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	field := absAddRowsField
	switch {
	case memberOf(s) == mixture:
		field = absMixRowsField
	case memberOf(s).wide():
		field = absAddRows64Field
	}
	reg, err := gocode.Registry(s.Name, s.File, []gocode.KernelField{field})
	if err != nil {
		return nil, err
	}
	return append(files, reg), nil
}

// absHasFormula reports whether PE(p) is computed by the package (everything
// but learned).
func absHasFormula(s *spec.Spec) bool { return memberOf(s) != learned }

// absTableElem is the byte size of one formula table value: 8 (float64)
// for a wide member, else 4.
func absTableElem(s *spec.Spec) int {
	if memberOf(s).wide() {
		return 8
	}
	return 4
}

// absTableRows is the number of rows of the formula table: MaxLen, capped at
// absTableBytes.
func absTableRows(s *spec.Spec) int {
	return max(1, min(s.MaxLen, absTableBytes/(absTableElem(s)*s.DModel)))
}

// absAPI emits <name>.go.
func absAPI(c *Consts) (emit.File, error) {
	s := c.Spec
	pkg := s.Name
	f := gocode.NewFile(pkg, s.File)
	gocode.PackageDoc(f, absPackageDoc(c))

	f.Comment("DModel is the model width: x is [tokens][DModel].")
	f.Const().Id("DModel").Op("=").Lit(s.DModel)
	switch memberOf(s) {
	case learned, mixture:
		f.Comment("MaxLen is the number of rows of the learned table, [MaxLen][DModel]: positions")
		f.Comment("must lie in [0, MaxLen).")
	case sinusoidal:
		f.Comment("MaxLen is the spec's max_len: positions below it come from a table built on first")
		f.Comment("use (up to TableRows rows); every other position is computed exactly.")
	case algebraic:
		f.Comment("MaxLen is the spec's max_len, the formula's constant: PE(p, i) = p/(MaxLen−1)^(i/(DModel−1)).")
	case binary:
		f.Comment("MaxLen is the spec's max_len: the encoding uses its bit length, BinBits.")
	}
	f.Const().Id("MaxLen").Op("=").Lit(s.MaxLen)

	if absHasFormula(s) {
		absFormula(f, c)
		absTable(f, c)
	}
	switch memberOf(s) {
	case learned, mixture:
		absTableAdd(f, c)
	default:
		absFormulaAdd(f, c)
	}
	return gocode.Render(pkg+".go", f)
}

// absPackageDoc is the package comment, naming the formula and its source.
func absPackageDoc(c *Consts) string {
	s := c.Spec
	pkg := s.Name
	switch memberOf(s) {
	case sinusoidal:
		return fmt.Sprintf("Package %s adds the sinusoidal positional encoding of Vaswani et al.,\n"+
			"\"Attention Is All You Need\" (2017), with base %v: PE(p, 2i) = sin(p/base^(2i/DModel)),\n"+
			"PE(p, 2i+1) = cos(p/base^(2i/DModel)), computed in float64 and rounded to float32.", pkg, s.Base)
	case algebraic:
		return fmt.Sprintf("Package %s adds the algebraic absolute positional encoding:\n"+
			"PE(p, i) = p / (max_len−1)^(i/(d_model−1)), computed in float64; Add sums x\n"+
			"and PE in float64 and rounds once to float32, Encode rounds PE to float32.", pkg)
	case binary:
		return fmt.Sprintf("Package %s adds the binary absolute positional encoding:\n"+
			"PE(p, i) = (p >> i) & 1 for i < BinBits = min(d_model,\n"+
			"bitlen(max_len)), 0 for the other dims.", pkg)
	case learned:
		return fmt.Sprintf("Package %s adds a learned absolute positional embedding: row pos[t] of a\n"+
			"caller-supplied [MaxLen][DModel] table is added to token t.", pkg)
	default: // mixture
		return fmt.Sprintf("Package %s adds a mixture of absolute encodings,\n"+
			"PE = α·PE_sin + (1−α)·PE_learned: the sinusoidal encoding of Vaswani et al. (2017)\n"+
			"with base %d and a caller-supplied [MaxLen][DModel] learned table indexed by position.", pkg, MixtureBase)
	}
}

// absFormula emits the formula constants and encodeRow.
func absFormula(f *jen.File, c *Consts) {
	s := c.Spec
	dst := jen.Id("dst").Op("=").Id("dst").Index(jen.Op(":").Id("DModel"))
	switch memberOf(s) {
	case sinusoidal, mixture:
		// var divisors = [(DModel+1)/2]float64{...}
		base := s.Base
		if memberOf(s) == mixture || base == 0 {
			base = MixtureBase
		}
		f.Comment(fmt.Sprintf("divisors[i] = %v^(2i/DModel), the wavelength divisor of dims 2i and 2i+1.", base))
		f.Var().Id("divisors").Op("=").Index(jen.Parens(jen.Id("DModel").Op("+").Lit(1)).Op("/").Lit(2)).Float64().Add(gocode.FloatList(c.AbsDivisors))

		// func encodeRow(dst []float32, p int) {
		//	dst = dst[:DModel]
		//	for i, div := range divisors {
		//		s, c := math.Sincos(float64(p) / div)
		//		dst[2*i] = float32(s)
		//		[if 2*i+1 < DModel {] dst[2*i+1] = float32(c) [}]   // guarded for odd DModel
		//	}
		// }
		cos := jen.Id("dst").Index(jen.Lit(2).Op("*").Id("i").Op("+").Lit(1)).Op("=").Float32().Call(jen.Id("c"))
		if s.DModel%2 == 1 {
			cos = jen.If(jen.Lit(2).Op("*").Id("i").Op("+").Lit(1).Op("<").Id("DModel")).Block(cos)
		}
		f.Comment("encodeRow writes PE(p) to dst[:DModel]: the angle p/divisors[i] (one float64 rounding,")
		f.Comment("so int32 positions stay far inside the bounds) and its sine and cosine, rounded to float32.")
		f.Func().Id("encodeRow").Params(jen.Id("dst").Index().Float32(), jen.Id("p").Int()).Block(
			dst,
			jen.For(jen.List(jen.Id("i"), jen.Id("div")).Op(":=").Range().Id("divisors")).Block(
				jen.List(jen.Id("s"), jen.Id("c")).Op(":=").Qual("math", "Sincos").Call(jen.Float64().Call(jen.Id("p")).Op("/").Id("div")),
				jen.Id("dst").Index(jen.Lit(2).Op("*").Id("i")).Op("=").Float32().Call(jen.Id("s")),
				cos,
			),
		)
	case algebraic:
		// var divisors = [DModel]float64{...}
		f.Comment("divisors[i] = (MaxLen−1)^(i/(DModel−1)) (exponent 0 when DModel is 1).")
		f.Var().Id("divisors").Op("=").Index(jen.Id("DModel")).Float64().Add(gocode.FloatList(c.AbsDivisors))
		// func encodeRow(dst []float32, p int) {
		//	dst = dst[:DModel]
		//	for i, div := range divisors { dst[i] = float32(float64(p) / div) }
		// }
		f.Comment("encodeRow writes PE(p) = p/divisors[i] to dst[:DModel], in float64 rounded to float32.")
		f.Func().Id("encodeRow").Params(jen.Id("dst").Index().Float32(), jen.Id("p").Int()).Block(
			dst,
			jen.For(jen.List(jen.Id("i"), jen.Id("div")).Op(":=").Range().Id("divisors")).Block(
				jen.Id("dst").Index(jen.Id("i")).Op("=").Float32().Call(jen.Float64().Call(jen.Id("p")).Op("/").Id("div")),
			),
		)
		// func encodeRow64(dst []float64, p int) {
		//	dst = dst[:DModel]
		//	for i, div := range divisors { dst[i] = float64(p) / div }
		// }
		f.Comment("encodeRow64 writes PE(p) = p/divisors[i] to dst[:DModel] in float64: the rows Add sums")
		f.Comment("with x before its one rounding.")
		f.Func().Id("encodeRow64").Params(jen.Id("dst").Index().Float64(), jen.Id("p").Int()).Block(
			dst,
			jen.For(jen.List(jen.Id("i"), jen.Id("div")).Op(":=").Range().Id("divisors")).Block(
				jen.Id("dst").Index(jen.Id("i")).Op("=").Float64().Call(jen.Id("p")).Op("/").Id("div"),
			),
		)
	case binary:
		// const BinBits = ...
		f.Comment("BinBits is the number of dims that carry a bit of the position: min(DModel, bitlen(MaxLen)).")
		f.Const().Id("BinBits").Op("=").Lit(c.BinBits)
		// func encodeRow(dst []float32, p int) {
		//	dst = dst[:DModel]
		//	clear(dst[BinBits:])
		//	u := uint32(int32(p))
		//	for i := range BinBits { dst[i] = float32(u >> i & 1) }
		// }
		f.Comment("encodeRow writes PE(p) to dst[:DModel]: bit i of p for i < BinBits, 0 above. A")
		f.Comment("negative p contributes the bits of its two's-complement int32 (Python's p >> i & 1).")
		f.Func().Id("encodeRow").Params(jen.Id("dst").Index().Float32(), jen.Id("p").Int()).Block(
			dst,
			jen.Clear(jen.Id("dst").Index(jen.Id("BinBits").Op(":"))),
			jen.Id("u").Op(":=").Uint32().Call(jen.Int32().Call(jen.Id("p"))),
			jen.For(jen.Id("i").Op(":=").Range().Id("BinBits")).Block(
				jen.Id("dst").Index(jen.Id("i")).Op("=").Float32().Call(jen.Id("u").Op(">>").Id("i").Op("&").Lit(1)),
			),
		)
	}
}

// absTable emits TableRows and the lazily built table: float32 rows from
// encodeRow, or float64 rows from encodeRow64 for a wide member.
func absTable(f *jen.File, c *Consts) {
	wide := memberOf(c.Spec).wide()
	elt, enc, kind := jen.Float32(), "encodeRow", "float32"
	if wide {
		elt, enc, kind = jen.Float64(), "encodeRow64", "float64"
	}
	// const TableRows = ...
	f.Comment("TableRows is the number of precomputed rows: positions in [0, TableRows) are read from")
	f.Comment("a table of " + kind + " values built on first use (MaxLen rows, capped at 64 MiB).")
	f.Const().Id("TableRows").Op("=").Lit(absTableRows(c.Spec))
	// var (tableOnce sync.Once; table []float32 (wide: float64))
	f.Var().Defs(
		jen.Id("tableOnce").Qual("sync", "Once"),
		jen.Comment("table is [TableRows][DModel], PE(p) in row p."),
		jen.Id("table").Index().Add(elt),
	)
	// func posTable() []float32 {
	//	tableOnce.Do(func() {
	//		t := make([]float32, TableRows*DModel)
	//		for p := range TableRows { encodeRow(t[p*DModel:], p) }
	//		table = t
	//	})
	//	return table
	// }
	// (wide: []float64 and encodeRow64)
	f.Comment("posTable returns the table, building it on the first call.")
	f.Func().Id("posTable").Params().Index().Add(elt).Block(
		jen.Id("tableOnce").Dot("Do").Call(jen.Func().Params().Block(
			jen.Id("t").Op(":=").Make(jen.Index().Add(elt), jen.Id("TableRows").Op("*").Id("DModel")),
			jen.For(jen.Id("p").Op(":=").Range().Id("TableRows")).Block(
				jen.Id(enc).Call(jen.Id("t").Index(jen.Id("p").Op("*").Id("DModel").Op(":")), jen.Id("p")),
			),
			jen.Id("table").Op("=").Id("t"),
		)),
		jen.Return(jen.Id("table")),
	)
}

// absCheckX renders the len(x) == len(pos)·DModel check.
func absCheckX(pkg string) jen.Code {
	// if len(pos) > math.MaxInt/DModel || len(x) != len(pos)*DModel { panic(...) }
	return jen.If(jen.Len(jen.Id("pos")).Op(">").Qual("math", "MaxInt").Op("/").Id("DModel").Op("||").
		Len(jen.Id("x")).Op("!=").Len(jen.Id("pos")).Op("*").Id("DModel")).Block(
		gocode.Panicf(pkg, "Add: len(x) = %d, want len(pos)·DModel = %d·%d", jen.Len(jen.Id("x")), jen.Len(jen.Id("pos")), jen.Id("DModel")),
	)
}

// absGeneric emits <name>_generic.go.
func absGeneric(c *Consts) (emit.File, error) {
	s := c.Spec
	f := gocode.NewFile(s.Name, s.File)
	xt := jen.Id("xt").Op(":=").Parens(jen.Op("*").Index(jen.Id("DModel")).Float32()).Call(jen.Id("x").Index(jen.Id("t").Op("*").Id("DModel").Op(":")))
	row := func(name, from string) jen.Code {
		return jen.Id(name).Op(":=").Parens(jen.Op("*").Index(jen.Id("DModel")).Float32()).Call(jen.Id(from).Index(jen.Int().Call(jen.Id("p")).Op("*").Id("DModel").Op(":")))
	}
	if memberOf(s) == mixture {
		// var genericKernels = kernels{mixRows: mixRowsGeneric}
		f.Comment("genericKernels is the portable Go implementation, the only one for mixture.")
		f.Var().Id("genericKernels").Op("=").Id("kernels").Values(jen.Dict{jen.Id("mixRows"): jen.Id("mixRowsGeneric")})
		// func mixRowsGeneric(x, pe, table []float32, idx []int32, alpha float32) {
		//	a := float64(alpha); b := 1 - a
		//	for t, p := range idx {
		//		xt := (*[DModel]float32)(x[t*DModel:])
		//		sr := (*[DModel]float32)(pe[int(p)*DModel:])
		//		lr := (*[DModel]float32)(table[int(p)*DModel:])
		//		for i := range xt { xt[i] = float32(float64(xt[i]) + a*float64(sr[i]) + b*float64(lr[i])) }
		//	}
		// }
		f.Comment("mixRowsGeneric adds α·pe[idx[t]] + (1−α)·table[idx[t]] to token t of x, in float64.")
		f.Func().Id("mixRowsGeneric").Params(jen.List(jen.Id("x"), jen.Id("pe"), jen.Id("table")).Index().Float32(), jen.Id("idx").Index().Int32(), jen.Id("alpha").Float32()).Block(
			jen.Id("a").Op(":=").Float64().Call(jen.Id("alpha")),
			jen.Id("b").Op(":=").Lit(1).Op("-").Id("a"),
			jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("idx")).Block(
				xt, row("sr", "pe"), row("lr", "table"),
				jen.For(jen.Id("i").Op(":=").Range().Id("xt")).Block(
					jen.Id("xt").Index(jen.Id("i")).Op("=").Float32().Call(
						jen.Float64().Call(jen.Id("xt").Index(jen.Id("i"))).
							Op("+").Id("a").Op("*").Float64().Call(jen.Id("sr").Index(jen.Id("i"))).
							Op("+").Id("b").Op("*").Float64().Call(jen.Id("lr").Index(jen.Id("i"))),
					),
				),
			),
		)
		return gocode.Render(s.Name+"_generic.go", f)
	}
	if memberOf(s).wide() {
		// var genericKernels = kernels{addRows64: addRows64Generic}
		f.Comment("genericKernels is the portable Go implementation, always available.")
		f.Var().Id("genericKernels").Op("=").Id("kernels").Values(jen.Dict{jen.Id("addRows64"): jen.Id("addRows64Generic")})
		// func addRows64Generic(x []float32, table []float64, idx []int32) {
		//	for t, p := range idx {
		//		xt := (*[DModel]float32)(x[t*DModel:])
		//		row := (*[DModel]float64)(table[int(p)*DModel:])
		//		for i, v := range row { xt[i] = float32(float64(xt[i]) + v) }
		//	}
		// }
		f.Comment("addRows64Generic adds float64 table row idx[t] to token t of x, rounding each sum")
		f.Comment("once to float32; the fixed-size array views give the inner loop a constant trip count.")
		f.Func().Id("addRows64Generic").Params(jen.Id("x").Index().Float32(), jen.Id("table").Index().Float64(), jen.Id("idx").Index().Int32()).Block(
			jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("idx")).Block(
				xt,
				jen.Id("row").Op(":=").Parens(jen.Op("*").Index(jen.Id("DModel")).Float64()).Call(jen.Id("table").Index(jen.Int().Call(jen.Id("p")).Op("*").Id("DModel").Op(":"))),
				jen.For(jen.List(jen.Id("i"), jen.Id("v")).Op(":=").Range().Id("row")).Block(
					jen.Id("xt").Index(jen.Id("i")).Op("=").Float32().Call(jen.Float64().Call(jen.Id("xt").Index(jen.Id("i"))).Op("+").Id("v")),
				),
			),
		)
		return gocode.Render(s.Name+"_generic.go", f)
	}
	// var genericKernels = kernels{addRows: addRowsGeneric}
	f.Comment("genericKernels is the portable Go implementation, always available.")
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(jen.Dict{jen.Id("addRows"): jen.Id("addRowsGeneric")})
	// func addRowsGeneric(x, table []float32, idx []int32) {
	//	for t, p := range idx {
	//		xt := (*[DModel]float32)(x[t*DModel:])
	//		row := (*[DModel]float32)(table[int(p)*DModel:])
	//		for i, v := range row { xt[i] += v }
	//	}
	// }
	f.Comment("addRowsGeneric adds table row idx[t] to token t of x (rows of DModel floats); the")
	f.Comment("fixed-size array views give the inner loop a constant trip count and no bounds checks.")
	f.Func().Id("addRowsGeneric").Params(jen.List(jen.Id("x"), jen.Id("table")).Index().Float32(), jen.Id("idx").Index().Int32()).Block(
		jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("idx")).Block(
			xt, row("row", "table"),
			jen.For(jen.List(jen.Id("i"), jen.Id("v")).Op(":=").Range().Id("row")).Block(
				jen.Id("xt").Index(jen.Id("i")).Op("+=").Id("v"),
			),
		),
	)
	return gocode.Render(s.Name+"_generic.go", f)
}

// absTest emits <name>_test.go.
func absTest(c *Consts) (emit.File, error) {
	s := c.Spec
	f := gocode.TestFile(c.Spec)
	field := map[member]string{learned: "LearnedAdd", mixture: "MixtureAdd"}[memberOf(s)]
	kern := jen.Dict{jen.Id("Add"): jen.Id("Add"), jen.Id("Encode"): jen.Id("Encode")}
	if field != "" {
		kern = jen.Dict{jen.Id(field): jen.Id("Add")}
	}
	gocode.VariantsTest(f, c.Spec, memberOf(c.Spec).backends().Assembly, jen.Qual(gocode.VerifyPath, "RunAbsolute").Call(jen.Id("s"), jen.Qual(gocode.VerifyPath, "AbsoluteKernels").Values(kern)))

	// const benchTokens = 4096
	f.Comment("benchTokens is the number of tokens per benchmark call.")
	f.Const().Id("benchTokens").Op("=").Lit(4096)
	gocode.BenchRandom(f)

	// Positions cycle through the table (or the learned table's rows).
	rows := "MaxLen"
	if absHasFormula(s) && memberOf(s) != mixture {
		rows = "TableRows"
	}
	args := []jen.Code{jen.Id("x")}
	var setup []jen.Code
	if !absHasFormula(s) || memberOf(s) == mixture {
		setup = append(setup, jen.Id("table").Op(":=").Id("benchRandom").Call(jen.Id("MaxLen").Op("*").Id("DModel"), jen.Lit(2)))
		args = append(args, jen.Id("table"))
	}
	args = append(args, jen.Id("pos"))
	if memberOf(s) == mixture {
		args = append(args, jen.Lit(0.5))
	}
	// func BenchmarkAdd(b *testing.B) {
	//	x := benchRandom(benchTokens*DModel, 1)
	//	pos := make([]int32, benchTokens)
	//	for t := range pos { pos[t] = int32(t % rows) }
	//	[table := benchRandom(MaxLen*DModel, 2)]
	//	for _, name := range Variants() {
	//		b.Run(name, func(b *testing.B) {
	//			if !VariantAvailable(name) { b.Skipf(...) }
	//			defer UseVariant(name)()
	//			b.SetBytes(int64(4 * len(x)))
	//			for b.Loop() { Add(x, [table,] pos[, 0.5]) }
	//		})
	//	}
	// }
	f.Comment("BenchmarkAdd times Add of every variant on benchTokens tokens with positions that")
	f.Comment("cycle through the table.")
	f.Func().Id("BenchmarkAdd").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(append(append([]jen.Code{
		jen.Id("x").Op(":=").Id("benchRandom").Call(jen.Id("benchTokens").Op("*").Id("DModel"), jen.Lit(1)),
		jen.Id("pos").Op(":=").Make(jen.Index().Int32(), jen.Id("benchTokens")),
		jen.For(jen.Id("t").Op(":=").Range().Id("pos")).Block(
			jen.Id("pos").Index(jen.Id("t")).Op("=").Int32().Call(jen.Id("t").Op("%").Id(rows)),
		),
	}, setup...),
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("Variants").Call()).Block(
			jen.Id("b").Dot("Run").Call(jen.Id("name"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
				jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
					jen.Id("b").Dot("Skipf").Call(jen.Lit("variant %s is not available on this CPU"), jen.Id("name")),
				),
				jen.Defer().Id("UseVariant").Call(jen.Id("name")).Call(),
				jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("x")))),
				jen.For(jen.Id("b").Dot("Loop").Call()).Block(jen.Id("Add").Call(args...)),
			)),
		),
	)...)
	gocode.BenchCopy(f, jen.Id("benchTokens").Op("*").Id("DModel"))
	return gocode.Render(s.Name+"_test.go", f)
}
