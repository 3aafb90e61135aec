package gocode

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

// SpecPath and VerifyPath are the import paths generated tests use.
const (
	SpecPath   = "github.com/posenc/posenc/spec"
	VerifyPath = "github.com/posenc/posenc/verify"
)

// TestFile starts <name>_test.go: the header, the spec it was generated
// from as constants, and loadSpec.
func TestFile(s *spec.Spec) *jen.File {
	f := NewFile(s.Name, s.File)
	f.ImportName(SpecPath, "spec")
	f.ImportName(VerifyPath, "verify")

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
	f.Func().Id("loadSpec").Params(jen.Id("tb").Qual("testing", "TB")).Op("*").Qual(SpecPath, "Spec").Block(
		jen.List(jen.Id("s"), jen.Id("err")).Op(":=").Qual(SpecPath, "Parse").Call(jen.Id("specFile"), jen.Index().Byte().Call(jen.Id("specYAML"))),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Id("tb").Dot("Fatal").Call(jen.Id("err"))),
		jen.Return(jen.Id("s")),
	)
	return f
}

// VariantsTest emits TestVariants: every compiled-in variant, skipped when
// the CPU lacks it, run through the harness call run (an expression of type
// *verify.Report using s) and reported with verify.Emit. hasAsm tells
// whether the encoding has assembly variants (only then are the spec's
// assembly targets compiled in).
func VariantsTest(f *jen.File, s *spec.Spec, hasAsm bool, run jen.Code) {
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
				jen.Qual(VerifyPath, "Emit").Call(jen.Id("t"), jen.Id("r")),
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

// BenchCopy emits BenchmarkCopy: a plain copy of n float32s, the memory
// bandwidth the other benchmarks are measured against.
func BenchCopy(f *jen.File, n jen.Code) {
	// func BenchmarkCopy(b *testing.B) {
	//	src := make([]float32, n); dst := make([]float32, n)
	//	for i := range src { src[i] = float32(i) } // written: not the zero page
	//	copy(dst, src)
	//	b.SetBytes(int64(4 * len(src)))
	//	for b.Loop() { copy(dst, src) }
	// }
	f.Comment("BenchmarkCopy copies as many bytes as the kernel benchmarks touch: the memory-bound floor.")
	f.Func().Id("BenchmarkCopy").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Id("src").Op(":=").Make(jen.Index().Float32(), n),
		jen.Id("dst").Op(":=").Make(jen.Index().Float32(), jen.Len(jen.Id("src"))),
		// An unwritten source would be read from the kernel's shared zero page, a
		// different (and erratic) memory pattern from the kernels' real data.
		jen.For(jen.Id("i").Op(":=").Range().Id("src")).Block(jen.Id("src").Index(jen.Id("i")).Op("=").Float32().Call(jen.Id("i"))),
		jen.Copy(jen.Id("dst"), jen.Id("src")).Comment("fault the pages in outside the timed loop"),
		jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Lit(4).Op("*").Len(jen.Id("src")))),
		jen.For(jen.Id("b").Dot("Loop").Call()).Block(jen.Copy(jen.Id("dst"), jen.Id("src"))),
	)
}

// BenchRandom emits benchRandom(n, seed): n deterministic standard-normal float32s.
func BenchRandom(f *jen.File) {
	// func benchRandom(n int, seed uint64) []float32 {
	//	r := rand.New(rand.NewPCG(seed, 1))
	//	v := make([]float32, n)
	//	for i := range v { v[i] = float32(r.NormFloat64()) }
	//	return v
	// }
	f.Comment("benchRandom returns n standard-normal values from a fixed seed.")
	f.Func().Id("benchRandom").Params(jen.Id("n").Int(), jen.Id("seed").Uint64()).Index().Float32().Block(
		jen.Id("r").Op(":=").Qual("math/rand/v2", "New").Call(jen.Qual("math/rand/v2", "NewPCG").Call(jen.Id("seed"), jen.Lit(1))),
		jen.Id("v").Op(":=").Make(jen.Index().Float32(), jen.Id("n")),
		jen.For(jen.Id("i").Op(":=").Range().Id("v")).Block(
			jen.Id("v").Index(jen.Id("i")).Op("=").Float32().Call(jen.Id("r").Dot("NormFloat64").Call()),
		),
		jen.Return(jen.Id("v")),
	)
}
