package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// ropeBenchHeads is the head count of the generated rope benchmarks (a 7B-class
// model's 32 heads).
const ropeBenchHeads = 32

// ropeTestFile emits <name>_test.go: TestVariants runs every compiled-in,
// available variant through verify.RunRoPE; TestRequireVariants enforces
// POSENC_REQUIRE; the benchmarks compare each variant with a copy of the
// same bytes and with a plain Go loop over float32 cos/sin tables.
func ropeTestFile(c *Consts) (emit.File, error) {
	f := gocode.TestFile(c.Spec)
	run, kernels := "RunRoPE", "RoPEKernels"
	if c.storage16() {
		run, kernels = "RunRoPE16", "RoPE16Kernels"
	}
	var runAll jen.Code = jen.Qual(gocode.VerifyPath, run).Call(jen.Id("s"), jen.Qual(gocode.VerifyPath, kernels).Values(jen.DictFunc(func(d jen.Dict) {
		for _, name := range []string{"Apply", "ApplyQK", "Inverse", "Frequencies", "FrequenciesAt", "AttentionFactor",
			"ApplyStrided", "ApplyHeadMajor", "ApplyQKStrided", "ApplyTo", "ApplyToSlots", "Shift"} {
			d[jen.Id(name)] = jen.Id(name)
		}
		if c.MRoPE != nil {
			for _, name := range []string{"ApplyMRoPE", "ApplyQKMRoPE", "InverseMRoPE"} {
				d[jen.Id(name)] = jen.Id(name)
			}
		}
		if c.Spec.AttnTemperature != nil {
			d[jen.Id("ScaleQ")] = jen.Id("ScaleQ")
		}
	})))
	runAll = jen.Qual(gocode.VerifyPath, "Merge").Call(runAll, attention.Run(f, attentionTerm(c)))
	gocode.VariantsTest(f, c.Spec, Backends.Assembly, runAll)
	ropeBenchmarks(f, c)
	return gocode.Render(c.Spec.Name+"_test.go", f)
}

// ropeBenchmarks emits BenchmarkApply, BenchmarkCopy and BenchmarkPlainLoop
// with their helpers.
func ropeBenchmarks(f *jen.File, c *Consts) {
	s := c.Spec
	posLimit := c.TableRows
	if sc := s.Scaling; c.RuntimeSwitch() {
		// Stay below original_max_position: no run-time switch, table path only.
		posLimit = min(posLimit, sc.OriginalMaxPosition)
	}
	posLimit = max(posLimit, 1)
	posIn := min(1000, posLimit-1)
	ropeFormBenchmarks(f, c, posIn, min(2048, posLimit-posIn))

	// const (benchHeads = 32; benchBigTokens = 64 << 20 / (benchHeads * HeadDim * 4); benchPosLimit = N)
	f.Comment("Benchmark geometry: benchHeads heads per token, 16 tokens (cache-resident) and")
	f.Comment("benchBigTokens tokens (x is 64 MiB), positions t mod benchPosLimit so that every row")
	f.Comment("comes from the table.")
	f.Const().Defs(
		jen.Id("benchHeads").Op("=").Lit(ropeBenchHeads),
		jen.Id("benchBigTokens").Op("=").Lit(64).Op("<<").Lit(20).Op("/").Parens(jen.Id("benchHeads").Op("*").Id("HeadDim").Op("*").Lit(4)),
		jen.Id("benchPosLimit").Op("=").Lit(posLimit),
	)

	// func benchSizes(b *testing.B, run func(b *testing.B, tokens int)) {
	//	for _, n := range []int{16, benchBigTokens} {
	//		b.Run("tokens="+strconv.Itoa(n), func(b *testing.B) {
	//			if n > 16 && testing.Short() { b.Skip("64 MiB input skipped in -short mode") }
	//			run(b, n)
	//		})
	//	}
	// }
	f.Comment("benchSizes runs fn as the sub-benchmarks tokens=16 and tokens=benchBigTokens; the")
	f.Comment("large one is skipped under -short.")
	f.Func().Id("benchSizes").Params(jen.Id("b").Op("*").Qual("testing", "B"), jen.Id("fn").Func().Params(jen.Op("*").Qual("testing", "B"), jen.Int())).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Index().Int().Values(jen.Lit(16), jen.Id("benchBigTokens"))).Block(
			jen.Id("b").Dot("Run").Call(jen.Lit("tokens=").Op("+").Qual("strconv", "Itoa").Call(jen.Id("n")), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
				jen.If(jen.Id("n").Op(">").Lit(16).Op("&&").Qual("testing", "Short").Call()).Block(
					jen.Id("b").Dot("Skip").Call(jen.Lit("64 MiB input skipped in -short mode")),
				),
				jen.Id("fn").Call(jen.Id("b"), jen.Id("n")),
			)),
		),
	)

	// func benchInput(tokens int) (x []float32, pos []int32) { ... }
	f.Comment("benchInput returns tokens·benchHeads heads of values in [−0.5, 0.5) and positions")
	f.Comment("t mod benchPosLimit.")
	value := jen.Float32().Call(jen.Id("i").Op("%").Lit(1000)).Op("/").Lit(1000).Op("-").Lit(0.5)
	if c.storage16() {
		value = jen.Id("narrow").Call(value)
	}
	f.Func().Id("benchInput").Params(jen.Id("tokens").Int()).Params(jen.Id("x").Add(c.tensor()), jen.Id("pos").Index().Int32()).Block(
		jen.Id("x").Op("=").Make(c.tensor(), jen.Id("tokens").Op("*").Id("benchHeads").Op("*").Id("HeadDim")),
		jen.For(jen.Id("i").Op(":=").Range().Id("x")).Block(
			jen.Id("x").Index(jen.Id("i")).Op("=").Add(value),
		),
		jen.Id("pos").Op("=").Make(jen.Index().Int32(), jen.Id("tokens")),
		jen.For(jen.Id("t").Op(":=").Range().Id("pos")).Block(
			jen.Id("pos").Index(jen.Id("t")).Op("=").Int32().Call(jen.Id("t").Op("%").Id("benchPosLimit")),
		),
		jen.Return(),
	)

	// With AttentionFactor ≠ 1 every call scales x by A; restoring x every 64 calls keeps
	// the values normal (no overflow, no subnormals) whatever A is.
	//	if i++; i%64 == 0 { copy(x, orig) }
	var refresh []jen.Code
	var refreshInit []jen.Code
	if c.AttentionFactor != 1 {
		refreshInit = []jen.Code{
			jen.Comment("Each call scales x by AttentionFactor: restore it every 64 calls to keep the"),
			jen.Comment("values away from overflow and subnormals."),
			jen.Id("orig").Op(":=").Qual("slices", "Clone").Call(jen.Id("x")),
			jen.Id("i").Op(":=").Lit(0),
		}
		refresh = []jen.Code{
			jen.If(jen.Id("i").Op("++"), jen.Id("i").Op("%").Lit(64).Op("==").Lit(0)).Block(
				jen.Copy(jen.Id("x"), jen.Id("orig")),
			),
		}
	}
	// func benchBytes(tokens int) int64 { return int64(tokens * benchHeads * RotaryDim * 4) }
	size, what := 4, "float32"
	if c.storage16() {
		size, what = 2, "16-bit "+s.DType
	}
	f.Comment("benchBytes is the bytes a call on tokens tokens reads and writes back: the RotaryDim")
	f.Comment("rotated dims of every head (a partial rotary leaves the rest untouched), as " + what + ".")
	f.Func().Id("benchBytes").Params(jen.Id("tokens").Int()).Int64().Block(
		jen.Return(jen.Int64().Call(jen.Id("tokens").Op("*").Id("benchHeads").Op("*").Id("RotaryDim").Op("*").Lit(size))),
	)

	loop := func(call jen.Code) []jen.Code {
		var body []jen.Code
		body = append(body, refreshInit...)
		body = append(body,
			jen.Id("b").Dot("SetBytes").Call(jen.Id("benchBytes").Call(jen.Id("n"))),
			jen.Id("b").Dot("ResetTimer").Call(),
			jen.For(jen.Id("b").Dot("Loop").Call()).Block(append([]jen.Code{call}, refresh...)...),
		)
		return body
	}

	// func BenchmarkApply(b *testing.B) {
	//	for _, v := range Variants() {
	//		b.Run(v, func(b *testing.B) {
	//			if !VariantAvailable(v) { b.Skip(...) }
	//			defer UseVariant(v)()
	//			benchSizes(b, func(b *testing.B, n int) {
	//				x, pos := benchInput(n)
	//				Apply(x, pos, benchHeads) // builds the table outside the timed loop
	//				b.SetBytes(benchBytes(n)); b.ResetTimer()
	//				for b.Loop() { Apply(x, pos, benchHeads) }
	//			})
	//		})
	//	}
	// }
	apply := jen.Id("Apply").Call(jen.Id("x"), jen.Id("pos"), jen.Id("benchHeads"))
	f.Comment("BenchmarkApply measures Apply with each available variant; SetBytes counts the")
	f.Comment("rotated dims only (benchBytes).")
	f.Func().Id("BenchmarkApply").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Id("Variants").Call()).Block(
			jen.Id("b").Dot("Run").Call(jen.Id("v"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
				jen.If(jen.Op("!").Id("VariantAvailable").Call(jen.Id("v"))).Block(
					jen.Id("b").Dot("Skip").Call(jen.Lit("variant ").Op("+").Id("v").Op("+").Lit(" is compiled in but this CPU cannot run it")),
				),
				jen.Defer().Id("UseVariant").Call(jen.Id("v")).Call(),
				jen.Id("benchSizes").Call(jen.Id("b"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B"), jen.Id("n").Int()).Block(
					append([]jen.Code{
						jen.List(jen.Id("x"), jen.Id("pos")).Op(":=").Id("benchInput").Call(jen.Id("n")),
						jen.Add(apply).Comment("builds the table outside the timed loop"),
					}, loop(apply)...)...,
				)),
			)),
		),
	)

	// func BenchmarkCopy(b *testing.B) { benchSizes(b, func(b *testing.B, n int) { x, _ := benchInput(n); x = x[:benchBytes(n)/4]; dst := make(...); copy(dst, x); for b.Loop() { copy(dst, x) } }) }
	f.Comment("BenchmarkCopy copies as many bytes as BenchmarkApply rotates (benchBytes): the")
	f.Comment("memory-bandwidth bound for the large size.")
	f.Func().Id("BenchmarkCopy").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.Id("benchSizes").Call(jen.Id("b"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B"), jen.Id("n").Int()).Block(
			jen.List(jen.Id("x"), jen.Id("_")).Op(":=").Id("benchInput").Call(jen.Id("n")),
			jen.Id("x").Op("=").Id("x").Index(jen.Empty(), jen.Id("benchBytes").Call(jen.Id("n")).Op("/").Lit(size)),
			jen.Id("dst").Op(":=").Make(c.tensor(), jen.Len(jen.Id("x"))),
			jen.Copy(jen.Id("dst"), jen.Id("x")).Comment("fault the pages in outside the timed loop"),
			jen.Id("b").Dot("SetBytes").Call(jen.Id("benchBytes").Call(jen.Id("n"))),
			jen.Id("b").Dot("ResetTimer").Call(),
			jen.For(jen.Id("b").Dot("Loop").Call()).Block(jen.Copy(jen.Id("dst"), jen.Id("x"))),
		)),
	)

	// func plainTables() (cos, sin []float32) {
	//	w := Frequencies()
	//	cos, sin = make([]float32, benchPosLimit*len(w)), make(...)
	//	for p := 0; p < benchPosLimit; p++ { for i, wi := range w { s, c := math.Sincos(float64(p) * wi); cos[p*len(w)+i] = float32(AttentionFactor * c); ... } }
	//	return
	// }
	f.Comment("plainTables returns A·cos(p·ω_i) and A·sin(p·ω_i) as float32, [benchPosLimit][RotaryDim/2].")
	f.Func().Id("plainTables").Params().Params(jen.List(jen.Id("cos"), jen.Id("sin")).Index().Float32()).Block(
		jen.Id("w").Op(":=").Id("Frequencies").Call(),
		jen.List(jen.Id("cos"), jen.Id("sin")).Op("=").List(
			jen.Make(jen.Index().Float32(), jen.Id("benchPosLimit").Op("*").Len(jen.Id("w"))),
			jen.Make(jen.Index().Float32(), jen.Id("benchPosLimit").Op("*").Len(jen.Id("w"))),
		),
		jen.For(jen.Id("p").Op(":=").Lit(0), jen.Id("p").Op("<").Id("benchPosLimit"), jen.Id("p").Op("++")).Block(
			jen.For(jen.List(jen.Id("i"), jen.Id("wi")).Op(":=").Range().Id("w")).Block(
				jen.List(jen.Id("s"), jen.Id("c")).Op(":=").Qual("math", "Sincos").Call(jen.Float64().Call(jen.Id("p")).Op("*").Id("wi")),
				jen.Id("cos").Index(jen.Id("p").Op("*").Len(jen.Id("w")).Op("+").Id("i")).Op("=").Float32().Call(jen.Id("AttentionFactor").Op("*").Id("c")),
				jen.Id("sin").Index(jen.Id("p").Op("*").Len(jen.Id("w")).Op("+").Id("i")).Op("=").Float32().Call(jen.Id("AttentionFactor").Op("*").Id("s")),
			),
		),
		jen.Return(),
	)

	// func plainApply(x []float32, pos []int32, heads int, cos, sin []float32) {
	//	const n = RotaryDim / 2
	//	for t, p := range pos {
	//		c, s := cos[int(p)*n:int(p)*n+n], sin[int(p)*n:int(p)*n+n]
	//		for h := 0; h < heads; h++ {
	//			v := x[(t*heads+h)*HeadDim:]
	//			for i := 0; i < n; i++ {
	//				half:        x0, x1 := v[i], v[i+n]; v[i] = x0*c[i] - x1*s[i]; v[i+n] = x1*c[i] + x0*s[i]
	//				interleaved: x0, x1 := v[2*i], v[2*i+1]; v[2*i] = ...; v[2*i+1] = ...
	//			}
	//		}
	//	}
	// }
	var i0, i1 jen.Code
	if s.Layout == spec.LayoutHalf {
		i0, i1 = jen.Id("i"), jen.Id("i").Op("+").Id("n")
	} else {
		i0, i1 = jen.Lit(2).Op("*").Id("i"), jen.Lit(2).Op("*").Id("i").Op("+").Lit(1)
	}
	f.Comment("plainApply is the straightforward Go loop a user would write over precomputed")
	f.Comment("float32 cos/sin tables: the baseline the generic kernel must not lose to.")
	load := func(j jen.Code) jen.Code { return jen.Id("v").Index(j) }
	store := func(v jen.Code) jen.Code { return v }
	if c.storage16() {
		load = func(j jen.Code) jen.Code { return jen.Id("widen").Call(jen.Id("v").Index(j)) }
		store = func(v jen.Code) jen.Code { return jen.Id("narrow").Call(v) }
	}
	f.Func().Id("plainApply").Params(
		jen.Id("x").Add(c.tensor()), jen.Id("pos").Index().Int32(), jen.Id("heads").Int(), jen.List(jen.Id("cos"), jen.Id("sin")).Index().Float32(),
	).Block(
		jen.Const().Id("n").Op("=").Id("RotaryDim").Op("/").Lit(2),
		jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
			jen.List(jen.Id("c"), jen.Id("s")).Op(":=").List(
				jen.Id("cos").Index(jen.Int().Call(jen.Id("p")).Op("*").Id("n"), jen.Int().Call(jen.Id("p")).Op("*").Id("n").Op("+").Id("n")),
				jen.Id("sin").Index(jen.Int().Call(jen.Id("p")).Op("*").Id("n"), jen.Int().Call(jen.Id("p")).Op("*").Id("n").Op("+").Id("n")),
			),
			jen.For(jen.Id("h").Op(":=").Lit(0), jen.Id("h").Op("<").Id("heads"), jen.Id("h").Op("++")).Block(
				jen.Id("v").Op(":=").Id("x").Index(jen.Parens(jen.Id("t").Op("*").Id("heads").Op("+").Id("h")).Op("*").Id("HeadDim"), jen.Empty()),
				jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Id("n"), jen.Id("i").Op("++")).Block(
					jen.List(jen.Id("x0"), jen.Id("x1")).Op(":=").List(load(i0), load(i1)),
					jen.Id("v").Index(i0).Op("=").Add(store(jen.Id("x0").Op("*").Id("c").Index(jen.Id("i")).Op("-").Id("x1").Op("*").Id("s").Index(jen.Id("i")))),
					jen.Id("v").Index(i1).Op("=").Add(store(jen.Id("x1").Op("*").Id("c").Index(jen.Id("i")).Op("+").Id("x0").Op("*").Id("s").Index(jen.Id("i")))),
				),
			),
		),
	)

	// func BenchmarkPlainLoop(b *testing.B) { cos, sin := plainTables(); benchSizes(b, func(b *testing.B, n int) { ...; for b.Loop() { plainApply(x, pos, benchHeads, cos, sin) } }) }
	plain := jen.Id("plainApply").Call(jen.Id("x"), jen.Id("pos"), jen.Id("benchHeads"), jen.Id("cos"), jen.Id("sin"))
	f.Comment("BenchmarkPlainLoop measures plainApply on BenchmarkApply's inputs.")
	f.Func().Id("BenchmarkPlainLoop").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(
		jen.List(jen.Id("cos"), jen.Id("sin")).Op(":=").Id("plainTables").Call(),
		jen.Id("benchSizes").Call(jen.Id("b"), jen.Func().Params(jen.Id("b").Op("*").Qual("testing", "B"), jen.Id("n").Int()).Block(
			append([]jen.Code{
				jen.List(jen.Id("x"), jen.Id("pos")).Op(":=").Id("benchInput").Call(jen.Id("n")),
			}, loop(plain)...)...,
		)),
	)
}
