package absolute

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/gocode"
)

// absFormulaAdd emits Add and Encode of sinusoidal, algebraic and binary.
// A wide member (algebraic) has a float64 table, encodeRow64 for its rows
// and the addRows64 kernel; the others a float32 table and addRows.
func absFormulaAdd(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	wide := memberOf(c.Spec).wide()
	elt, addK, enc := jen.Float32(), "addRows", "encodeRow"
	if wide {
		elt, addK, enc = jen.Float64(), "addRows64", "encodeRow64"
	}
	f.Comment("chunk is the number of tokens handed to the kernel at a time.")
	f.Const().Id("chunk").Op("=").Lit(absChunk)

	// func Add(x []float32, pos []int32) {
	//	check
	//	k := active
	//	tab := posTable()
	//	for t0 := 0; t0 < len(pos); t0 += chunk {
	//		t1 := min(t0+chunk, len(pos))
	//		ps, xs := pos[t0:t1], x[t0*DModel:t1*DModel]
	//		if inTable(ps) { k.addRows(xs, tab, ps) } else { addExact(k, xs, tab, ps) }
	//	}
	// }
	f.Comment("Add adds PE(pos[t]) to token t of x, [len(pos)][DModel], in place. Every int32 position")
	f.Comment("is valid: those in [0, TableRows) are read from the table, the others computed exactly.")
	if wide {
		f.Comment("The sum is formed in float64 from float64 PE values and rounded once to float32, so")
		f.Comment("it stays within the bound when x ≈ −PE cancels (a float32 PE would lose half an ulp).")
	}
	f.Comment("It panics, before writing anything, if len(x) is not len(pos)·DModel.")
	f.Func().Id("Add").Params(jen.Id("x").Index().Float32(), jen.Id("pos").Index().Int32()).Block(
		absCheckX(pkg),
		jen.If(jen.Len(jen.Id("pos")).Op("==").Lit(0)).Block(jen.Return()),
		jen.Id("k").Op(":=").Id("active"),
		jen.Id("tab").Op(":=").Id("posTable").Call(),
		jen.For(jen.Id("t0").Op(":=").Lit(0), jen.Id("t0").Op("<").Len(jen.Id("pos")), jen.Id("t0").Op("+=").Id("chunk")).Block(
			jen.Id("t1").Op(":=").Min(jen.Id("t0").Op("+").Id("chunk"), jen.Len(jen.Id("pos"))),
			jen.List(jen.Id("ps"), jen.Id("xs")).Op(":=").List(
				jen.Id("pos").Index(jen.Id("t0"), jen.Id("t1")),
				jen.Id("x").Index(jen.Id("t0").Op("*").Id("DModel"), jen.Id("t1").Op("*").Id("DModel")),
			),
			jen.If(jen.Id("inTable").Call(jen.Id("ps"))).Block(
				jen.Id("k").Dot(addK).Call(jen.Id("xs"), jen.Id("tab"), jen.Id("ps")),
			).Else().Block(
				jen.Id("addExact").Call(jen.Id("k"), jen.Id("xs"), jen.Id("tab"), jen.Id("ps")),
			),
		),
	)

	// func inTable(pos []int32) bool {
	//	for _, p := range pos { if p < 0 || p >= TableRows { return false } }
	//	return true
	// }
	f.Comment("inTable reports whether every position lies in [0, TableRows).")
	f.Func().Id("inTable").Params(jen.Id("pos").Index().Int32()).Bool().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
			jen.If(jen.Id("p").Op("<").Lit(0).Op("||").Int().Call(jen.Id("p")).Op(">=").Id("TableRows")).Block(jen.Return(jen.False())),
		),
		jen.Return(jen.True()),
	)

	// func addExact(k kernels, x, tab []float32, pos []int32) {
	//	rows := make([]float32 (wide: float64), len(pos)*DModel)
	//	idx := make([]int32, len(pos))
	//	for t, p := range pos {
	//		row := rows[t*DModel : (t+1)*DModel]
	//		if p >= 0 && int(p) < TableRows { copy(row, tab[int(p)*DModel:]) } else { encodeRow[64](row, int(p)) }
	//		idx[t] = int32(t)
	//	}
	//	k.addRows[64](x, rows, idx)
	// }
	f.Comment("addExact adds a chunk with positions outside the table: each token's row is copied")
	f.Comment("from the table or computed exactly into a scratch table that the kernel reads by token.")
	f.Func().Id("addExact").Params(jen.Id("k").Id("kernels"), jen.Id("x").Index().Float32(), jen.Id("tab").Index().Add(elt), jen.Id("pos").Index().Int32()).Block(
		jen.Id("rows").Op(":=").Make(jen.Index().Add(elt), jen.Len(jen.Id("pos")).Op("*").Id("DModel")),
		jen.Id("idx").Op(":=").Make(jen.Index().Int32(), jen.Len(jen.Id("pos"))),
		jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
			jen.Id("row").Op(":=").Id("rows").Index(jen.Id("t").Op("*").Id("DModel"), jen.Parens(jen.Id("t").Op("+").Lit(1)).Op("*").Id("DModel")),
			jen.If(jen.Id("p").Op(">=").Lit(0).Op("&&").Int().Call(jen.Id("p")).Op("<").Id("TableRows")).Block(
				jen.Copy(jen.Id("row"), jen.Id("tab").Index(jen.Int().Call(jen.Id("p")).Op("*").Id("DModel").Op(":"))),
			).Else().Block(
				jen.Id(enc).Call(jen.Id("row"), jen.Int().Call(jen.Id("p"))),
			),
			jen.Id("idx").Index(jen.Id("t")).Op("=").Int32().Call(jen.Id("t")),
		),
		jen.Id("k").Dot(addK).Call(jen.Id("x"), jen.Id("rows"), jen.Id("idx")),
	)

	// func Encode(dst []float32, pos int) {
	//	if len(dst) != DModel { panic(...) }
	//	encodeRow(dst, pos)
	// }
	if wide {
		f.Comment("Encode writes PE(pos) to dst, DModel floats, computed exactly for any position (the")
		f.Comment("values Add reads from its float64 table, rounded to float32). It panics if len(dst)")
		f.Comment("is not DModel.")
	} else {
		f.Comment("Encode writes PE(pos) to dst, DModel floats, computed exactly for any position (the")
		f.Comment("same values Add reads from its table). It panics if len(dst) is not DModel.")
	}
	f.Func().Id("Encode").Params(jen.Id("dst").Index().Float32(), jen.Id("pos").Int()).Block(
		jen.If(jen.Len(jen.Id("dst")).Op("!=").Id("DModel")).Block(
			gocode.Panicf(pkg, "Encode: len(dst) = %d, want DModel = %d", jen.Len(jen.Id("dst")), jen.Id("DModel")),
		),
		jen.Id("encodeRow").Call(jen.Id("dst"), jen.Id("pos")),
	)
}

// absTableAdd emits Add of learned and mixture packages.
func absTableAdd(f *jen.File, c *Consts) {
	s := c.Spec
	pkg := s.Name
	mixture := memberOf(s) == mixture
	params := []jen.Code{jen.List(jen.Id("x"), jen.Id("table")).Index().Float32(), jen.Id("pos").Index().Int32()}
	// active.addRows(x, table, pos) or the mixture's sinusoidal-table / exact-row split.
	var call []jen.Code
	if mixture {
		params = append(params, jen.Id("alpha").Float32())
		// if MaxLen <= TableRows { active.mixRows(x, posTable(), table, pos, alpha); return }
		// pe := make([]float32, len(pos)*DModel); idx := make([]int32, len(pos)); rows := ...
		call = []jen.Code{
			jen.If(jen.Len(jen.Id("pos")).Op("==").Lit(0)).Block(jen.Return()),
			jen.If(jen.Id("MaxLen").Op("<=").Id("TableRows")).Block(
				jen.Id("active").Dot("mixRows").Call(jen.Id("x"), jen.Id("posTable").Call(), jen.Id("table"), jen.Id("pos"), jen.Id("alpha")),
				jen.Return(),
			),
			jen.Comment("The sinusoidal table is capped below MaxLen: gather both rows of every token."),
			jen.Id("pe").Op(":=").Make(jen.Index().Float32(), jen.Len(jen.Id("x"))),
			jen.Id("rows").Op(":=").Make(jen.Index().Float32(), jen.Len(jen.Id("x"))),
			jen.Id("idx").Op(":=").Make(jen.Index().Int32(), jen.Len(jen.Id("pos"))),
			jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
				jen.Id("encodeRow").Call(jen.Id("pe").Index(jen.Id("t").Op("*").Id("DModel").Op(":")), jen.Int().Call(jen.Id("p"))),
				jen.Copy(jen.Id("rows").Index(jen.Id("t").Op("*").Id("DModel"), jen.Parens(jen.Id("t").Op("+").Lit(1)).Op("*").Id("DModel")),
					jen.Id("table").Index(jen.Int().Call(jen.Id("p")).Op("*").Id("DModel").Op(":"))),
				jen.Id("idx").Index(jen.Id("t")).Op("=").Int32().Call(jen.Id("t")),
			),
			jen.Id("active").Dot("mixRows").Call(jen.Id("x"), jen.Id("pe"), jen.Id("rows"), jen.Id("idx"), jen.Id("alpha")),
		}
		f.Comment("Add adds α·PE_sin(pos[t]) + (1−α)·table[pos[t]] to token t of x, [len(pos)][DModel],")
		f.Comment("in place, computed in float64 and rounded once; table is [MaxLen][DModel].")
	} else {
		call = []jen.Code{jen.Id("active").Dot("addRows").Call(jen.Id("x"), jen.Id("table"), jen.Id("pos"))}
		f.Comment("Add adds table[pos[t]] to token t of x, [len(pos)][DModel], in place; table is")
		f.Comment("[MaxLen][DModel].")
	}
	f.Comment("It panics, before writing anything, on a length that does not match or a position")
	f.Comment("outside [0, MaxLen) (naming the token).")
	// func Add(x, table []float32, pos []int32[, alpha float32]) {
	//	check x; check table
	//	for t, p := range pos { if p < 0 || int(p) >= MaxLen { panic(...) } }
	//	...
	// }
	f.Func().Id("Add").Params(params...).Block(append([]jen.Code{
		absCheckX(pkg),
		jen.If(jen.Len(jen.Id("table")).Op("!=").Id("MaxLen").Op("*").Id("DModel")).Block(
			gocode.Panicf(pkg, "Add: len(table) = %d, want MaxLen·DModel = %d·%d", jen.Len(jen.Id("table")), jen.Id("MaxLen"), jen.Id("DModel")),
		),
		jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
			jen.If(jen.Id("p").Op("<").Lit(0).Op("||").Int().Call(jen.Id("p")).Op(">=").Id("MaxLen")).Block(
				gocode.Panicf(pkg, "Add: pos[%d] = %d is outside the table's rows [0, MaxLen) = [0, %d)", jen.Id("t"), jen.Id("p"), jen.Id("MaxLen")),
			),
		),
	}, call...)...)
}
