package rope

import (
	"github.com/dave/jennifer/jen"
)

// The engine-form benchmarks of the generated rope test (issue 14):
// decode and prefill ApplyQK with grouped-query heads at a position inside
// and one outside the table, and each engine form. Every benchmark
// Benchmark<Form> has the sub-benchmarks <variant>/<size> and copy/<size>,
// a copy() of as many bytes as the form reads and writes back, which
// posenc bench divides by (cmd/posenc/bench.go, parseBench).

// Bench geometry: a 7B-class model with grouped-query attention (Llama 2 70B,
// Llama 3 8B: 32 query heads sharing 8 key/value heads).
const (
	ropeBenchQHeads  = 32
	ropeBenchKVHeads = 8
)

// ropeBenchBeyond is the position the beyond-table benchmarks start at:
// 2^20 + 1000, or MaxPosition + 1000 for a table that reaches 2^20.
func ropeBenchBeyond(c *Consts) int {
	return max(1<<20, c.TableRows) + 1000
}

// ropeFormBenchmarks emits benchForm, benchData, inPlace and the
// benchmarks BenchmarkApplyQK, BenchmarkApplyQKStrided,
// BenchmarkApplyHeadMajor, BenchmarkApplyTo, BenchmarkApplyToSlots and
// BenchmarkShift. posIn is a position with a table row and no run-time
// frequency switch, and so are posIn+advance−1 and the positions between.
func ropeFormBenchmarks(f *jen.File, c *Consts, posIn, advance int) {
	tb := jen.Op("*").Qual("testing", "B")
	itoa := func(v jen.Code) *jen.Statement { return jen.Qual("strconv", "Itoa").Call(v) }

	f.Comment("Engine-form geometry: benchQHeads query heads and benchKVHeads key heads per")
	f.Comment("token; benchPosIn has a table row, benchPosBeyond has not (its rows are computed);")
	f.Comment("the advancing decode benchmarks cycle through benchAdvance positions from there.")
	f.Const().Defs(
		id("benchAdvance").Op("=").Lit(advance),
		id("benchQHeads").Op("=").Lit(ropeBenchQHeads),
		id("benchKVHeads").Op("=").Lit(ropeBenchKVHeads),
		id("benchPosIn").Op("=").Lit(posIn),
		id("benchPosBeyond").Op("=").Lit(ropeBenchBeyond(c)),
	)

	// func benchForm(b *testing.B, size string, bytes int64, call func()) {
	//	b.Run("copy/"+size, func(b *testing.B) { src, dst := make(...), make(...); copy(dst, src); b.SetBytes(bytes); b.ResetTimer(); for b.Loop() { copy(dst, src) } })
	//	for _, v := range Variants() {
	//		b.Run(v+"/"+size, func(b *testing.B) {
	//			if !VariantAvailable(v) { b.Skip(...) }
	//			defer UseVariant(v)()
	//			call() // tables built outside the timed loop
	//			b.SetBytes(bytes); b.ResetTimer()
	//			for b.Loop() { call() }
	//		})
	//	}
	// }
	f.Comment("benchForm runs call as the sub-benchmark <variant>/<size> of every available variant,")
	f.Comment("after copy/<size>: a copy() of bytes bytes, the bytes call reads and writes back.")
	f.Func().Id("benchForm").Params(id("b").Add(tb), id("size").String(), id("bytes").Int64(), id("call").Func().Params()).Block(
		id("b").Dot("Run").Call(jen.Lit("copy/").Op("+").Id("size"), jen.Func().Params(id("b").Add(tb)).Block(
			ids("src", "dst").Op(":=").List(
				jen.Make(jen.Index().Byte(), id("bytes")),
				jen.Make(jen.Index().Byte(), id("bytes")),
			),
			// Written, so the copy reads real pages rather than the shared zero page.
			jen.For(id("i").Op(":=").Range().Id("src")).Block(id("src").Index(id("i")).Op("=").Byte().Call(id("i"))),
			jen.Copy(id("dst"), id("src")).Comment("fault the pages in outside the timed loop"),
			id("b").Dot("SetBytes").Call(id("bytes")),
			id("b").Dot("ResetTimer").Call(),
			jen.For(id("b").Dot("Loop").Call()).Block(jen.Copy(id("dst"), id("src"))),
		)),
		jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("Variants").Call()).Block(
			id("b").Dot("Run").Call(id("v").Op("+").Lit("/").Op("+").Id("size"), jen.Func().Params(id("b").Add(tb)).Block(
				jen.If(jen.Op("!").Id("VariantAvailable").Call(id("v"))).Block(
					id("b").Dot("Skip").Call(jen.Lit("variant ").Op("+").Id("v").Op("+").Lit(" is compiled in but this CPU cannot run it")),
				),
				jen.Defer().Id("UseVariant").Call(id("v")).Call(),
				id("call").Call().Comment("builds the tables outside the timed loop"),
				id("b").Dot("SetBytes").Call(id("bytes")),
				id("b").Dot("ResetTimer").Call(),
				jen.For(id("b").Dot("Loop").Call()).Block(id("call").Call()),
			)),
		),
	)

	// func benchData(n, tokens int, p0 int32) (x []elem, pos []int32)
	f.Comment("benchData returns n values in [−0.5, 0.5) and the positions p0, p0+1, … of tokens tokens.")
	f.Func().Id("benchData").Params(ids("n", "tokens").Int(), id("p0").Int32()).Params(id("x").Add(c.tensor()), id("pos").Index().Int32()).Block(
		id("x").Op("=").Make(c.tensor(), id("n")),
		jen.For(id("i").Op(":=").Range().Id("x")).Block(
			id("x").Index(id("i")).Op("=").Add(benchValue(c)),
		),
		id("pos").Op("=").Make(jen.Index().Int32(), id("tokens")),
		jen.For(id("t").Op(":=").Range().Id("pos")).Block(
			id("pos").Index(id("t")).Op("=").Id("p0").Op("+").Int32().Call(id("t")),
		),
		jen.Return(),
	)

	// func inPlace(call func(), xs ...[]elem) func()
	f.Comment("inPlace wraps a call that rotates xs in place: with AttentionFactor ≠ 1 each call")
	f.Comment("scales them, so every 64 calls they are restored, keeping the values normal.")
	f.Func().Id("inPlace").Params(id("call").Func().Params(), id("xs").Op("...").Add(c.tensor())).Func().Params().Block(
		id("orig").Op(":=").Make(jen.Index().Add(c.tensor()), jen.Len(id("xs"))),
		jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Id("xs")).Block(
			id("orig").Index(id("i")).Op("=").Qual("slices", "Clone").Call(id("x")),
		),
		id("n").Op(":=").Lit(0),
		jen.Return(jen.Func().Params().Block(
			id("call").Call(),
			jen.If(id("n").Op("++"), id("AttentionFactor").Op("!=").Lit(1).Op("&&").Id("n").Op("%").Lit(64).Op("==").Lit(0)).Block(
				jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Id("xs")).Block(
					jen.Copy(id("x"), id("orig").Index(id("i"))),
				),
			),
		)),
	)

	size := func(tokens, pos jen.Code) *jen.Statement {
		return itoa(tokens).Op("+").Lit("tok,p=").Op("+").Add(itoa(jen.Int().Call(pos)))
	}
	rotated := func(tokens jen.Code, heads jen.Code, dims string) *jen.Statement {
		return jen.Int64().Call(jen.Add(tokens).Op("*").Parens(heads).Op("*").Id(dims).Op("*").Lit(c.elemBytes()))
	}

	// func BenchmarkApplyQK(b *testing.B) {
	//	for _, p := range []int32{benchPosIn, benchPosBeyond} {
	//		for _, n := range []int{1, 16, 64} {
	//			q, pos := benchData(n*benchQHeads*HeadDim, n, p)
	//			k, _ := benchData(n*benchKVHeads*HeadDim, n, p)
	//			benchForm(b, size, int64(n*(benchQHeads+benchKVHeads)*RotaryDim*4), inPlace(func() { ApplyQK(q, k, pos, benchQHeads, benchKVHeads) }, q, k))
	//		}
	//	}
	// }
	f.Comment("BenchmarkApplyQK measures ApplyQK with grouped-query heads on 1 token (decode), 16 and")
	f.Comment("64 tokens (prefill) at positions inside and outside the table; bytes are the rotated")
	f.Comment("dims of the query and key heads. 1tok,p=P repeats one position (every layer of a")
	f.Comment("decode step after the first); 1tok,p=P+i moves to the next position every call,")
	f.Comment("cycling through benchAdvance of them (the first layer of each step).")
	f.Func().Id("BenchmarkApplyQK").Params(id("b").Add(tb)).Block(
		jen.For(jen.List(id("_"), id("p")).Op(":=").Range().Index().Int32().Values(id("benchPosIn"), id("benchPosBeyond"))).Block(
			ids("q", "pos").Op(":=").Id("benchData").Call(id("benchQHeads").Op("*").Id("HeadDim"), jen.Lit(1), id("p")),
			ids("k", "_").Op(":=").Id("benchData").Call(id("benchKVHeads").Op("*").Id("HeadDim"), jen.Lit(1), id("p")),
			id("i").Op(":=").Lit(0),
			id("benchForm").Call(id("b"), size(jen.Lit(1), id("p")).Op("+").Lit("+i"), rotated(jen.Lit(1), id("benchQHeads").Op("+").Id("benchKVHeads"), "RotaryDim"),
				id("inPlace").Call(jen.Func().Params().Block(
					id("pos").Index(jen.Lit(0)).Op("=").Id("p").Op("+").Int32().Call(id("i").Op("%").Id("benchAdvance")),
					id("i").Op("++"),
					id("ApplyQK").Call(id("q"), id("k"), id("pos"), id("benchQHeads"), id("benchKVHeads")),
				), id("q"), id("k"))),
		),
		jen.For(jen.List(id("_"), id("p")).Op(":=").Range().Index().Int32().Values(id("benchPosIn"), id("benchPosBeyond"))).Block(
			jen.For(jen.List(id("_"), id("n")).Op(":=").Range().Index().Int().Values(jen.Lit(1), jen.Lit(16), jen.Lit(64))).Block(
				ids("q", "pos").Op(":=").Id("benchData").Call(id("n").Op("*").Id("benchQHeads").Op("*").Id("HeadDim"), id("n"), id("p")),
				ids("k", "_").Op(":=").Id("benchData").Call(id("n").Op("*").Id("benchKVHeads").Op("*").Id("HeadDim"), id("n"), id("p")),
				id("benchForm").Call(id("b"), size(id("n"), id("p")), rotated(id("n"), id("benchQHeads").Op("+").Id("benchKVHeads"), "RotaryDim"),
					id("inPlace").Call(jen.Func().Params().Block(
						id("ApplyQK").Call(id("q"), id("k"), id("pos"), id("benchQHeads"), id("benchKVHeads")),
					), id("q"), id("k"))),
			),
		),
	)

	// tokens loop shared by the forms: for _, n := range []int{1, 16} { ... }
	forms := func(name string, doc []string, body func(n *jen.Statement) []jen.Code) {
		for _, l := range doc {
			f.Comment(l)
		}
		f.Func().Id(name).Params(id("b").Add(tb)).Block(
			jen.For(jen.List(id("_"), id("n")).Op(":=").Range().Index().Int().Values(jen.Lit(1), jen.Lit(16))).Block(body(id("n"))...),
		)
	}

	// BenchmarkApplyQKStrided: packed QKV rows of (benchQHeads+2·benchKVHeads) heads, q and k rotated in place.
	forms("BenchmarkApplyQKStrided", []string{
		"BenchmarkApplyQKStrided measures ApplyQKStrided on packed QKV rows (benchQHeads query,",
		"benchKVHeads key and benchKVHeads value heads per token) at benchPosIn; bytes are the",
		"rotated dims of the query and key heads, as BenchmarkApplyQK's of the same size.",
	}, func(n *jen.Statement) []jen.Code {
		return []jen.Code{
			id("stride").Op(":=").Parens(id("benchQHeads").Op("+").Lit(2).Op("*").Id("benchKVHeads")).Op("*").Id("HeadDim"),
			ids("qkv", "pos").Op(":=").Id("benchData").Call(id("n").Op("*").Id("stride"), id("n"), id("benchPosIn")),
			id("benchForm").Call(id("b"), size(id("n"), id("benchPosIn")), rotated(id("n"), id("benchQHeads").Op("+").Id("benchKVHeads"), "RotaryDim"),
				id("inPlace").Call(jen.Func().Params().Block(
					id("ApplyQKStrided").Call(id("qkv"), id("pos"), id("benchQHeads"), id("benchKVHeads"), id("stride")),
				), id("qkv"))),
		}
	})

	forms("BenchmarkApplyHeadMajor", []string{
		"BenchmarkApplyHeadMajor measures ApplyHeadMajor on [benchQHeads][tokens][HeadDim] at",
		"benchPosIn; bytes are the rotated dims.",
	}, func(n *jen.Statement) []jen.Code {
		return []jen.Code{
			ids("x", "pos").Op(":=").Id("benchData").Call(id("n").Op("*").Id("benchQHeads").Op("*").Id("HeadDim"), id("n"), id("benchPosIn")),
			id("benchForm").Call(id("b"), size(id("n"), id("benchPosIn")), rotated(id("n"), id("benchQHeads"), "RotaryDim"),
				id("inPlace").Call(jen.Func().Params().Block(
					id("ApplyHeadMajor").Call(id("x"), id("pos"), id("benchQHeads")),
				), id("x"))),
		}
	})

	forms("BenchmarkApplyTo", []string{
		"BenchmarkApplyTo measures ApplyTo from src to a separate dst at benchPosIn; bytes are",
		"every dim of src read and of dst written (the dims past RotaryDim are copied).",
	}, func(n *jen.Statement) []jen.Code {
		return []jen.Code{
			ids("src", "pos").Op(":=").Id("benchData").Call(id("n").Op("*").Id("benchQHeads").Op("*").Id("HeadDim"), id("n"), id("benchPosIn")),
			id("dst").Op(":=").Make(c.tensor(), jen.Len(id("src"))),
			id("benchForm").Call(id("b"), size(id("n"), id("benchPosIn")), rotated(id("n"), id("benchQHeads"), "HeadDim"),
				jen.Func().Params().Block(id("ApplyTo").Call(id("dst"), id("src"), id("pos"), id("benchQHeads")))),
		}
	})

	forms("BenchmarkApplyToSlots", []string{
		"BenchmarkApplyToSlots measures ApplyToSlots into a paged cache of 8-slot pages filled in",
		"reverse page order (runs of 8 consecutive slots) at benchPosIn; bytes as BenchmarkApplyTo.",
	}, func(n *jen.Statement) []jen.Code {
		return []jen.Code{
			ids("src", "pos").Op(":=").Id("benchData").Call(id("n").Op("*").Id("benchQHeads").Op("*").Id("HeadDim"), id("n"), id("benchPosIn")),
			id("pages").Op(":=").Parens(id("n").Op("+").Lit(7)).Op("/").Lit(8),
			id("cache").Op(":=").Make(c.tensor(), id("pages").Op("*").Lit(8).Op("*").Id("benchQHeads").Op("*").Id("HeadDim")),
			id("slots").Op(":=").Make(jen.Index().Int32(), id("n")),
			jen.For(id("t").Op(":=").Range().Id("slots")).Block(
				id("slots").Index(id("t")).Op("=").Int32().Call(jen.Parens(id("pages").Op("-").Lit(1).Op("-").Id("t").Op("/").Lit(8)).Op("*").Lit(8).Op("+").Id("t").Op("%").Lit(8)),
			),
			id("benchForm").Call(id("b"), size(id("n"), id("benchPosIn")), rotated(id("n"), id("benchQHeads"), "HeadDim"),
				jen.Func().Params().Block(id("ApplyToSlots").Call(id("cache"), id("slots"), id("src"), id("pos"), id("benchQHeads")))),
		}
	})

	forms("BenchmarkShift", []string{
		"BenchmarkShift measures Shift by 7 positions (frequencies of a benchPosIn+1 sequence);",
		"bytes are the rotated dims.",
	}, func(n *jen.Statement) []jen.Code {
		return []jen.Code{
			ids("x", "_").Op(":=").Id("benchData").Call(id("n").Op("*").Id("benchQHeads").Op("*").Id("HeadDim"), id("n"), id("benchPosIn")),
			id("benchForm").Call(id("b"), size(id("n"), id("benchPosIn")), rotated(id("n"), id("benchQHeads"), "RotaryDim"),
				jen.Func().Params().Block(id("Shift").Call(id("x"), jen.Lit(7), id("benchQHeads"), id("benchPosIn").Op("+").Lit(1)))),
		}
	})
}

// benchValue is element i of benchData: float32(i%1000)/1000 − 0.5 in
// [−0.5, 0.5), or for 16-bit storage the encoding of a value of the same
// range (bfloat16: the float32's upper half; binary16: exponent fields
// 12 to 14, magnitudes in [0.125, 1), sign from the lowest bit of i).
func benchValue(c *Consts) *jen.Statement {
	v := jen.Float32().Call(id("i").Op("%").Lit(1000)).Op("/").Lit(1000).Op("-").Lit(0.5)
	switch c.Spec.DType {
	case "bf16":
		return jen.Uint16().Call(jen.Qual("math", "Float32bits").Call(v).Op(">>").Lit(16))
	case "f16":
		return jen.Uint16().Call(jen.Lit(0x3000).Op("+").Id("i").Op("%").Lit(0x0c00)).Op("|").Uint16().Call(id("i").Op("&").Lit(1)).Op("<<").Lit(15)
	}
	return v
}
