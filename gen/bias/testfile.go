package bias

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
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
	var run jen.Code = jen.Qual(gocode.VerifyPath, "RunBias").Call(jen.Id("s"), jen.Qual(gocode.VerifyPath, "BiasKernels").Values(kern))
	if s.HeadDim > 0 {
		run = jen.Qual(gocode.VerifyPath, "Merge").Call(run, attention.Run(f, attentionTerm(c)))
	}
	gocode.VariantsTest(f, c.Spec, Backends.Assembly, run)
	if !rpe {
		rampAllocTest(f)
	}

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

	// func BenchmarkSoftmaxCopyRatio(b *testing.B) {
	//	scores := benchRandom(Heads*benchLQ*benchLK, 1); [table := ...]
	//	src, dst := benchRandom(len(scores), 4), make([]float32, len(scores))
	//	for _, name := range Variants() {
	//		b.Run(name, func(b *testing.B) {
	//			...skip, UseVariant...
	//			var tc, tk time.Duration
	//			for b.Loop() {
	//				copy(dst, src); t0 := time.Now(); copy(dst, src); tc += time.Since(t0)
	//				Softmax(scores, ...); t1 := time.Now(); Softmax(scores, ...); tk += time.Since(t1)
	//			}
	//			b.ReportMetric(float64(tc)/float64(tk), "x-copy")
	//		})
	//	}
	// }
	f.Comment("BenchmarkSoftmaxCopyRatio times BenchmarkSoftmax's call and a copy() of the same bytes")
	f.Comment("in every iteration and reports copy time ÷ Softmax time as x-copy: the kernel's")
	f.Comment("throughput as a fraction of copy()'s, both measured within milliseconds of each other")
	f.Comment("(separate benchmarks a second apart move by ±20% on a shared machine). Each is timed")
	f.Comment("on its second run, after itself: timed right after the other, one would pay for")
	f.Comment("writing back the other's dirty cache lines.")
	f.Func().Id("BenchmarkSoftmaxCopyRatio").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Id("scores").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("benchLQ").Op("*").Id("benchLK"), jen.Lit(1)),
		tableDecl,
		jen.List(jen.Id("src"), jen.Id("dst")).Op(":=").List(jen.Id("benchRandom").Call(jen.Len(jen.Id("scores")), jen.Lit(4)), jen.Make(jen.Index().Float32(), jen.Len(jen.Id("scores")))),
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("Variants").Call()).Block(
			jen.Id("b").Dot("Run").Call(jen.Id("name"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
				jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
					jen.Id("b").Dot("Skipf").Call(jen.Lit("variant %s is not available on this CPU"), jen.Id("name")),
				),
				jen.Defer().Id("UseVariant").Call(jen.Id("name")).Call(),
				jen.Var().List(jen.Id("tc"), jen.Id("tk")).Qual("time", "Duration"),
				jen.For(jen.Id("b").Dot("Loop").Call()).Block(
					jen.Copy(jen.Id("dst"), jen.Id("src")),
					jen.Id("t0").Op(":=").Qual("time", "Now").Call(),
					jen.Copy(jen.Id("dst"), jen.Id("src")),
					jen.Id("tc").Op("+=").Qual("time", "Since").Call(jen.Id("t0")),
					jen.Id("Softmax").Call(args("scores", jen.Id("benchScale"))...),
					jen.Id("t1").Op(":=").Qual("time", "Now").Call(),
					jen.Id("Softmax").Call(args("scores", jen.Id("benchScale"))...),
					jen.Id("tk").Op("+=").Qual("time", "Since").Call(jen.Id("t1")),
				),
				jen.Id("b").Dot("ReportMetric").Call(jen.Float64().Call(jen.Id("tc")).Op("/").Float64().Call(jen.Id("tk")), jen.Lit("x-copy")),
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
	benchPos(f, rpe)
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

// benchPos emits BenchmarkSoftmaxPos: SoftmaxPos in the decode shape (one
// query at position 4095, 4096 keys) for three key layouts: "run" (keys
// 0…4095, every head), "shard" (the same keys, heads [Heads/2, Heads) as a
// tensor-parallel rank) and "paged" (16-key pages in reversed order: the
// general path). Rows BenchmarkSoftmaxPos/<variant>/<layout>.
func benchPos(f *jen.File, rpe bool) {
	var tableArg []jen.Code
	var tableDecl jen.Code = jen.Null()
	if rpe {
		tableArg = []jen.Code{jen.Id("table")}
		tableDecl = jen.Id("table").Op(":=").Id("benchRandom").Call(jen.Id("Heads").Op("*").Id("Buckets"), jen.Lit(2))
	}
	// func BenchmarkSoftmaxPos(b *testing.B) {
	//	const lk = 4096
	//	[table := ...]
	//	run, paged := make([]int32, lk), make([]int32, lk)
	//	for j := range run { run[j] = int32(j); paged[j] = int32((lk/16-1-j/16)*16 + j%16) }
	//	qpos := []int32{lk - 1}
	//	layouts := []struct{ name string; kpos []int32; h0, nh int }{{"run", run, 0, Heads}, {"shard", run, Heads / 2, Heads - Heads/2}, {"paged", paged, 0, Heads}}
	//	for _, l := range layouts {
	//		scores := benchRandom(l.nh*lk, 4)
	//		for _, name := range Variants() {
	//			b.Run(name+"/"+l.name, func(b *testing.B) {
	//				if !VariantAvailable(name) { b.Skipf(...) }
	//				defer UseVariant(name)()
	//				b.SetBytes(int64(4 * len(scores)))
	//				for b.Loop() { SoftmaxPos(scores, [table,] qpos, l.kpos, l.h0, l.nh, benchScale) }
	//			})
	//		}
	//	}
	// }
	call := append([]jen.Code{jen.Id("scores")}, tableArg...)
	call = append(call, jen.Id("qpos"), jen.Id("l").Dot("kpos"), jen.Id("l").Dot("h0"), jen.Id("l").Dot("nh"), jen.Id("benchScale"))
	layout := func(name string, kpos string, h0, nh jen.Code) jen.Code {
		return jen.Values(jen.Lit(name), jen.Id(kpos), h0, nh)
	}
	f.Comment("BenchmarkSoftmaxPos times SoftmaxPos in the decode shape, one query at position 4095")
	f.Comment("against 4096 keys: keys 0…4095 for every head (run) and for heads [Heads/2, Heads) (shard,")
	f.Comment("a tensor-parallel rank), and 16-key pages in reversed order (paged: the general path).")
	f.Func().Id("BenchmarkSoftmaxPos").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Const().Id("lk").Op("=").Lit(4096),
		tableDecl,
		jen.List(jen.Id("run"), jen.Id("paged")).Op(":=").List(jen.Make(jen.Index().Int32(), jen.Id("lk")), jen.Make(jen.Index().Int32(), jen.Id("lk"))),
		jen.For(jen.Id("j").Op(":=").Range().Id("run")).Block(
			jen.Id("run").Index(jen.Id("j")).Op("=").Int32().Call(jen.Id("j")),
			jen.Id("paged").Index(jen.Id("j")).Op("=").Int32().Call(jen.Parens(jen.Id("lk").Op("/").Lit(16).Op("-").Lit(1).Op("-").Id("j").Op("/").Lit(16)).Op("*").Lit(16).Op("+").Id("j").Op("%").Lit(16)),
		),
		jen.Id("qpos").Op(":=").Index().Int32().Values(jen.Id("lk").Op("-").Lit(1)),
		jen.Id("layouts").Op(":=").Index().Struct(
			jen.Id("name").String(),
			jen.Id("kpos").Index().Int32(),
			jen.List(jen.Id("h0"), jen.Id("nh")).Int(),
		).Values(
			layout("run", "run", jen.Lit(0), jen.Id("Heads")),
			layout("shard", "run", jen.Id("Heads").Op("/").Lit(2), jen.Id("Heads").Op("-").Id("Heads").Op("/").Lit(2)),
			layout("paged", "paged", jen.Lit(0), jen.Id("Heads")),
		),
		jen.For(jen.List(jen.Id("_"), jen.Id("l")).Op(":=").Range().Id("layouts")).Block(
			jen.Id("scores").Op(":=").Id("benchRandom").Call(jen.Id("l").Dot("nh").Op("*").Id("lk"), jen.Lit(4)),
			jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("Variants").Call()).Block(
				jen.Id("b").Dot("Run").Call(jen.Id("name").Op("+").Lit("/").Op("+").Id("l").Dot("name"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
					jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
						jen.Id("b").Dot("Skipf").Call(jen.Lit("variant %s is not available on this CPU"), jen.Id("name")),
					),
					jen.Defer().Id("UseVariant").Call(jen.Id("name")).Call(),
					jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("scores")))),
					jen.For(jen.Id("b").Dot("Loop").Call()).Block(
						jen.Id("SoftmaxPos").Call(call...),
					),
				)),
			),
		),
	)
}

// rampAllocTest emits TestRampPathsAllocateNothing: the ALiBi decode calls and
// the position forms with keys in one run, served by addRampRows and
// softmaxRampRows without a bias table, allocate nothing per call (their
// per-row query position is a closure that must not escape).
func rampAllocTest(f *jen.File) {
	// func TestRampPathsAllocateNothing(t *testing.T) {
	//	const lk = 37
	//	scores := make([]float32, Heads*lk)
	//	qpos, kpos := []int32{lk - 1}, make([]int32, lk)
	//	for j := range kpos { kpos[j] = int32(j) }
	//	for _, c := range []struct{ name string; call func() }{
	//		{"AddBias", func() { AddBias(scores, 1, lk, lk-1) }}, ...
	//	} {
	//		if a := testing.AllocsPerRun(20, c.call); a != 0 { t.Errorf("%s allocates %v times per call", c.name, a) }
	//	}
	// }
	id := jen.Id
	call := func(name string, args ...jen.Code) jen.Code {
		return jen.Values(jen.Lit(name), jen.Func().Params().Block(id(name).Call(args...)))
	}
	dec := func(extra ...jen.Code) []jen.Code {
		return append([]jen.Code{id("scores"), jen.Lit(1), id("lk"), id("lk").Op("-").Lit(1)}, extra...)
	}
	pos := func(extra ...jen.Code) []jen.Code {
		return append([]jen.Code{id("scores"), id("qpos"), id("kpos"), jen.Lit(0), id("Heads")}, extra...)
	}
	f.Comment("TestRampPathsAllocateNothing checks that the decode calls and the position forms with")
	f.Comment("keys in one run (addRampRows, softmaxRampRows: no bias table) allocate nothing.")
	f.Func().Id("TestRampPathsAllocateNothing").Params(id("t").Op("*").Qual("testing", "T")).Block(
		jen.Const().Id("lk").Op("=").Lit(37),
		id("scores").Op(":=").Make(jen.Index().Float32(), id("Heads").Op("*").Id("lk")),
		jen.List(id("qpos"), id("kpos")).Op(":=").List(jen.Index().Int32().Values(id("lk").Op("-").Lit(1)), jen.Make(jen.Index().Int32(), id("lk"))),
		jen.For(id("j").Op(":=").Range().Id("kpos")).Block(id("kpos").Index(id("j")).Op("=").Int32().Call(id("j"))),
		jen.For(jen.List(id("_"), id("c")).Op(":=").Range().Index().Struct(
			id("name").String(),
			id("call").Func().Params(),
		).Values(
			call("AddBias", dec()...),
			call("Bias", dec()...),
			call("Softmax", dec(jen.Lit(1))...),
			call("AddBiasPos", pos()...),
			call("BiasPos", pos()...),
			call("SoftmaxPos", pos(jen.Lit(1))...),
		)).Block(
			jen.If(id("a").Op(":=").Qual("testing", "AllocsPerRun").Call(jen.Lit(20), id("c").Dot("call")), id("a").Op("!=").Lit(0)).Block(
				id("t").Dot("Errorf").Call(jen.Lit("%s allocates %v times per call"), id("c").Dot("name"), id("a")),
			),
		),
	)
}
