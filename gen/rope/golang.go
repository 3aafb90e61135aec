package rope

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

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
	fields := append([]gocode.KernelField{{Name: "rotate", Type: c.rotateABI().FuncType()}, {Name: abi.FarRows.Field, Type: abi.FarRows.FuncType()}}, temperatureFields(c)...)
	fields = append(fields, attention.Fields...)
	if c.storage16() {
		fields = append(fields, attention.Fields16...)
	}
	if c.fusedRope() {
		// Only the amd64 variants have it; the engine tests the field for nil.
		k := abi.ScoresKVRope
		if c.storage16() {
			k = abi.ScoresKVRope16
		}
		fields = append(fields, gocode.KernelField{Name: k.Field, Type: k.FuncType()})
	}
	reg, err := gocode.Registry(s.Name, s.File, fields)
	if err != nil {
		return nil, err
	}
	test, err := ropeTestFile(c)
	if err != nil {
		return nil, err
	}
	att, err := attentionFiles(c)
	if err != nil {
		return nil, err
	}
	return append([]emit.File{api, generic, reg, test}, att...), nil
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
	values, slices := "float32", "float32"
	if c.storage16() {
		values, slices = s.DType, "[]uint16 ("+s.DType+")"
	}
	paragraphs := []string{
		fmt.Sprintf("Package %s applies rotary position embeddings (RoPE) as specified by %s: "+
			"each head has HeadDim = %d %s values and %s; %s. "+
			"Pair i turns by the angle p·ω_i at position p, with ω_i = %s^(−2i/%d) %s",
			s.Name, s.File, s.HeadDim, values, rotated, pairs, ropeFloat(s.Base), s.RotaryDim, ropeScalingDoc(c)),
		"Tensors are [token][head][HeadDim] row-major " + slices + " slices with one int32 " +
			"position per token; any sub-range of tokens may be processed on its own, so " +
			"callers parallelize by splitting tokens. Positions in [0, MaxPosition) read " +
			"their cos/sin row from a table built once in float64 and rounded to float32; " +
			"every other position (negative, ≥ MaxPosition, or rescaled at run time) has " +
			"its row computed by angle addition: the complex product, in float32, of the " +
			"rows of the position's four bytes in tables of cos and sin of byte·256^k·ω_i " +
			"built once in float64 and rounded to float32 (at most about " +
			"5.7e-7·AttentionFactor from the exact cos and sin), or, for frequencies " +
			"rescaled at run time, math.Sincos of float64(p)·ω_i rounded once.",
		mropeDoc(c),
		storageDoc(c),
		temperatureDoc(c),
		deepseekDoc(c),
		"The exported functions dispatch to the fastest kernel variant the CPU " +
			"supports; Variants and UseVariant reach each one by name.",
	}
	var doc []string
	for i, p := range paragraphs {
		if p == "" {
			continue
		}
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
	if c.storage16() {
		f.Comment("HeadDim is the number of values of one head (16-bit " + s.DType + " encodings).")
	} else {
		f.Comment("HeadDim is the number of float32 values of one head.")
	}
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
	ropeForms(f, c)
	ropeMRoPE(f, c)
	ropeTemperature(f, c)
	ropeDeepSeek(f, c)
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
