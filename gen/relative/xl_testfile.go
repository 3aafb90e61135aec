package relative

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
)

// xlTest emits <name>_test.go for xl packages: TestVariants through
// verify.RunXL, benchmarks of Scores against the naive loop that forms
// q_i+u and q_i+v for every (i, j), and of Relative.
func xlTest(c *Consts) (emit.File, error) {
	s := c.Spec
	f := gocode.TestFile(c.Spec)
	run := jen.Qual(gocode.VerifyPath, "RunXL").Call(jid("s"), jen.Qual(gocode.VerifyPath, "XLKernels").Values(jen.Dict{
		jid("Scores"):   jid("Scores"),
		jid("Relative"): jid("Relative"),
	}))
	gocode.VariantsTest(f, s, Backends.Assembly, jen.Qual(gocode.VerifyPath, "Merge").Call(run, attention.Run(f, xlTerm())))
	gocode.BenchRandom(f)

	f.Comment("benchL is the query and key count of the benchmarks (one head).")
	f.Const().Id("benchL").Op("=").Lit(1024)

	// func naiveScores(dst, q, k, r, u, v []float32, lq, lk int)
	at := func(s string, row jen.Code) *jen.Statement {
		return jid(s).Index(jen.Add(row).Op("*").Id("HeadDim").Op("+").Id("x"))
	}
	f.Comment("naiveScores is Dai et al.'s A^rel as written, (q_i+u)·k_j + (q_i+v)·r_{i−j} summed")
	f.Comment("element by element for every (i, j): O(lq·lk·HeadDim) with q_i+u and q_i+v re-formed")
	f.Comment("for every key.")
	f.Func().Id("naiveScores").Params(jen.List(jid("dst"), jid("q"), jid("k"), jid("r"), jid("u"), jid("v")).Index().Float32(), jen.List(jid("lq"), jid("lk")).Int()).Block(
		jen.For(jid("i").Op(":=").Range().Id("lq")).Block(
			jen.For(jid("j").Op(":=").Range().Id("lk")).Block(
				jid("m").Op(":=").Id("lq").Op("-").Lit(1).Op("-").Id("i").Op("+").Id("j"),
				jen.Var().Id("sum").Float32(),
				jen.For(jid("x").Op(":=").Range().Id("HeadDim")).Block(
					jid("sum").Op("+=").Parens(at("q", jid("i")).Op("+").Id("u").Index(jid("x"))).Op("*").Add(at("k", jid("j"))).Op("+").
						Parens(at("q", jid("i")).Op("+").Id("v").Index(jid("x"))).Op("*").Add(at("r", jid("m"))),
				),
				jid("dst").Index(jid("i").Op("*").Id("lk").Op("+").Id("j")).Op("=").Id("sum"),
			),
		),
	)

	inputs := []jen.Code{
		jid("q").Op(":=").Id("benchRandom").Call(jid("benchL").Op("*").Id("HeadDim"), jlit(1)),
		jid("k").Op(":=").Id("benchRandom").Call(jid("benchL").Op("*").Id("HeadDim"), jlit(2)),
		jid("r").Op(":=").Id("benchRandom").Call(jid("RelRows").Call(jid("benchL"), jid("benchL")).Op("*").Id("HeadDim"), jlit(3)),
		jen.List(jid("u"), jid("v")).Op(":=").List(jid("benchRandom").Call(jid("HeadDim"), jlit(4)), jid("benchRandom").Call(jid("HeadDim"), jlit(5))),
		jid("dst").Op(":=").Make(jen.Index().Float32(), jid("benchL").Op("*").Id("benchL")),
	}
	args := []jen.Code{jid("dst"), jid("q"), jid("k"), jid("r"), jid("u"), jid("v"), jid("benchL"), jid("benchL")}
	relBench(f, "BenchmarkScores", "BenchmarkScores times Scores of every variant on one head with benchL queries and keys.",
		append(inputs, relBenchVariants(jid("Scores").Call(append(args, jid("benchL").Op("-").Lit(1))...)))...)
	relBench(f, "BenchmarkNaiveScores", "BenchmarkNaiveScores times naiveScores on the same call: the baseline of BenchmarkScores.",
		append(inputs, jen.For(jid("b").Dot("Loop").Call()).Block(jid("naiveScores").Call(args...)))...)
	relBench(f, "BenchmarkRelative", "BenchmarkRelative times Relative for 2·benchL−1 distances (float64 sin and cos).",
		jid("dst").Op(":=").Make(jen.Index().Float32(), jen.Parens(jlit(2).Op("*").Id("benchL").Op("-").Lit(1)).Op("*").Id("HeadDim")),
		jen.For(jid("b").Dot("Loop").Call()).Block(jid("Relative").Call(jid("dst"), jlit(2).Op("*").Id("benchL").Op("-").Lit(1))),
	)

	small := []jen.Code{jlit(13), jlit(29)}
	relAgreeTest(f, []jen.Code{
		jid("q").Op(":=").Id("benchRandom").Call(jlit(13).Op("*").Id("HeadDim"), jlit(1)),
		jid("k").Op(":=").Id("benchRandom").Call(jlit(29).Op("*").Id("HeadDim"), jlit(2)),
		jid("r").Op(":=").Id("benchRandom").Call(jid("RelRows").Call(jlit(13), jlit(29)).Op("*").Id("HeadDim"), jlit(3)),
		jen.List(jid("u"), jid("v")).Op(":=").List(jid("benchRandom").Call(jid("HeadDim"), jlit(4)), jid("benchRandom").Call(jid("HeadDim"), jlit(5))),
		jen.List(jid("want"), jid("got")).Op(":=").List(jen.Make(jen.Index().Float32(), jlit(13*29)), jen.Make(jen.Index().Float32(), jlit(13*29))),
	},
		jid("Scores").Call(append(append([]jen.Code{jid("want"), jid("q"), jid("k"), jid("r"), jid("u"), jid("v")}, small...), jlit(3))...),
		jid("naiveScores").Call(append([]jen.Code{jid("got"), jid("q"), jid("k"), jid("r"), jid("u"), jid("v")}, small...)...),
	)
	xlRelRowsTest(f)
	return gocode.Render(s.Name+"_test.go", f)
}

// xlRelRowsTest emits TestRelRowsRange: RelRows counts rows up to the
// largest r that fits an int and panics, naming RelRows, beyond it
// (RelRows(MaxInt, MaxInt) once overflowed to a negative count).
func xlRelRowsTest(f *jen.File) {
	f.Comment("TestRelRowsRange checks RelRows at the edge of int: the largest r that fits is")
	f.Comment("counted, one row more panics naming RelRows instead of overflowing.")
	f.Func().Id("TestRelRowsRange").Params(jid("t").Op("*").Qual("testing", "T")).Block(
		jid("maxRows").Op(":=").Qual("math", "MaxInt").Op("/").Id("HeadDim"),
		jen.If(jid("got").Op(":=").Id("RelRows").Call(jid("maxRows"), jlit(1)), jid("got").Op("!=").Id("maxRows")).Block(
			jid("t").Dot("Fatalf").Call(jlit("RelRows(%d, 1) = %d, want %d"), jid("maxRows"), jid("got"), jid("maxRows")),
		),
		jen.If(jid("got").Op(":=").Id("RelRows").Call(jlit(1), jid("maxRows")), jid("got").Op("!=").Id("maxRows")).Block(
			jid("t").Dot("Fatalf").Call(jlit("RelRows(1, %d) = %d, want %d"), jid("maxRows"), jid("got"), jid("maxRows")),
		),
		jen.For(jen.List(jid("_"), jid("c")).Op(":=").Range().Index().Index(jlit(2)).Int().Values(
			jen.Values(jid("maxRows").Op("+").Lit(1), jlit(1)),
			jen.Values(jlit(1), jid("maxRows").Op("+").Lit(1)),
			jen.Values(jid("maxRows"), jid("maxRows")),
			jen.Values(jen.Qual("math", "MaxInt"), jen.Qual("math", "MaxInt")),
		)).Block(
			jen.Func().Params().Block(
				jen.Defer().Func().Params().Block(
					jid("r").Op(":=").Recover(),
					jen.List(jid("msg"), jid("_")).Op(":=").Id("r").Assert(jen.String()),
					jen.If(jen.Op("!").Qual("strings", "Contains").Call(jid("msg"), jlit("RelRows"))).Block(
						jid("t").Dot("Errorf").Call(jlit("RelRows(%d, %d): recovered %v, want a panic naming RelRows"), jid("c").Index(jlit(0)), jid("c").Index(jlit(1)), jid("r")),
					),
				).Call(),
				jid("n").Op(":=").Id("RelRows").Call(jid("c").Index(jlit(0)), jid("c").Index(jlit(1))),
				jid("t").Dot("Errorf").Call(jlit("RelRows(%d, %d) = %d, want a panic"), jid("c").Index(jlit(0)), jid("c").Index(jlit(1)), jid("n")),
			).Call(),
		),
	)
}
