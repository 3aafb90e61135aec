package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

// ropeTables emits fillRow, the lazily built table(s) and the exact-path
// scratch.
func ropeTables(f *jen.File, c *Consts) {
	s := c.Spec
	scaling := ropeScaling(s)
	scaled := func(v jen.Code) *jen.Statement {
		// float32(a * v): a is AttentionFactor for Apply's rows, 1 for Shift's.
		return jen.Float32().Call(jen.Id("a").Op("*").Add(v))
	}

	// func fillRow(row *[rowLen]float32, p float64, w *[nFreq]float64, a float64) {
	//	for i, wi := range w {
	//		s, c := math.Sincos(p * wi)
	//		half:        row[i], row[nFreq+i] = float32(A*c), float32(A*s)
	//		interleaved: row[2*i], row[2*i+1] = A·c twice; row[RotaryDim+2*i], row[RotaryDim+2*i+1] = A·s twice
	//	}
	// }
	var store []jen.Code
	if s.Layout == spec.LayoutHalf {
		store = []jen.Code{
			jen.Id("row").Index(jen.Id("i")).Op("=").Add(scaled(jen.Id("c"))),
			jen.Id("row").Index(jen.Id("nFreq").Op("+").Id("i")).Op("=").Add(scaled(jen.Id("s"))),
		}
	} else {
		store = []jen.Code{
			jen.List(jen.Id("cf"), jen.Id("sf")).Op(":=").List(scaled(jen.Id("c")), scaled(jen.Id("s"))),
			jen.List(jen.Id("row").Index(jen.Lit(2).Op("*").Id("i")), jen.Id("row").Index(jen.Lit(2).Op("*").Id("i").Op("+").Lit(1))).Op("=").List(jen.Id("cf"), jen.Id("cf")),
			jen.List(jen.Id("row").Index(jen.Id("RotaryDim").Op("+").Lit(2).Op("*").Id("i")), jen.Id("row").Index(jen.Id("RotaryDim").Op("+").Lit(2).Op("*").Id("i").Op("+").Lit(1))).Op("=").List(jen.Id("sf"), jen.Id("sf")),
		}
	}
	f.Comment("fillRow computes the table row of position p from the frequencies w: the angle")
	f.Comment("p·ω_i in float64 (math.Sincos reduces large arguments accurately), scaled by a")
	f.Comment("(AttentionFactor for Apply, 1 for Shift's pure rotation), rounded once to float32.")
	f.Func().Id("fillRow").Params(
		jen.Id("row").Op("*").Index(jen.Id("rowLen")).Float32(),
		jen.Id("p").Float64(),
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
		jen.Id("a").Float64(),
	).Block(
		jen.For(jen.List(jen.Id("i"), jen.Id("wi")).Op(":=").Range().Id("w")).Block(
			append([]jen.Code{
				jen.List(jen.Id("s"), jen.Id("c")).Op(":=").Qual("math", "Sincos").Call(jen.Id("p").Op("*").Id("wi")),
			}, store...)...,
		),
	)

	// func buildTable(w *[nFreq]float64) []float32 {
	//	t := make([]float32, MaxPosition*rowLen)
	//	for p := 0; p < MaxPosition; p++ { fillRow((*[rowLen]float32)(t[p*rowLen:]), float64(p), w) }
	//	return t
	// }
	f.Comment("buildTable computes the rows of positions [0, MaxPosition) from the frequencies w.")
	f.Func().Id("buildTable").Params(jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64()).Index().Float32().Block(
		jen.Id("t").Op(":=").Make(jen.Index().Float32(), jen.Id("MaxPosition").Op("*").Id("rowLen")),
		jen.For(jen.Id("p").Op(":=").Lit(0), jen.Id("p").Op("<").Id("MaxPosition"), jen.Id("p").Op("++")).Block(
			jen.Id("fillRow").Call(ropeRowPtr(jen.Id("t"), jen.Id("p")), jen.Float64().Call(jen.Id("p")), jen.Id("w"), jen.Id("AttentionFactor")),
		),
		jen.Return(jen.Id("t")),
	)

	// var (tableOnce sync.Once; table []float32)
	// func getTable() []float32 { tableOnce.Do(func() { table = buildTable(&freqs) }); return table }
	tableFunc := func(getter, once, tab, fr, what string) {
		f.Var().Defs(
			jen.Id(once).Qual("sync", "Once"),
			jen.Id(tab).Index().Float32(),
		)
		f.Comment(getter + " returns the " + what + " table of positions [0, MaxPosition), building it on first use.")
		f.Func().Id(getter).Params().Index().Float32().Block(
			jen.Id(once).Dot("Do").Call(jen.Func().Params().Block(
				jen.Id(tab).Op("=").Id("buildTable").Call(jen.Op("&").Id(fr)),
			)),
			jen.Return(jen.Id(tab)),
		)
	}
	f.Comment("table holds the rows of freqs, built once by getTable.")
	tableFunc("getTable", "tableOnce", "table", "freqs", "cos/sin")
	if scaling == spec.ScaleLongRoPE {
		f.Comment("longTable holds the rows of longFreqs, built once by getLongTable.")
		tableFunc("getLongTable", "longTableOnce", "longTable", "longFreqs", "long-factor cos/sin")
	}

	// var exactScratch = sync.Pool{New: func() any { return new([exactChunk * rowLen]float32) }}
	f.Comment("exactScratch holds the rows of up to exactChunk tokens on the exact path.")
	f.Var().Id("exactScratch").Op("=").Qual("sync", "Pool").Values(jen.Dict{
		jen.Id("New"): jen.Func().Params().Any().Block(
			jen.Return(jen.New(jen.Index(jen.Id("exactChunk").Op("*").Id("rowLen")).Float32())),
		),
	})

	// var chunkIdx = func() (a [exactChunk]int32) { for i := range a { a[i] = int32(i) }; return a }()
	f.Comment("chunkIdx is 0, 1, …, exactChunk−1: the scratch rows of a chunk, in token order.")
	f.Var().Id("chunkIdx").Op("=").Func().Params().Params(jen.Id("a").Index(jen.Id("exactChunk")).Int32()).Block(
		jen.For(jen.Id("i").Op(":=").Range().Id("a")).Block(
			jen.Id("a").Index(jen.Id("i")).Op("=").Int32().Call(jen.Id("i")),
		),
		jen.Return(jen.Id("a")),
	).Call()

	// [dynamic only]
	// func rotateExact(q, k operand, pos []int32, fs *freqSet, w *[nFreq]float64, c int, sign float32) {
	//	if fs != nil { fs.rotateChunk(q, k, pos, c, sign); return }
	//	rows := exactScratch.Get().(*[exactChunk * rowLen]float32)
	//	for t, p := range pos { fillRow(row t, float64(p), w, AttentionFactor) }
	//	rotateRun(q, k, rows[:len(pos)*rowLen], chunkIdx[:len(pos)], sign)
	//	exactScratch.Put(rows)
	// }
	if scaling == spec.ScaleDynamic {
		f.Comment("rotateExact rotates up to exactChunk tokens outside the table, the call's c-th such")
		f.Comment("chunk: with the cached or computed rows of fs (rotateChunk), or, when fs is nil")
		f.Comment("(frequencies rescaled for this call only), with rows from math.Sincos of the")
		f.Comment("frequencies w (fillRow), rounded once to float32 as the table's rows are.")
		f.Func().Id("rotateExact").Params(
			jen.List(jen.Id("q"), jen.Id("k")).Id("operand"),
			jen.Id("pos").Index().Int32(), jen.Id("fs").Op("*").Id("freqSet"),
			jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(), jen.Id("c").Int(), jen.Id("sign").Float32(),
		).Block(
			jen.If(jen.Id("fs").Op("!=").Nil()).Block(
				jen.Id("fs").Dot("rotateChunk").Call(jen.Id("q"), jen.Id("k"), jen.Id("pos"), jen.Id("c"), jen.Id("sign")),
				jen.Return(),
			),
			jen.Id("rows").Op(":=").Id("exactScratch").Dot("Get").Call().Assert(jen.Op("*").Index(jen.Id("exactChunk").Op("*").Id("rowLen")).Float32()),
			jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
				jen.Id("fillRow").Call(ropeRowPtr(jen.Id("rows"), jen.Id("t")), jen.Float64().Call(jen.Id("p")), jen.Id("w"), jen.Id("AttentionFactor")),
			),
			jen.Id("rotateRun").Call(
				jen.Id("q"), jen.Id("k"),
				jen.Id("rows").Index(jen.Empty(), jen.Len(jen.Id("pos")).Op("*").Id("rowLen")),
				jen.Id("chunkIdx").Index(jen.Empty(), jen.Len(jen.Id("pos"))),
				jen.Id("sign"),
			),
			jen.Id("exactScratch").Dot("Put").Call(jen.Id("rows")),
		)
	}
	ropeExact(f, c)
}

// ropeRowPtr is (*[rowLen]float32)(buf[i*rowLen:]).
func ropeRowPtr(buf, i jen.Code) jen.Code {
	return jen.Parens(jen.Op("*").Index(jen.Id("rowLen")).Float32()).Call(
		jen.Add(buf).Index(jen.Add(i).Op("*").Id("rowLen"), jen.Empty()),
	)
}
