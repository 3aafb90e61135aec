package bias

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
)

// biasTest emits <name>_test.go for alibi and rpe_bias packages.
func biasTest(c *Consts) (emit.File, error) {
	s := c.Spec
	rpe := isRPE(s)
	f := gocode.TestFile(c.Spec)

	// verify.RunBias(s, verify.BiasKernels{AddBias: AddBias, ...})
	kern := jen.Dict{
		jen.Id("AddBias"): jen.Id("AddBias"),
		jen.Id("Softmax"): jen.Id("Softmax"),
		jen.Id("Bias"):    jen.Id("Bias"),

		jen.Id("SoftmaxPos"): jen.Id("SoftmaxPos"),
		jen.Id("AddBiasPos"): jen.Id("AddBiasPos"),
		jen.Id("BiasPos"):    jen.Id("BiasPos"),
	}
	if rpe {
		kern = jen.Dict{
			jen.Id("RPEAddBias"): jen.Id("AddBias"),
			jen.Id("RPESoftmax"): jen.Id("Softmax"),
			jen.Id("RPEBias"):    jen.Id("Bias"),
			jen.Id("Bucket"):     jen.Id("Bucket"),

			jen.Id("RPESoftmaxPos"): jen.Id("SoftmaxPos"),
			jen.Id("RPEAddBiasPos"): jen.Id("AddBiasPos"),
			jen.Id("RPEBiasPos"):    jen.Id("BiasPos"),
		}
	}
	gocode.VariantsTest(f, c.Spec, Backends.Assembly, jen.Qual(gocode.VerifyPath, "RunBias").Call(jen.Id("s"), jen.Qual(gocode.VerifyPath, "BiasKernels").Values(kern)))

	// const benchLQ, benchLK = 512, 512
	f.Comment("benchLQ and benchLK are the benchmark's query and key counts (Heads heads each).")
	f.Const().Defs(
		jen.Id("benchLQ").Op("=").Lit(512),
		jen.Id("benchLK").Op("=").Lit(512),
		jen.Id("benchScale").Op("=").Lit(0.125),
	)
	gocode.BenchRandom(f)
	var tableArg []jen.Code
	var tableDecl jen.Code = jen.Null()
	if rpe {
		tableArg = []jen.Code{jen.Id("table")}
		tableDecl = jen.Id("table").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("Buckets"), jen.Lit(2))
	}
	args := func(buf string, extra ...jen.Code) []jen.Code {
		a := append([]jen.Code{jen.Id(buf)}, tableArg...)
		a = append(a, jen.Id("benchLQ"), jen.Id("benchLK"), jen.Lit(0))
		return append(a, extra...)
	}

	// func BenchmarkSoftmax(b *testing.B) {
	//	scores := gocode.BenchRandom(Heads*benchLQ*benchLK, 1)
	//	[table := gocode.BenchRandom(Heads*Buckets, 2)]
	//	for _, name := range Variants() {
	//		b.Run(name, func(b *testing.B) {
	//			if !VariantAvailable(name) { b.Skipf(...) }
	//			defer UseVariant(name)()
	//			b.SetBytes(int64(4 * len(scores)))
	//			for b.Loop() { Softmax(scores, [table,] benchLQ, benchLK, 0, benchScale) }
	//		})
	//	}
	// }
	f.Comment("BenchmarkSoftmax times the fused Softmax of every variant on Heads×512×512 scores, in")
	f.Comment("place (each iteration's input is the previous output, a valid probability row).")
	f.Func().Id("BenchmarkSoftmax").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Id("scores").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("benchLQ").Op("*").Id("benchLK"), jen.Lit(1)),
		tableDecl,
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("Variants").Call()).Block(
			jen.Id("b").Dot("Run").Call(jen.Id("name"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
				jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
					jen.Id("b").Dot("Skipf").Call(jen.Lit("variant %s is not available on this CPU"), jen.Id("name")),
				),
				jen.Defer().Id("UseVariant").Call(jen.Id("name")).Call(),
				jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("scores")))),
				jen.For(jen.Id("b").Dot("Loop").Call()).Block(
					jen.Id("Softmax").Call(args("scores", jen.Id("benchScale"))...),
				),
			)),
		),
	)

	// func BenchmarkPlainSoftmax(b *testing.B) {
	//	scores := gocode.BenchRandom(Heads*benchLQ*benchLK, 1)
	//	bias := make([]float32, len(scores))
	//	AddBias(bias, [table,] benchLQ, benchLK, 0)
	//	b.SetBytes(int64(4 * len(scores)))
	//	for b.Loop() { plainSoftmax(scores, bias, benchScale) }
	// }
	f.Comment("BenchmarkPlainSoftmax is the baseline BenchmarkSoftmax is judged by: the plain Go loop")
	f.Comment("plainSoftmax over a materialized bias (−Inf on masked keys).")
	f.Func().Id("BenchmarkPlainSoftmax").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Id("scores").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("benchLQ").Op("*").Id("benchLK"), jen.Lit(1)),
		tableDecl,
		jen.Id("bias").Op(":=").Make(jen.Index().Float32(), jen.Len(jen.Id("scores"))),
		jen.Id("AddBias").Call(args("bias")...),
		jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("scores")))),
		jen.For(jen.Id("b").Dot("Loop").Call()).Block(
			jen.Id("plainSoftmax").Call(jen.Id("scores"), jen.Id("bias"), jen.Id("benchScale")),
		),
	)

	// func plainSoftmax(scores, bias []float32, scale float32) {
	//	for off := 0; off < len(scores); off += benchLK {
	//		row, br := scores[off:off+benchLK], bias[off:off+benchLK]
	//		mx := float32(math.Inf(-1))
	//		for j := range row { row[j] = scale*row[j] + br[j]; mx = max(mx, row[j]) }
	//		var sum float32
	//		for j := range row { row[j] = float32(math.Exp(float64(row[j] - mx))); sum += row[j] }
	//		for j := range row { row[j] /= sum }
	//	}
	// }
	rj := func() *jen.Statement { return jen.Id("row").Index(jen.Id("j")) }
	f.Comment("plainSoftmax is softmax(scale·s + bias) row by row as one would write it in plain Go.")
	f.Func().Id("plainSoftmax").Params(jen.List(jen.Id("scores"), jen.Id("bias")).Index().Float32(), jen.Id("scale").Float32()).Block(
		jen.For(jen.Id("off").Op(":=").Lit(0), jen.Id("off").Op("<").Len(jen.Id("scores")), jen.Id("off").Op("+=").Id("benchLK")).Block(
			jen.List(jen.Id("row"), jen.Id("br")).Op(":=").List(
				jen.Id("scores").Index(jen.Id("off"), jen.Id("off").Op("+").Id("benchLK")),
				jen.Id("bias").Index(jen.Id("off"), jen.Id("off").Op("+").Id("benchLK")),
			),
			jen.Id("mx").Op(":=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))),
			jen.For(jen.Id("j").Op(":=").Range().Id("row")).Block(
				rj().Op("=").Id("scale").Op("*").Add(rj()).Op("+").Id("br").Index(jen.Id("j")),
				jen.Id("mx").Op("=").Max(jen.Id("mx"), rj()),
			),
			jen.Var().Id("sum").Float32(),
			jen.For(jen.Id("j").Op(":=").Range().Id("row")).Block(
				rj().Op("=").Float32().Call(jen.Qual("math", "Exp").Call(jen.Float64().Call(rj().Op("-").Id("mx")))),
				jen.Id("sum").Op("+=").Add(rj()),
			),
			jen.For(jen.Id("j").Op(":=").Range().Id("row")).Block(
				rj().Op("/=").Id("sum"),
			),
		),
	)
	benchDecode(f, rpe)
	gocode.BenchCopy(f, jen.Id("Heads").Op("*").Id("benchLQ").Op("*").Id("benchLK"))
	return gocode.Render(s.Name+"_test.go", f)
}

// benchDecode emits BenchmarkSoftmaxDecode: the decode shape, one query row
// at position lk−1 against lk ∈ {512, 4096, 32768} keys, all heads; rows
// BenchmarkSoftmaxDecode/<variant>/lk<N> with the bytes of the scores.
func benchDecode(f *jen.File, rpe bool) {
	var tableArg []jen.Code
	var tableDecl jen.Code = jen.Null()
	if rpe {
		tableArg = []jen.Code{jen.Id("table")}
		tableDecl = jen.Id("table").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("Buckets"), jen.Lit(2))
	}
	// func BenchmarkSoftmaxDecode(b *testing.B) {
	//	[table := benchRandom(Heads*Buckets, 2)]
	//	for _, lk := range []int{512, 4096, 32768} {
	//		scores := benchRandom(Heads*lk, 3)
	//		for _, name := range Variants() {
	//			b.Run(fmt.Sprintf("%s/lk%d", name, lk), func(b *testing.B) {
	//				if !VariantAvailable(name) { b.Skipf(...) }
	//				defer UseVariant(name)()
	//				b.SetBytes(int64(4 * len(scores)))
	//				for b.Loop() { Softmax(scores, [table,] 1, lk, lk-1, benchScale) }
	//			})
	//		}
	//	}
	// }
	call := append([]jen.Code{jen.Id("scores")}, tableArg...)
	call = append(call, jen.Lit(1), jen.Id("lk"), jen.Id("lk").Op("-").Lit(1), jen.Id("benchScale"))
	f.Comment("BenchmarkSoftmaxDecode times Softmax in the decode shape: one query row at position lk−1")
	f.Comment("against lk keys, every head, for lk = 512, 4096 and 32768 (in place, as BenchmarkSoftmax).")
	f.Func().Id("BenchmarkSoftmaxDecode").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		tableDecl,
		jen.For(jen.List(jen.Id("_"), jen.Id("lk")).Op(":=").Range().Index().Int().Values(jen.Lit(512), jen.Lit(4096), jen.Lit(32768))).Block(
			jen.Id("scores").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("lk"), jen.Lit(3)),
			jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("Variants").Call()).Block(
				jen.Id("b").Dot("Run").Call(jen.Qual("fmt", "Sprintf").Call(jen.Lit("%s/lk%d"), jen.Id("name"), jen.Id("lk")), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
					jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
						jen.Id("b").Dot("Skipf").Call(jen.Lit("variant %s is not available on this CPU"), jen.Id("name")),
					),
					jen.Defer().Id("UseVariant").Call(jen.Id("name")).Call(),
					jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("scores")))),
					jen.For(jen.Id("b").Dot("Loop").Call()).Block(
						jen.Id("Softmax").Call(call...),
					),
				)),
			),
		),
	)
}
