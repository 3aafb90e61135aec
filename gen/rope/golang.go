package rope

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// ropeRotateType is the rope kernel's function type (docs/internals.md,
// kernel ABI).
const ropeRotateType = "func(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)"

// ropeExactChunk is the number of tokens whose rows the generated exact path
// computes into one scratch buffer before calling the kernel.
const ropeExactChunk = 64

// GoFiles returns the Go files of a rope package: the API with its
// tables and exact path, the generic kernel, the variant registry and the
// test that runs every variant through verify.
func (c *Consts) GoFiles() ([]emit.File, error) {
	s := c.Spec
	if len(c.Freqs) != s.RotaryDim/2 || c.RowLen == 0 {
		return nil, fmt.Errorf("golang: %s: rope constants not derived (%d frequencies for rotary_dim %d)", s.File, len(c.Freqs), s.RotaryDim)
	}
	api, err := ropeAPIFile(c)
	if err != nil {
		return nil, err
	}
	generic, err := ropeGenericFile(c)
	if err != nil {
		return nil, err
	}
	reg, err := gocode.Registry(s.Name, s.File, []gocode.KernelField{{Name: "rotate", Type: ropeRotateType}})
	if err != nil {
		return nil, err
	}
	test, err := ropeTestFile(c)
	if err != nil {
		return nil, err
	}
	return []emit.File{api, generic, reg, test}, nil
}

// ropeFloat writes v as the shortest Go literal that reads back as the
// same float64 (strconv 'g', precision −1).
func ropeFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// ropeFloatConst is formatFloat with a decimal point added where needed, so an
// untyped constant stays a floating-point constant (1 → 1.0).
func ropeFloatConst(v float64) string {
	t := ropeFloat(v)
	if !strings.ContainsAny(t, ".eEnN") {
		t += ".0"
	}
	return t
}

// ropeFloatArray is the composite literal [nFreq]float64{v0, v1, …}, one value
// per line.
func ropeFloatArray(vs []float64) jen.Code {
	items := make([]jen.Code, len(vs))
	for i, v := range vs {
		items[i] = jen.Op(ropeFloat(v))
	}
	return jen.Index(jen.Id("nFreq")).Float64().ValuesFunc(func(g *jen.Group) {
		for _, it := range items {
			g.Line().Add(it)
		}
		g.Line()
	})
}

// ropeScaling returns the spec's scaling type, "" when it has none.
func ropeScaling(s *spec.Spec) string {
	if s.Scaling == nil {
		return ""
	}
	return s.Scaling.Type
}

// ropeDoc is the generated package comment.
func ropeDoc(c *Consts) []string {
	s := c.Spec
	var pairs string
	if s.Layout == spec.LayoutHalf {
		pairs = fmt.Sprintf("half layout (GPT-NeoX rotate_half): dims i and i+%d form a pair", s.RotaryDim/2)
	} else {
		pairs = "interleaved layout (GPT-J / RoFormer): dims 2i and 2i+1 form a pair"
	}
	rotated := fmt.Sprintf("the first %d of its %d dims are rotated", s.RotaryDim, s.HeadDim)
	if s.RotaryDim == s.HeadDim {
		rotated = fmt.Sprintf("all %d of its dims are rotated", s.HeadDim)
	}
	paragraphs := []string{
		fmt.Sprintf("Package %s applies rotary position embeddings (RoPE) as specified by %s: "+
			"each head has HeadDim = %d float32 values and %s; %s. "+
			"Pair i turns by the angle p·ω_i at position p, with ω_i = %s^(−2i/%d) %s",
			s.Name, s.File, s.HeadDim, rotated, pairs, ropeFloat(s.Base), s.RotaryDim, ropeScalingDoc(c)),
		"Tensors are [token][head][HeadDim] row-major float32 slices with one int32 " +
			"position per token; any sub-range of tokens may be processed on its own, so " +
			"callers parallelize by splitting tokens. Positions in [0, MaxPosition) read " +
			"their cos/sin row from a table built once in float64 and rounded to float32; " +
			"every other position (negative, ≥ MaxPosition, or rescaled at run time) has " +
			"its row computed exactly, the angle float64(p)·ω_i in float64.",
		"The exported functions dispatch to the fastest kernel variant the CPU " +
			"supports; Variants and UseVariant reach each one by name.",
	}
	var doc []string
	for i, p := range paragraphs {
		if i > 0 {
			doc = append(doc, "")
		}
		doc = append(doc, ropeWrap(p, 80)...)
	}
	return doc
}

// ropeWrap splits text into lines of at most width bytes at spaces (a
// longer word gets a line of its own).
func ropeWrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ropeScalingDoc describes the spec's scaling in the package comment.
func ropeScalingDoc(c *Consts) string {
	s := c.Spec
	sc := s.Scaling
	a := ropeFloat(c.AttentionFactor)
	switch ropeScaling(s) {
	case "":
		return "(no scaling); cos and sin are multiplied by AttentionFactor = " + a + "."
	case spec.ScaleLinear:
		return fmt.Sprintf("divided by the linear scaling factor %s (position interpolation); AttentionFactor = %s.", ropeFloat(sc.Factor), a)
	case spec.ScaleNTK:
		return fmt.Sprintf("after static NTK-aware scaling with factor %s (base·factor^(d/(d−2))); AttentionFactor = %s.", ropeFloat(sc.Factor), a)
	case spec.ScaleDynamic:
		return fmt.Sprintf("under dynamic NTK scaling (factor %s, original_max_position %d): a call whose largest position plus one exceeds %d rescales the base; AttentionFactor = %s.",
			ropeFloat(sc.Factor), sc.OriginalMaxPosition, sc.OriginalMaxPosition, a)
	case spec.ScaleYaRN:
		return fmt.Sprintf("blended by YaRN (factor %s, original_max_position %d, beta_fast %s, beta_slow %s); cos and sin are multiplied by AttentionFactor = %s.",
			ropeFloat(sc.Factor), sc.OriginalMaxPosition, ropeFloat(sc.BetaFast), ropeFloat(sc.BetaSlow), a)
	case spec.ScaleLlama3:
		return fmt.Sprintf("after Llama 3 scaling (factor %s, low_freq_factor %s, high_freq_factor %s, original_max_position %d); AttentionFactor = %s.",
			ropeFloat(sc.Factor), ropeFloat(sc.LowFreqFactor), ropeFloat(sc.HighFreqFactor), sc.OriginalMaxPosition, a)
	case spec.ScaleLongRoPE:
		return fmt.Sprintf("divided by LongRoPE's per-pair short_factor, or long_factor when a call's largest position plus one exceeds %d; cos and sin are multiplied by AttentionFactor = %s.",
			sc.OriginalMaxPosition, a)
	}
	return ""
}

// ropeAPIFile emits <name>.go: constants, frequencies, tables, the exact
// path, the length checks and the exported functions.
func ropeAPIFile(c *Consts) (emit.File, error) {
	s := c.Spec
	pkg := s.Name
	scaling := ropeScaling(s)
	f := gocode.NewFile(pkg, s.File)
	for _, line := range ropeDoc(c) {
		f.PackageComment(line)
	}

	// const HeadDim = 128 ... const exactChunk = 64
	f.Comment("HeadDim is the number of float32 values of one head.")
	f.Const().Id("HeadDim").Op("=").Lit(s.HeadDim)
	f.Comment("RotaryDim is the number of leading values of each head that are rotated;")
	f.Comment("values RotaryDim..HeadDim pass through unchanged.")
	f.Const().Id("RotaryDim").Op("=").Lit(s.RotaryDim)
	f.Comment("AttentionFactor is the factor cos and sin are multiplied by (YaRN's and")
	f.Comment("LongRoPE's attention scaling; 1 for the other rules).")
	f.Const().Id("AttentionFactor").Op("=").Op(ropeFloatConst(c.AttentionFactor))
	f.Comment("MaxPosition bounds the positions served from the precomputed table,")
	f.Comment("[0, MaxPosition); other positions are computed exactly.")
	f.Const().Id("MaxPosition").Op("=").Lit(c.TableRows)
	f.Comment("nFreq is the number of rotated pairs per head.")
	f.Const().Id("nFreq").Op("=").Id("RotaryDim").Op("/").Lit(2)
	if s.Layout == spec.LayoutHalf {
		f.Comment("rowLen is the length of a table row: nFreq values A·cos(p·ω_i), then nFreq values A·sin(p·ω_i).")
	} else {
		f.Comment("rowLen is the length of a table row: A·cos(p·ω_i) twice for each pair, then A·sin(p·ω_i) twice.")
	}
	f.Const().Id("rowLen").Op("=").Lit(c.RowLen)
	f.Comment("exactChunk is the number of tokens whose rows the exact path computes at a time.")
	f.Const().Id("exactChunk").Op("=").Lit(ropeExactChunk)
	if c.RuntimeSwitch() {
		f.Comment("originalMaxPosition is the scaling's original_max_position: calls whose")
		f.Comment("largest position plus one exceeds it switch frequencies.")
		f.Const().Id("originalMaxPosition").Op("=").Lit(s.Scaling.OriginalMaxPosition)
	}
	if d := c.Dynamic; d != nil {
		f.Comment("ropeBase and dynamicFactor are the spec's base and scaling.factor.")
		f.Const().Defs(
			jen.Id("ropeBase").Op("=").Op(ropeFloatConst(d.Base)),
			jen.Id("dynamicFactor").Op("=").Op(ropeFloatConst(d.Factor)),
		)
	}

	// var freqs = [nFreq]float64{...}
	f.Line()
	switch scaling {
	case spec.ScaleDynamic:
		f.Comment("freqs holds the unscaled ω_i = 1/base^(2i/RotaryDim), used while no rescaling applies.")
	case spec.ScaleLongRoPE:
		f.Comment("freqs holds the short-factor ω_i = 1/(short_factor_i·base^(2i/RotaryDim)).")
	default:
		f.Comment("freqs holds the effective ω_i (radians per position) after scaling.")
	}
	f.Var().Id("freqs").Op("=").Add(ropeFloatArray(c.Freqs))
	if scaling == spec.ScaleLongRoPE {
		f.Comment("longFreqs holds the long-factor ω_i = 1/(long_factor_i·base^(2i/RotaryDim)).")
		f.Var().Id("longFreqs").Op("=").Add(ropeFloatArray(c.LongFreqs))
	}

	ropeFrequencyFuncs(f, c)
	ropeTables(f, c)
	ropeDispatch(f, c)
	ropeExported(f, c)
	return gocode.Render(pkg+".go", f)
}

// ropeFrequencyFuncs emits Frequencies, FrequenciesAt and freqsAt.
func ropeFrequencyFuncs(f *jen.File, c *Consts) {
	scaling := ropeScaling(c.Spec)

	// func freqsAt(seqLen int, dst *[nFreq]float64) { ... }
	f.Comment("freqsAt stores in dst the ω_i a call whose largest position plus one is seqLen uses.")
	var body []jen.Code
	switch scaling {
	case spec.ScaleDynamic:
		// if seqLen <= originalMaxPosition { *dst = freqs; return }
		// // Hugging Face _compute_dynamic_ntk_parameters:
		// // base' = base·((factor·seqLen/omp) − (factor−1))^(d/(d−2)).
		// base := ropeBase * math.Pow(dynamicFactor*float64(seqLen)/originalMaxPosition-(dynamicFactor-1), RotaryDim/(RotaryDim-2.0))
		// for i := range dst { dst[i] = 1 / math.Pow(base, float64(2*i)/RotaryDim) }
		body = []jen.Code{
			jen.If(jen.Id("seqLen").Op("<=").Id("originalMaxPosition")).Block(
				jen.Op("*").Id("dst").Op("=").Id("freqs"),
				jen.Return(),
			),
			jen.Comment("Hugging Face _compute_dynamic_ntk_parameters:"),
			jen.Comment("base' = base·((factor·seqLen/omp) − (factor−1))^(d/(d−2)), ω_i = 1/base'^(2i/d)."),
			jen.Id("base").Op(":=").Id("ropeBase").Op("*").Qual("math", "Pow").Call(
				jen.Id("dynamicFactor").Op("*").Float64().Call(jen.Id("seqLen")).Op("/").Id("originalMaxPosition").Op("-").Parens(jen.Id("dynamicFactor").Op("-").Lit(1)),
				jen.Id("RotaryDim").Op("/").Parens(jen.Id("RotaryDim").Op("-").Lit(2.0)),
			),
			jen.For(jen.Id("i").Op(":=").Range().Id("dst")).Block(
				jen.Id("dst").Index(jen.Id("i")).Op("=").Lit(1).Op("/").Qual("math", "Pow").Call(
					jen.Id("base"),
					jen.Float64().Call(jen.Lit(2).Op("*").Id("i")).Op("/").Id("RotaryDim"),
				),
			),
		}
	case spec.ScaleLongRoPE:
		// if seqLen > originalMaxPosition { *dst = longFreqs } else { *dst = freqs }
		body = []jen.Code{
			jen.If(jen.Id("seqLen").Op(">").Id("originalMaxPosition")).Block(
				jen.Op("*").Id("dst").Op("=").Id("longFreqs"),
			).Else().Block(
				jen.Op("*").Id("dst").Op("=").Id("freqs"),
			),
		}
	default:
		// *dst = freqs  (no runtime switch: seqLen does not matter)
		body = []jen.Code{jen.Op("*").Id("dst").Op("=").Id("freqs")}
	}
	params := jen.Id("seqLen").Int()
	if !c.RuntimeSwitch() {
		params = jen.Id("_").Int()
	}
	f.Func().Id("freqsAt").Params(params, jen.Id("dst").Op("*").Index(jen.Id("nFreq")).Float64()).Block(body...)

	// func Frequencies() []float64 { return FrequenciesAt(0) }
	f.Comment("Frequencies returns the ω_i (radians per position) of the RotaryDim/2 pairs")
	f.Comment("after scaling, used whenever no run-time switch applies; it is FrequenciesAt(0).")
	f.Func().Id("Frequencies").Params().Index().Float64().Block(
		jen.Return(jen.Id("FrequenciesAt").Call(jen.Lit(0))),
	)

	// func FrequenciesAt(seqLen int) []float64 {
	//	w := new([nFreq]float64)
	//	freqsAt(seqLen, w)
	//	return w[:]
	// }
	switch scaling {
	case spec.ScaleDynamic:
		f.Comment("FrequenciesAt returns the ω_i a call whose largest position plus one is seqLen")
		f.Comment("uses: the dynamically rescaled frequencies when seqLen > original_max_position,")
		f.Comment("else Frequencies(). The result is a fresh slice.")
	case spec.ScaleLongRoPE:
		f.Comment("FrequenciesAt returns the ω_i a call whose largest position plus one is seqLen")
		f.Comment("uses: the long-factor frequencies when seqLen > original_max_position, else the")
		f.Comment("short-factor ones. The result is a fresh slice.")
	default:
		f.Comment("FrequenciesAt returns the ω_i a call whose largest position plus one is seqLen")
		f.Comment("uses; this spec has no run-time switch, so it always equals Frequencies().")
		f.Comment("The result is a fresh slice.")
	}
	f.Func().Id("FrequenciesAt").Params(jen.Id("seqLen").Int()).Index().Float64().Block(
		jen.Id("w").Op(":=").New(jen.Index(jen.Id("nFreq")).Float64()),
		jen.Id("freqsAt").Call(jen.Id("seqLen"), jen.Id("w")),
		jen.Return(jen.Id("w").Index(jen.Empty(), jen.Empty())),
	)
}

// ropeTables emits fillRow, the lazily built table(s) and the exact-path
// scratch.
func ropeTables(f *jen.File, c *Consts) {
	s := c.Spec
	scaling := ropeScaling(s)
	scaled := func(v jen.Code) *jen.Statement {
		// float32(AttentionFactor * v), or float32(v) when A = 1.
		if c.AttentionFactor == 1 {
			return jen.Float32().Call(v)
		}
		return jen.Float32().Call(jen.Id("AttentionFactor").Op("*").Add(v))
	}

	// func fillRow(row *[rowLen]float32, p float64, w *[nFreq]float64) {
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
	f.Comment("p·ω_i in float64 (math.Sincos reduces large arguments accurately), scaled by")
	f.Comment("AttentionFactor, rounded once to float32.")
	f.Func().Id("fillRow").Params(
		jen.Id("row").Op("*").Index(jen.Id("rowLen")).Float32(),
		jen.Id("p").Float64(),
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
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
			jen.Id("fillRow").Call(ropeRowPtr(jen.Id("t"), jen.Id("p")), jen.Float64().Call(jen.Id("p")), jen.Id("w")),
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

	// func rotateExact(q []float32, qHeads int, k []float32, kHeads int, pos []int32, w *[nFreq]float64, sign float32) {
	//	rows := exactScratch.Get().(*[exactChunk * rowLen]float32)
	//	for t, p := range pos { fillRow((*[rowLen]float32)(rows[t*rowLen:]), float64(p), w) }
	//	active.rotate(q, qHeads, k, kHeads, rows[:len(pos)*rowLen], chunkIdx[:len(pos)], sign)
	//	exactScratch.Put(rows)
	// }
	f.Comment("rotateExact rotates up to exactChunk tokens whose rows it computes from w.")
	f.Func().Id("rotateExact").Params(
		jen.Id("q").Index().Float32(), jen.Id("qHeads").Int(),
		jen.Id("k").Index().Float32(), jen.Id("kHeads").Int(),
		jen.Id("pos").Index().Int32(), jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(), jen.Id("sign").Float32(),
	).Block(
		jen.Id("rows").Op(":=").Id("exactScratch").Dot("Get").Call().Assert(jen.Op("*").Index(jen.Id("exactChunk").Op("*").Id("rowLen")).Float32()),
		jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
			jen.Id("fillRow").Call(ropeRowPtr(jen.Id("rows"), jen.Id("t")), jen.Float64().Call(jen.Id("p")), jen.Id("w")),
		),
		jen.Id("active").Dot("rotate").Call(
			jen.Id("q"), jen.Id("qHeads"), jen.Id("k"), jen.Id("kHeads"),
			jen.Id("rows").Index(jen.Empty(), jen.Len(jen.Id("pos")).Op("*").Id("rowLen")),
			jen.Id("chunkIdx").Index(jen.Empty(), jen.Len(jen.Id("pos"))),
			jen.Id("sign"),
		),
		jen.Id("exactScratch").Dot("Put").Call(jen.Id("rows")),
	)
}

// ropeRowPtr is (*[rowLen]float32)(buf[i*rowLen:]).
func ropeRowPtr(buf, i jen.Code) jen.Code {
	return jen.Parens(jen.Op("*").Index(jen.Id("rowLen")).Float32()).Call(
		jen.Add(buf).Index(jen.Add(i).Op("*").Id("rowLen"), jen.Empty()),
	)
}

// ropeDispatch emits rotateTokens, which splits a call into table runs and
// exact chunks.
func ropeDispatch(f *jen.File, c *Consts) {
	scaling := ropeScaling(c.Spec)

	// func inTable(p int32) bool { return uint(p) < MaxPosition }
	f.Comment("inTable reports whether position p has a precomputed row (negative p wraps to a huge uint).")
	f.Func().Id("inTable").Params(jen.Id("p").Int32()).Bool().Block(
		jen.Return(jen.Uint().Call(jen.Id("p")).Op("<").Id("MaxPosition")),
	)

	if c.RuntimeSwitch() {
		// func seqLen(pos []int32) int { m := -1 << 31; for _, p := range pos { m = max(m, int(p)) }; return m + 1 }
		f.Comment("seqLen is the sequence length a call implies, max(pos)+1, as Hugging Face's")
		f.Comment("dynamic_rope_update derives it from position_ids.")
		f.Func().Id("seqLen").Params(jen.Id("pos").Index().Int32()).Int().Block(
			jen.Id("m").Op(":=").Int32().Call(jen.Qual("math", "MinInt32")),
			jen.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
				jen.Id("m").Op("=").Max(jen.Id("m"), jen.Id("p")),
			),
			jen.Return(jen.Int().Call(jen.Id("m")).Op("+").Lit(1)),
		)
	}

	// func rotateTokens(q []float32, qHeads int, k []float32, kHeads int, pos []int32, sign float32) {
	//	tab, w, useTable := getTable, &freqs, true
	//	[dynamic]  var scaled [nFreq]float64
	//	           if n := seqLen(pos); n > originalMaxPosition { freqsAt(n, &scaled); w, useTable = &scaled, false }
	//	[longrope] if seqLen(pos) > originalMaxPosition { tab, w = getLongTable, &longFreqs }
	//	qs, ks := qHeads*HeadDim, kHeads*HeadDim
	//	for t := 0; t < len(pos); {
	//		e := t + 1
	//		if useTable && inTable(pos[t]) {
	//			for e < len(pos) && inTable(pos[e]) { e++ }
	//			active.rotate(q[t*qs:e*qs], qHeads, k[t*ks:e*ks], kHeads, tab(), pos[t:e], sign)
	//		} else {
	//			for e < len(pos) && e-t < exactChunk && !(useTable && inTable(pos[e])) { e++ }
	//			rotateExact(q[t*qs:e*qs], qHeads, k[t*ks:e*ks], kHeads, pos[t:e], w, sign)
	//		}
	//		t = e
	//	}
	// }
	var setup []jen.Code
	useTable := jen.Id("inTable").Call(jen.Id("pos").Index(jen.Id("t")))
	notTable := jen.Op("!").Id("inTable").Call(jen.Id("pos").Index(jen.Id("e")))
	switch scaling {
	case spec.ScaleDynamic:
		setup = []jen.Code{
			jen.List(jen.Id("w"), jen.Id("useTable")).Op(":=").List(jen.Op("&").Id("freqs"), jen.True()),
			jen.Var().Id("scaled").Index(jen.Id("nFreq")).Float64(),
			jen.Comment("A rescaled base changes every angle, so the whole call takes the exact path."),
			jen.If(jen.Id("n").Op(":=").Id("seqLen").Call(jen.Id("pos")), jen.Id("n").Op(">").Id("originalMaxPosition")).Block(
				jen.Id("freqsAt").Call(jen.Id("n"), jen.Op("&").Id("scaled")),
				jen.List(jen.Id("w"), jen.Id("useTable")).Op("=").List(jen.Op("&").Id("scaled"), jen.False()),
			),
		}
		useTable = jen.Id("useTable").Op("&&").Add(useTable)
		notTable = jen.Op("!").Parens(jen.Id("useTable").Op("&&").Id("inTable").Call(jen.Id("pos").Index(jen.Id("e"))))
	case spec.ScaleLongRoPE:
		setup = []jen.Code{
			jen.List(jen.Id("tab"), jen.Id("w")).Op(":=").List(jen.Id("getTable"), jen.Op("&").Id("freqs")),
			jen.Comment("Hugging Face's longrope switch: long_factor once the sequence outgrows original_max_position."),
			jen.If(jen.Id("seqLen").Call(jen.Id("pos")).Op(">").Id("originalMaxPosition")).Block(
				jen.List(jen.Id("tab"), jen.Id("w")).Op("=").List(jen.Id("getLongTable"), jen.Op("&").Id("longFreqs")),
			),
		}
	default:
		setup = []jen.Code{jen.Id("w").Op(":=").Op("&").Id("freqs")}
	}
	tabCall := jen.Id("getTable").Call()
	if scaling == spec.ScaleLongRoPE {
		tabCall = jen.Id("tab").Call()
	}
	qs := func(a, b string) jen.Code {
		return jen.Id("q").Index(jen.Id(a).Op("*").Id("qs"), jen.Id(b).Op("*").Id("qs"))
	}
	ks := func(a, b string) jen.Code {
		return jen.Id("k").Index(jen.Id(a).Op("*").Id("ks"), jen.Id(b).Op("*").Id("ks"))
	}
	f.Comment("rotateTokens rotates the qHeads heads of every token of q and the kHeads heads of")
	f.Comment("every token of k by the token's position; sign is 1 (Apply) or −1 (Inverse). Maximal")
	f.Comment("runs of tokens with table rows go to the kernel in one call; the others have their")
	f.Comment("rows computed exactly, exactChunk tokens at a time.")
	f.Func().Id("rotateTokens").Params(
		jen.Id("q").Index().Float32(), jen.Id("qHeads").Int(),
		jen.Id("k").Index().Float32(), jen.Id("kHeads").Int(),
		jen.Id("pos").Index().Int32(), jen.Id("sign").Float32(),
	).BlockFunc(func(g *jen.Group) {
		for _, st := range setup {
			g.Add(st)
		}
		g.List(jen.Id("qs"), jen.Id("ks")).Op(":=").List(jen.Id("qHeads").Op("*").Id("HeadDim"), jen.Id("kHeads").Op("*").Id("HeadDim"))
		g.For(jen.Id("t").Op(":=").Lit(0), jen.Id("t").Op("<").Len(jen.Id("pos")), jen.Empty()).Block(
			jen.Id("e").Op(":=").Id("t").Op("+").Lit(1),
			jen.If(useTable).Block(
				jen.For(jen.Id("e").Op("<").Len(jen.Id("pos")).Op("&&").Id("inTable").Call(jen.Id("pos").Index(jen.Id("e")))).Block(
					jen.Id("e").Op("++"),
				),
				jen.Id("active").Dot("rotate").Call(qs("t", "e"), jen.Id("qHeads"), ks("t", "e"), jen.Id("kHeads"), tabCall, jen.Id("pos").Index(jen.Id("t"), jen.Id("e")), jen.Id("sign")),
			).Else().Block(
				jen.For(jen.Id("e").Op("<").Len(jen.Id("pos")).Op("&&").Id("e").Op("-").Id("t").Op("<").Id("exactChunk").Op("&&").Add(notTable)).Block(
					jen.Id("e").Op("++"),
				),
				jen.Id("rotateExact").Call(qs("t", "e"), jen.Id("qHeads"), ks("t", "e"), jen.Id("kHeads"), jen.Id("pos").Index(jen.Id("t"), jen.Id("e")), jen.Id("w"), jen.Id("sign")),
			),
			jen.Id("t").Op("=").Id("e"),
		)
	})
}

// ropeExported emits the length check and Apply, ApplyQK, Inverse.
func ropeExported(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	itoa := func(v jen.Code) jen.Code { return jen.Qual("strconv", "Itoa").Call(v) }

	// func checkShape(fn, arg, heads string, n, tokens, h int) {
	//	if h < 1 { panic("pkg: " + fn + ": " + heads + " = " + strconv.Itoa(h) + ", want " + heads + " >= 1") }
	//	// n == tokens*h*HeadDim, tested without overflowing.
	//	if n%HeadDim != 0 || n/HeadDim%h != 0 || n/HeadDim/h != tokens {
	//		panic("pkg: " + fn + ": len(" + arg + ") = " + strconv.Itoa(n) + ", want len(pos)*" + heads + "*HeadDim = " + strconv.Itoa(tokens*h*HeadDim))
	//	}
	// }
	f.Comment("checkShape panics unless h ≥ 1 and n == tokens·h·HeadDim, naming the function,")
	f.Comment("the argument and both lengths (the gonum/blas convention).")
	f.Func().Id("checkShape").Params(
		jen.List(jen.Id("fn"), jen.Id("arg"), jen.Id("heads")).String(),
		jen.List(jen.Id("n"), jen.Id("tokens"), jen.Id("h")).Int(),
	).Block(
		jen.If(jen.Id("h").Op("<").Lit(1)).Block(
			jen.Panic(jen.Lit(pkg+": ").Op("+").Id("fn").Op("+").Lit(": ").Op("+").Id("heads").Op("+").Lit(" = ").Op("+").Add(itoa(jen.Id("h"))).
				Op("+").Lit(", want ").Op("+").Id("heads").Op("+").Lit(" >= 1")),
		),
		jen.Comment("n == tokens·h·HeadDim, tested without overflowing."),
		jen.If(jen.Id("n").Op("%").Id("HeadDim").Op("!=").Lit(0).Op("||").
			Id("n").Op("/").Id("HeadDim").Op("%").Id("h").Op("!=").Lit(0).Op("||").
			Id("n").Op("/").Id("HeadDim").Op("/").Id("h").Op("!=").Id("tokens")).Block(
			jen.Panic(jen.Lit(pkg+": ").Op("+").Id("fn").Op("+").Lit(": len(").Op("+").Id("arg").Op("+").Lit(") = ").Op("+").Add(itoa(jen.Id("n"))).
				Op("+").Lit(", want len(pos)*").Op("+").Id("heads").Op("+").Lit("*HeadDim = ").Op("+").
				Add(itoa(jen.Id("tokens").Op("*").Id("h").Op("*").Id("HeadDim")))),
		),
	)

	// func Apply(x []float32, pos []int32, heads int) {
	//	checkShape("Apply", "x", "heads", len(x), len(pos), heads)
	//	rotateTokens(x, heads, nil, 0, pos, 1)
	// }
	single := func(name string, doc []string, sign int) {
		for _, line := range doc {
			f.Comment(line)
		}
		f.Comment("It panics, before writing anything, if heads < 1 or len(x) != len(pos)*heads*HeadDim.")
		f.Func().Id(name).Params(jen.Id("x").Index().Float32(), jen.Id("pos").Index().Int32(), jen.Id("heads").Int()).Block(
			jen.Id("checkShape").Call(jen.Lit(name), jen.Lit("x"), jen.Lit("heads"), jen.Len(jen.Id("x")), jen.Len(jen.Id("pos")), jen.Id("heads")),
			jen.Id("rotateTokens").Call(jen.Id("x"), jen.Id("heads"), jen.Nil(), jen.Lit(0), jen.Id("pos"), jen.Lit(sign)),
		)
	}
	single("Apply", []string{
		"Apply applies the rotary embedding to x in place. x is [len(pos)][heads][HeadDim];",
		"the first RotaryDim values of every head of token t are rotated by the angles",
		"pos[t]·ω_i and scaled by AttentionFactor, the rest are left as they are.",
	}, 1)

	// func ApplyQK(q, k []float32, pos []int32, qHeads, kHeads int) {
	//	checkShape("ApplyQK", "q", "qHeads", len(q), len(pos), qHeads)
	//	checkShape("ApplyQK", "k", "kHeads", len(k), len(pos), kHeads)
	//	rotateTokens(q, qHeads, k, kHeads, pos, 1)
	// }
	f.Comment("ApplyQK applies the rotary embedding in place to the queries q,")
	f.Comment("[len(pos)][qHeads][HeadDim], and the keys k, [len(pos)][kHeads][HeadDim], of the same")
	f.Comment("tokens (grouped-query attention has kHeads < qHeads), reading each cos/sin row once per")
	f.Comment("token. It equals Apply(q, pos, qHeads) followed by Apply(k, pos, kHeads), and panics,")
	f.Comment("before writing anything, on a head count < 1 or a length that does not match.")
	f.Func().Id("ApplyQK").Params(jen.List(jen.Id("q"), jen.Id("k")).Index().Float32(), jen.Id("pos").Index().Int32(), jen.List(jen.Id("qHeads"), jen.Id("kHeads")).Int()).Block(
		jen.Id("checkShape").Call(jen.Lit("ApplyQK"), jen.Lit("q"), jen.Lit("qHeads"), jen.Len(jen.Id("q")), jen.Len(jen.Id("pos")), jen.Id("qHeads")),
		jen.Id("checkShape").Call(jen.Lit("ApplyQK"), jen.Lit("k"), jen.Lit("kHeads"), jen.Len(jen.Id("k")), jen.Len(jen.Id("pos")), jen.Id("kHeads")),
		jen.Id("rotateTokens").Call(jen.Id("q"), jen.Id("qHeads"), jen.Id("k"), jen.Id("kHeads"), jen.Id("pos"), jen.Lit(1)),
	)

	// func Inverse(x []float32, pos []int32, heads int) { ...; rotateTokens(x, heads, nil, 0, pos, -1) }
	single("Inverse", []string{
		"Inverse rotates x in place by the negated angles −pos[t]·ω_i, scaling by",
		"AttentionFactor as Apply does: it is the transpose of Apply (its backward pass),",
		"so Inverse undoes Apply up to the factor AttentionFactor².",
	}, -1)
}
