package relative

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
)

// relBenchVariants renders a benchmark body running call for every available
// variant: for _, name := range Variants() { b.Run(name, …) }.
func relBenchVariants(call jen.Code) jen.Code {
	return jen.For(jen.List(jid("_"), jid("name")).Op(":=").Range().Id("Variants").Call()).Block(
		jid("b").Dot("Run").Call(jid("name"), jen.Func().Params(jid("b").Op("*").Qual("testing", "B")).Block(
			jen.If(jen.Op("!").Id("VariantAvailable").Call(jid("name"))).Block(
				jid("b").Dot("Skipf").Call(jlit("variant %s is not available on this CPU"), jid("name")),
			),
			jen.Defer().Id("UseVariant").Call(jid("name")).Call(),
			jen.For(jid("b").Dot("Loop").Call()).Block(call),
		)),
	)
}

// relBench emits a benchmark function with the given doc, setup and body.
func relBench(f *jen.File, name, doc string, body ...jen.Code) {
	f.Comment(doc)
	f.Func().Id(name).Params(jid("b").Op("*").Qual("testing", "B")).Block(body...)
}

// relAgreeTest emits TestNaiveAgrees: the naive baseline the benchmarks
// compare with computes the same values as the exported function (within
// 1e-3 of the magnitude of the row), so the quoted speedups compare like
// with like. fast and naive are calls writing want and got.
func relAgreeTest(f *jen.File, setup []jen.Code, fast, naive jen.Code) {
	f.Comment("TestNaiveAgrees checks the naive baseline of the benchmarks against the exported")
	f.Comment("function on a small odd-sized call, so the benchmark ratios compare equal work.")
	body := append(setup,
		fast, naive,
		jen.For(jen.List(jid("x"), jid("w")).Op(":=").Range().Id("want")).Block(
			jen.If(jen.Qual("math", "Abs").Call(jen.Float64().Call(jid("got").Index(jid("x")).Op("-").Id("w"))).Op(">").Lit(1e-3).Op("*").Parens(jlit(1).Op("+").Qual("math", "Abs").Call(jen.Float64().Call(jid("w"))))).Block(
				jid("t").Dot("Fatalf").Call(jlit("naive[%d] = %v, exported %v"), jid("x"), jid("got").Index(jid("x")), jid("w")),
			),
		),
	)
	f.Func().Id("TestNaiveAgrees").Params(jid("t").Op("*").Qual("testing", "T")).Block(body...)
}

// rpeFullTest emits <name>_test.go for rpe_full packages: TestVariants
// through verify.RunRPEFull, and benchmarks of Scores and Output against the
// naive O(lq·lk·HeadDim) loops that add the relative embedding to every
// key and value.
func rpeFullTest(c *Consts) (emit.File, error) {
	s := c.Spec
	f := gocode.TestFile(c.Spec)
	run := jen.Qual(gocode.VerifyPath, "RunRPEFull").Call(jid("s"), jen.Qual(gocode.VerifyPath, "RPEFullKernels").Values(jen.Dict{
		jid("Scores"): jid("Scores"),
		jid("Output"): jid("Output"),
	}))
	gocode.VariantsTest(f, s, Backends.Assembly, jen.Qual(gocode.VerifyPath, "Merge").Call(run, attention.Run(f, rpeFullTerm())))
	gocode.BenchRandom(f)

	f.Comment("benchL is the query and key count of the benchmarks (one head).")
	f.Const().Id("benchL").Op("=").Lit(1024)

	// func naiveScores(dst, q, k, aK []float32, lq, lk, qOffset int)
	qi := func(x jen.Code) *jen.Statement {
		return jid("q").Index(jid("i").Op("*").Id("HeadDim").Op("+").Add(x))
	}
	f.Comment("naiveScores is Shaw et al.'s eq. 4 as written: e_ij = q_i·(k_j + aK[b])/√HeadDim with")
	f.Comment("the relative key k_j + aK[b] formed for every (i, j): O(lq·lk·HeadDim).")
	f.Func().Id("naiveScores").Params(jen.List(jid("dst"), jid("q"), jid("k"), jid("aK")).Index().Float32(), jen.List(jid("lq"), jid("lk"), jid("qOffset")).Int()).Block(
		jid("scale").Op(":=").Float32().Call(jlit(1).Op("/").Qual("math", "Sqrt").Call(jid("HeadDim"))),
		jen.For(jid("i").Op(":=").Range().Id("lq")).Block(
			jen.For(jid("j").Op(":=").Range().Id("lk")).Block(
				jid("a").Op(":=").Id("aK").Index(jid("Bucket").Call(jid("qOffset").Op("+").Id("i").Op("-").Id("j")).Op("*").Id("HeadDim").Op(":")),
				jid("kj").Op(":=").Id("k").Index(jid("j").Op("*").Id("HeadDim").Op(":")),
				jen.Var().Id("sum").Float32(),
				jen.For(jid("x").Op(":=").Range().Id("HeadDim")).Block(
					jid("sum").Op("+=").Add(qi(jid("x"))).Op("*").Parens(jid("kj").Index(jid("x")).Op("+").Id("a").Index(jid("x"))),
				),
				jid("dst").Index(jid("i").Op("*").Id("lk").Op("+").Id("j")).Op("=").Id("sum").Op("*").Id("scale"),
			),
		),
	)
	// func naiveOutput(dst, weights, v, aV []float32, lq, lk, qOffset int)
	f.Comment("naiveOutput is Shaw et al.'s eq. 3 as written: o_i = Σ_j α_ij (v_j + aV[b]), the relative")
	f.Comment("value v_j + aV[b] formed for every (i, j): O(lq·lk·HeadDim).")
	f.Func().Id("naiveOutput").Params(jen.List(jid("dst"), jid("weights"), jid("v"), jid("aV")).Index().Float32(), jen.List(jid("lq"), jid("lk"), jid("qOffset")).Int()).Block(
		jen.For(jid("i").Op(":=").Range().Id("lq")).Block(
			jid("oi").Op(":=").Id("dst").Index(jid("i").Op("*").Id("HeadDim"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("HeadDim")),
			jen.Clear(jid("oi")),
			jen.For(jid("j").Op(":=").Range().Id("lk")).Block(
				jid("w").Op(":=").Id("weights").Index(jid("i").Op("*").Id("lk").Op("+").Id("j")),
				jid("a").Op(":=").Id("aV").Index(jid("Bucket").Call(jid("qOffset").Op("+").Id("i").Op("-").Id("j")).Op("*").Id("HeadDim").Op(":")),
				jid("vj").Op(":=").Id("v").Index(jid("j").Op("*").Id("HeadDim").Op(":")),
				jen.For(jid("x").Op(":=").Range().Id("oi")).Block(
					jid("oi").Index(jid("x")).Op("+=").Id("w").Op("*").Parens(jid("vj").Index(jid("x")).Op("+").Id("a").Index(jid("x"))),
				),
			),
		),
	)

	inputs := []jen.Code{
		jid("q").Op(":=").Id("benchRandom").Call(jid("benchL").Op("*").Id("HeadDim"), jlit(1)),
		jid("k").Op(":=").Id("benchRandom").Call(jid("benchL").Op("*").Id("HeadDim"), jlit(2)),
		jid("aK").Op(":=").Id("benchRandom").Call(jid("Buckets").Op("*").Id("HeadDim"), jlit(3)),
		jid("dst").Op(":=").Make(jen.Index().Float32(), jid("benchL").Op("*").Id("benchL")),
	}
	outInputs := []jen.Code{
		jid("w").Op(":=").Id("benchRandom").Call(jid("benchL").Op("*").Id("benchL"), jlit(4)),
		jid("v").Op(":=").Id("benchRandom").Call(jid("benchL").Op("*").Id("HeadDim"), jlit(5)),
		jid("aV").Op(":=").Id("benchRandom").Call(jid("Buckets").Op("*").Id("HeadDim"), jlit(6)),
		jid("dst").Op(":=").Make(jen.Index().Float32(), jid("benchL").Op("*").Id("HeadDim")),
	}
	lens := []jen.Code{jid("benchL"), jid("benchL"), jlit(0)}
	call := func(fn string, args ...string) jen.Code {
		var a []jen.Code
		for _, x := range args {
			a = append(a, jid(x))
		}
		return jid(fn).Call(append(a, lens...)...)
	}
	relBench(f, "BenchmarkScores", "BenchmarkScores times Scores of every variant on one head with benchL queries and keys.",
		append(inputs, relBenchVariants(call("Scores", "dst", "q", "k", "aK")))...)
	relBench(f, "BenchmarkNaiveScores", "BenchmarkNaiveScores times naiveScores on the same call: the O(L²·HeadDim) baseline of BenchmarkScores.",
		append(inputs, jen.For(jid("b").Dot("Loop").Call()).Block(call("naiveScores", "dst", "q", "k", "aK")))...)
	relBench(f, "BenchmarkOutput", "BenchmarkOutput times Output of every variant on one head with benchL queries and keys.",
		append(outInputs, relBenchVariants(call("Output", "dst", "w", "v", "aV")))...)
	relBench(f, "BenchmarkNaiveOutput", "BenchmarkNaiveOutput times naiveOutput on the same call: the O(L²·HeadDim) baseline of BenchmarkOutput.",
		append(outInputs, jen.For(jid("b").Dot("Loop").Call()).Block(call("naiveOutput", "dst", "w", "v", "aV")))...)

	// TestNaiveAgrees on lq = 13, lk = 29, qOffset = 5.
	small := []jen.Code{jlit(13), jlit(29), jlit(5)}
	relAgreeTest(f, []jen.Code{
		jid("q").Op(":=").Id("benchRandom").Call(jlit(13).Op("*").Id("HeadDim"), jlit(1)),
		jid("k").Op(":=").Id("benchRandom").Call(jlit(29).Op("*").Id("HeadDim"), jlit(2)),
		jid("aK").Op(":=").Id("benchRandom").Call(jid("Buckets").Op("*").Id("HeadDim"), jlit(3)),
		jen.List(jid("want"), jid("got")).Op(":=").List(jen.Make(jen.Index().Float32(), jlit(13*29)), jen.Make(jen.Index().Float32(), jlit(13*29))),
	},
		jid("Scores").Call(append([]jen.Code{jid("want"), jid("q"), jid("k"), jid("aK")}, small...)...),
		jid("naiveScores").Call(append([]jen.Code{jid("got"), jid("q"), jid("k"), jid("aK")}, small...)...),
	)
	// Output agreement, reusing the same check shape.
	f.Comment("TestNaiveOutputAgrees is TestNaiveAgrees for Output and naiveOutput.")
	f.Func().Id("TestNaiveOutputAgrees").Params(jid("t").Op("*").Qual("testing", "T")).Block(
		jid("w").Op(":=").Id("benchRandom").Call(jlit(13*29), jlit(4)),
		jid("v").Op(":=").Id("benchRandom").Call(jlit(29).Op("*").Id("HeadDim"), jlit(5)),
		jid("aV").Op(":=").Id("benchRandom").Call(jid("Buckets").Op("*").Id("HeadDim"), jlit(6)),
		jen.List(jid("want"), jid("got")).Op(":=").List(jen.Make(jen.Index().Float32(), jlit(13).Op("*").Id("HeadDim")), jen.Make(jen.Index().Float32(), jlit(13).Op("*").Id("HeadDim"))),
		jid("Output").Call(append([]jen.Code{jid("want"), jid("w"), jid("v"), jid("aV")}, small...)...),
		jid("naiveOutput").Call(append([]jen.Code{jid("got"), jid("w"), jid("v"), jid("aV")}, small...)...),
		jen.For(jen.List(jid("x"), jid("y")).Op(":=").Range().Id("want")).Block(
			jen.If(jen.Qual("math", "Abs").Call(jen.Float64().Call(jid("got").Index(jid("x")).Op("-").Id("y"))).Op(">").Lit(1e-3).Op("*").Parens(jlit(1).Op("+").Qual("math", "Abs").Call(jen.Float64().Call(jid("y"))))).Block(
				jid("t").Dot("Fatalf").Call(jlit("naive[%d] = %v, exported %v"), jid("x"), jid("got").Index(jid("x")), jid("y")),
			),
		),
	)
	return gocode.Render(s.Name+"_test.go", f)
}
