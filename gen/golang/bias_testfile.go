package golang

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

const (
	sharedSpecPath   = "github.com/posenc/posenc/spec"
	sharedVerifyPath = "github.com/posenc/posenc/verify"
)

// sharedTestFile starts <name>_test.go: the header, the spec it was generated
// from as constants, and loadSpec.
func sharedTestFile(c *consts.Set) *jen.File {
	s := c.Spec
	f := newFile(s.Name, s.File)
	f.ImportName(sharedSpecPath, "spec")
	f.ImportName(sharedVerifyPath, "verify")

	// const specFile = "..."; const specYAML = "..."
	f.Comment("specFile and specYAML are the spec this package was generated from.")
	f.Const().Defs(
		jen.Id("specFile").Op("=").Lit(s.File),
		jen.Id("specYAML").Op("=").Lit(s.Source),
	)

	// func loadSpec(tb testing.TB) *spec.Spec {
	//	s, err := spec.Parse(specFile, []byte(specYAML))
	//	if err != nil { tb.Fatal(err) }
	//	return s
	// }
	f.Comment("loadSpec parses specYAML, the input of the verifier's float64 reference.")
	f.Func().Id("loadSpec").Params(jen.Id("tb").Qual("testing", "TB")).Op("*").Qual(sharedSpecPath, "Spec").Block(
		jen.List(jen.Id("s"), jen.Id("err")).Op(":=").Qual(sharedSpecPath, "Parse").Call(jen.Id("specFile"), jen.Index().Byte().Call(jen.Id("specYAML"))),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Id("tb").Dot("Fatal").Call(jen.Id("err"))),
		jen.Return(jen.Id("s")),
	)
	return f
}

// sharedVariantsTest emits TestVariants: every compiled-in variant, skipped when
// the CPU lacks it, run through the harness call run (an expression of type
// *verify.Report using s) and reported with verify.Emit.
func sharedVariantsTest(f *jen.File, s *spec.Spec, run jen.Code) {
	// func TestVariants(t *testing.T) {
	//	s := loadSpec(t)
	//	for _, name := range Variants() {
	//		t.Run(name, func(t *testing.T) {
	//			if !VariantAvailable(name) { t.Skipf("variant %s is not available on this CPU", name) }
	//			defer UseVariant(name)()
	//			r := verify.RunX(s, ...)
	//			r.Target = name
	//			verify.Emit(t, r)
	//		})
	//	}
	// }
	f.Comment("TestVariants checks every compiled-in variant against the float64 reference of package")
	f.Comment("verify (random inputs, edge cases and the golden cases of this spec's name) and logs")
	f.Comment("one POSENC-ROW line per variant for posenc verify.")
	f.Func().Id("TestVariants").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.Id("s").Op(":=").Id("loadSpec").Call(jen.Id("t")),
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("Variants").Call()).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("name"), jen.Func().Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
				jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
					jen.Id("t").Dot("Skipf").Call(jen.Lit("variant %s is not available on this CPU"), jen.Id("name")),
				),
				jen.Defer().Id("UseVariant").Call(jen.Id("name")).Call(),
				jen.Id("r").Op(":=").Add(run),
				jen.Id("r").Dot("Target").Op("=").Id("name"),
				jen.Qual(sharedVerifyPath, "Emit").Call(jen.Id("t"), jen.Id("r")),
			)),
		),
	)

	// var archOf = map[string]string{"avx2": "amd64", "avx512": "amd64", "neon": "arm64"}
	// var specTargets = []string{...}
	//
	// func TestRequireVariants(t *testing.T) {
	//	for _, name := range strings.Split(os.Getenv("POSENC_REQUIRE"), ",") {
	//		name = strings.TrimSpace(name)
	//		if archOf[name] != runtime.GOARCH || !slices.Contains(specTargets, name) { continue }
	//		switch {
	//		case !slices.Contains(Variants(), name): t.Errorf(...not compiled in...)
	//		case !VariantAvailable(name): t.Errorf(...cannot run...)
	//		}
	//	}
	// }
	f.Comment("specTargets are the targets of the spec; archOf maps an assembly variant to its GOARCH.")
	f.Var().Defs(
		jen.Id("specTargets").Op("=").Index().String().ValuesFunc(func(g *jen.Group) {
			// Only targets with a backend for this encoding are compiled in.
			hasAsm, _ := emit.Backends(s.Encoding)
			for _, t := range s.Targets {
				if hasAsm || t == spec.TargetGo || t == spec.TargetCUDA {
					g.Lit(t)
				}
			}
		}),
		jen.Id("archOf").Op("=").Map(jen.String()).String().Values(jen.Dict{
			jen.Lit("avx2"): jen.Lit("amd64"), jen.Lit("avx512"): jen.Lit("amd64"), jen.Lit("neon"): jen.Lit("arm64"),
		}),
	)
	f.Comment("TestRequireVariants fails when an assembly variant listed in POSENC_REQUIRE (comma-separated,")
	f.Comment("e.g. avx2,avx512,neon) for the running GOARCH and asked for by the spec is not compiled in or")
	f.Comment("cannot run on this CPU, so CI notices a build that silently fell back to the generic kernels.")
	f.Func().Id("TestRequireVariants").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Qual("strings", "Split").Call(jen.Qual("os", "Getenv").Call(jen.Lit("POSENC_REQUIRE")), jen.Lit(","))).Block(
			jen.Id("name").Op("=").Qual("strings", "TrimSpace").Call(jen.Id("name")),
			jen.If(jen.Id("archOf").Index(jen.Id("name")).Op("!=").Qual("runtime", "GOARCH").Op("||").Op("!").Qual("slices", "Contains").Call(jen.Id("specTargets"), jen.Id("name"))).Block(jen.Continue()),
			jen.Switch().Block(
				jen.Case(jen.Op("!").Qual("slices", "Contains").Call(jen.Id("Variants").Call(), jen.Id("name"))).Block(
					jen.Id("t").Dot("Errorf").Call(jen.Lit("required variant %s is not compiled in (compiled in: %v)"), jen.Id("name"), jen.Id("Variants").Call()),
				),
				jen.Case(jen.Op("!").Id("VariantAvailable").Call(jen.Id("name"))).Block(
					jen.Id("t").Dot("Errorf").Call(jen.Lit("required variant %s is compiled in but this CPU cannot run it"), jen.Id("name")),
				),
			),
		),
	)
}

// sharedBenchCopy emits BenchmarkCopy: a plain copy of n float32s, the memory
// bandwidth the other benchmarks are measured against.
func sharedBenchCopy(f *jen.File, n jen.Code) {
	// func BenchmarkCopy(b *testing.B) {
	//	src := make([]float32, n); dst := make([]float32, n); copy(dst, src)
	//	b.SetBytes(int64(4 * len(src)))
	//	for b.Loop() { copy(dst, src) }
	// }
	f.Comment("BenchmarkCopy copies as many bytes as the kernel benchmarks touch: the memory-bound floor.")
	f.Func().Id("BenchmarkCopy").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Id("src").Op(":=").Make(jen.Index().Float32(), n),
		jen.Id("dst").Op(":=").Make(jen.Index().Float32(), jen.Len(jen.Id("src"))),
		jen.Copy(jen.Id("dst"), jen.Id("src")).Comment("fault the pages in outside the timed loop"),
		jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("src")))),
		jen.For(jen.Id("b").Dot("Loop").Call()).Block(jen.Copy(jen.Id("dst"), jen.Id("src"))),
	)
}

// sharedBenchRandom emits benchRandom(n, seed): n deterministic standard-normal float32s.
func sharedBenchRandom(f *jen.File) {
	// func benchRandom(n int, seed uint64) []float32 {
	//	r := rand.New(rand.NewPCG(seed, 1))
	//	v := make([]float32, n)
	//	for i := range v { v[i] = float32(r.NormFloat64()) }
	//	return v
	// }
	f.Comment("sharedBenchRandom returns n standard-normal values from a fixed seed.")
	f.Func().Id("benchRandom").Params(jen.Id("n").Int(), jen.Id("seed").Uint64()).Index().Float32().Block(
		jen.Id("r").Op(":=").Qual("math/rand/v2", "New").Call(jen.Qual("math/rand/v2", "NewPCG").Call(jen.Id("seed"), jen.Lit(1))),
		jen.Id("v").Op(":=").Make(jen.Index().Float32(), jen.Id("n")),
		jen.For(jen.Id("i").Op(":=").Range().Id("v")).Block(
			jen.Id("v").Index(jen.Id("i")).Op("=").Float32().Call(jen.Id("r").Dot("NormFloat64").Call()),
		),
		jen.Return(jen.Id("v")),
	)
}

// biasTest emits <name>_test.go for alibi and rpe_bias packages.
func biasTest(c *consts.Set) (emit.File, error) {
	s := c.Spec
	rpe := biasIsRPE(s)
	f := sharedTestFile(c)

	// verify.RunBias(s, verify.BiasKernels{AddBias: AddBias, ...})
	kern := jen.Dict{
		jen.Id("AddBias"): jen.Id("AddBias"),
		jen.Id("Softmax"): jen.Id("Softmax"),
		jen.Id("Bias"):    jen.Id("Bias"),
	}
	if rpe {
		kern = jen.Dict{
			jen.Id("RPEAddBias"): jen.Id("AddBias"),
			jen.Id("RPESoftmax"): jen.Id("Softmax"),
			jen.Id("RPEBias"):    jen.Id("Bias"),
			jen.Id("Bucket"):     jen.Id("Bucket"),
		}
	}
	sharedVariantsTest(f, c.Spec, jen.Qual(sharedVerifyPath, "RunBias").Call(jen.Id("s"), jen.Qual(sharedVerifyPath, "BiasKernels").Values(kern)))

	// const benchLQ, benchLK = 512, 512
	f.Comment("benchLQ and benchLK are the benchmark's query and key counts (Heads heads each).")
	f.Const().Defs(
		jen.Id("benchLQ").Op("=").Lit(512),
		jen.Id("benchLK").Op("=").Lit(512),
		jen.Id("benchScale").Op("=").Lit(0.125),
	)
	sharedBenchRandom(f)
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
	//	scores := sharedBenchRandom(Heads*benchLQ*benchLK, 1)
	//	[table := sharedBenchRandom(Heads*Buckets, 2)]
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
	//	scores := sharedBenchRandom(Heads*benchLQ*benchLK, 1)
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
	sharedBenchCopy(f, jen.Id("Heads").Op("*").Id("benchLQ").Op("*").Id("benchLK"))
	return render(s.Name+"_test.go", f)
}
