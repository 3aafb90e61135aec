package rope

import (
	"fmt"
	"io"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

// Multimodal RoPE (spec keys mrope_section, mrope_interleaved, mrope_freqs).
// Pair i has a fixed frequency ω_i and a position axis a_i; at a token
// whose axis positions are (p_0, p_1, …) it turns by p_{a_i}·ω_i. Its cos
// and sin are therefore entry i of the ordinary table row of p_{a_i}: the
// generated code assembles one row per token from the table rows of the
// token's axis positions (computing exactly the pairs whose position has no
// table row) and runs the ordinary rotate kernel over those rows, so every
// SIMD variant serves M-RoPE without new assembly.

// MRoPE holds the derived per-pair axes of a multimodal RoPE spec.
type MRoPE struct {
	Axes     int   // number of position axes (len(mrope_section))
	PairAxis []int // PairAxis[i] is the axis whose position turns pair i
}

// AxisRun is a maximal run of consecutive pairs [Lo, Hi) turned by one axis.
type AxisRun struct{ Lo, Hi, Axis int }

// Runs splits PairAxis into maximal runs of one axis.
func (m *MRoPE) Runs() []AxisRun {
	var runs []AxisRun
	for i, a := range m.PairAxis {
		if n := len(runs); n > 0 && runs[n-1].Axis == a && runs[n-1].Hi == i {
			runs[n-1].Hi = i + 1
			continue
		}
		runs = append(runs, AxisRun{Lo: i, Hi: i + 1, Axis: a})
	}
	return runs
}

// deriveMRoPE fills c.MRoPE from the spec's sections and, for the vision
// frequency assignments, replaces c.Freqs by the per-pair frequencies.
func (c *Consts) deriveMRoPE() error {
	s := c.Spec
	sec := s.MRoPESection
	if len(sec) == 0 {
		return nil
	}
	pairs := s.RotaryDim / 2
	n := len(sec)
	m := &MRoPE{Axes: n, PairAxis: make([]int, pairs)}
	if s.MRoPEInterleaved {
		// Qwen3-VL apply_interleaved_mrope: start from the t frequencies
		// everywhere; for axis a = 1, 2 overwrite the pairs
		// slice(a, section[a]·3, 3). Every other pair, the tail after the
		// last h and w pairs included, keeps axis 0 (t) — transformers and
		// vLLM rotate those tail pairs by t, which ggml's interleaved M-RoPE
		// does not.
		for a := 1; a < n; a++ {
			for i := a; i < n*sec[a] && i < pairs; i += n {
				m.PairAxis[i] = a
			}
		}
	} else {
		// Qwen2-VL apply_multimodal_rotary_pos_emb: cos.split(mrope_section·2)
		// with chunk j taking axis j%3, i.e. consecutive sections of pairs.
		i := 0
		for a, k := range sec {
			for range k {
				if i >= pairs {
					return fmt.Errorf("rope: mrope_section %v exceeds the %d rotary pairs", sec, pairs)
				}
				m.PairAxis[i] = a
				i++
			}
		}
		if i != pairs {
			return fmt.Errorf("rope: mrope_section %v covers %d of the %d rotary pairs", sec, i, pairs)
		}
	}
	switch s.MRoPEFreqs {
	case spec.MRoPEFreqsShared, "":
	case spec.MRoPEFreqsPerAxis:
		// Qwen2-VL VisionRotaryEmbedding(dim = 2·n_a) for each section:
		// inv_freq_j = 1/base^(2j/(2·n_a)), indexed by the axis position.
		w := make([]float64, 0, pairs)
		for _, k := range sec {
			w = append(w, BaseFreqs(s.Base, 2*k)...)
		}
		c.Freqs = w
	case spec.MRoPEFreqsAlternate:
		// Pixtral PixtralRotaryEmbedding: freqs = 1/base^(arange(0, dim, 2)/dim),
		// axis a takes freqs[a::n] (n = 2: freqs[::2] rows, freqs[1::2] columns),
		// the axes' lists concatenated.
		base := BaseFreqs(s.Base, s.RotaryDim)
		w := make([]float64, 0, pairs)
		for a := range n {
			for k := a; k < pairs; k += n {
				w = append(w, base[k])
			}
		}
		if len(w) != pairs {
			return fmt.Errorf("rope: mrope_freqs alternate gave %d frequencies for %d pairs", len(w), pairs)
		}
		c.Freqs = w
	default:
		return fmt.Errorf("rope: unknown mrope_freqs %q", s.MRoPEFreqs)
	}
	c.MRoPE = m
	return nil
}

// ropeMRoPE emits the M-RoPE constants, the row assembly and ApplyMRoPE,
// ApplyQKMRoPE and InverseMRoPE.
func ropeMRoPE(f *jen.File, c *Consts) {
	m := c.MRoPE
	if m == nil {
		return
	}
	pkg := c.Spec.Name
	half := c.Spec.Layout == spec.LayoutHalf

	f.Comment("Axes is the number of position axes of the M-RoPE forms (mrope_section has one")
	f.Comment("entry per axis: t, h, w for Qwen2-VL's text model; row, column for a vision")
	f.Comment("tower). Their pos holds Axes positions per token, token-major: pos[t*Axes+a].")
	f.Const().Id("Axes").Op("=").Lit(m.Axes)

	// var axisRuns = [...]axisRun{{lo, hi, axis}, …}
	f.Comment("axisRun is a run of consecutive pairs [lo, hi) turned by the position of one axis.")
	f.Type().Id("axisRun").Struct(ids("lo", "hi", "axis").Int())
	f.Comment("axisRuns are the runs of pairs of each axis, in pair order (mrope_section,")
	f.Comment("mrope_interleaved: see the package comment).")
	f.Var().Id("axisRuns").Op("=").Index(jen.Op("...")).Id("axisRun").ValuesFunc(func(g *jen.Group) {
		for _, r := range m.Runs() {
			g.Line().Values(jen.Lit(r.Lo), jen.Lit(r.Hi), jen.Lit(r.Axis))
		}
		g.Line()
	})

	// func mropeRows(rows []float32, pos []int32) {
	//	tab := getTable()
	//	var exact [Axes][rowLen]float32
	//	var src [Axes][]float32
	//	for t := 0; t < len(pos)/Axes; t++ {
	//		row, ps := rows[t*rowLen:(t+1)*rowLen], pos[t*Axes:(t+1)*Axes]
	//		if every ps[a] == ps[0] { row = table row of ps[0], or fillRows(row, ps[:1]); continue }
	//		for a, p := range ps {
	//			src[a] = nil
	//			for b := range a { if ps[b] == p { src[a] = src[b]; break } }
	//			if src[a] != nil { continue }
	//			if inTable(p) { src[a] = tab[int(p)*rowLen:(int(p)+1)*rowLen] } else {
	//				freqsSet.fillRows(exact[a][:], ps[a:a+1]); src[a] = exact[a][:]
	//			}
	//		}
	//		for _, r := range axisRuns { src := src[r.axis]; <copies> }
	//	}
	// }
	lo, hi := id("r").Dot("lo"), id("r").Dot("hi")
	var copies []jen.Code
	seg := func(off jen.Code, scale int) jen.Code {
		a := jen.Add(off).Op("+").Lit(scale).Op("*").Add(lo)
		b := jen.Add(off).Op("+").Lit(scale).Op("*").Add(hi)
		return jen.Copy(id("row").Index(a, b), id("src").Index(jen.Add(off).Op("+").Lit(scale).Op("*").Add(lo), jen.Add(off).Op("+").Lit(scale).Op("*").Add(hi)))
	}
	if half {
		copies = []jen.Code{seg(jen.Lit(0), 1), seg(id("nFreq"), 1)}
	} else {
		copies = []jen.Code{seg(jen.Lit(0), 2), seg(id("RotaryDim"), 2)}
	}
	// The other tokens: with consecutive sections (one run per axis) each run
	// looks its position up; with interleaved sections (many runs per axis)
	// each distinct axis position is resolved once into src[a] first.
	var mixed []jen.Code
	decls := []jen.Code{jen.Var().Id("exact").Index(jen.Lit(1)).Index(id("rowLen")).Float32()}
	if len(m.Runs()) > m.Axes {
		decls = []jen.Code{
			jen.Var().Id("exact").Index(id("Axes")).Index(id("rowLen")).Float32(),
			jen.Var().Id("src").Index(id("Axes")).Index().Float32(),
		}
		mixed = []jen.Code{
			jen.For(jen.List(id("a"), id("p")).Op(":=").Range().Id("ps")).Block(
				id("src").Index(id("a")).Op("=").Nil(),
				jen.For(id("b").Op(":=").Range().Id("a")).Block(
					jen.If(id("ps").Index(id("b")).Op("==").Id("p")).Block(
						id("src").Index(id("a")).Op("=").Id("src").Index(id("b")),
						jen.Break(),
					),
				),
				jen.If(id("src").Index(id("a")).Op("!=").Nil()).Block(jen.Continue().Comment("an earlier axis has this position")),
				jen.If(id("inTable").Call(id("p"))).Block(
					id("src").Index(id("a")).Op("=").Id("tab").Index(jen.Int().Call(id("p")).Op("*").Id("rowLen"), parens(jen.Int().Call(id("p")).Op("+").Lit(1)).Op("*").Id("rowLen")),
				).Else().Block(
					id("freqsSet").Dot("fillRows").Call(id("exact").Index(id("a")).Index(jen.Op(":")), id("ps").Index(id("a"), id("a").Op("+").Lit(1))),
					id("src").Index(id("a")).Op("=").Id("exact").Index(id("a")).Index(jen.Op(":")),
				),
			),
			jen.For(jen.List(jen.Id("_"), id("r")).Op(":=").Range().Id("axisRuns")).Block(
				append([]jen.Code{id("src").Op(":=").Id("src").Index(id("r").Dot("axis"))}, copies...)...,
			),
		}
	} else {
		mixed = []jen.Code{jen.For(jen.List(jen.Id("_"), id("r")).Op(":=").Range().Id("axisRuns")).Block(
			append([]jen.Code{
				id("p").Op(":=").Id("ps").Index(id("r").Dot("axis")),
				id("src").Op(":=").Id("exact").Index(jen.Lit(0)).Index(jen.Op(":")),
				jen.If(id("inTable").Call(id("p"))).Block(
					id("src").Op("=").Id("tab").Index(jen.Int().Call(id("p")).Op("*").Id("rowLen"), parens(jen.Int().Call(id("p")).Op("+").Lit(1)).Op("*").Id("rowLen")),
				).Else().Block(
					id("freqsSet").Dot("fillRows").Call(id("src"), id("ps").Index(id("r").Dot("axis"), id("r").Dot("axis").Op("+").Lit(1))),
				),
			}, copies...)...,
		)}
	}
	f.Comment("mropeRows writes the row of each of the len(pos)/Axes tokens of pos into rows:")
	f.Comment("pair i's entries come from the row of the token's position on axis a_i: its")
	f.Comment("table row, or, when it has none, the row Apply computes for it (angle addition,")
	f.Comment("freqsSet.fillRows), so that equal axes give Apply's bits. A text token (equal")
	f.Comment("axes) takes that row whole; otherwise each distinct axis position of the token is")
	f.Comment("looked up or computed once, however many runs of pairs (axisRuns) it turns.")
	tokenBody := append([]jen.Code{
		jen.List(id("row"), id("ps")).Op(":=").List(
			id("rows").Index(id("t").Op("*").Id("rowLen"), parens(id("t").Op("+").Lit(1)).Op("*").Id("rowLen")),
			id("pos").Index(id("t").Op("*").Id("Axes"), parens(id("t").Op("+").Lit(1)).Op("*").Id("Axes")),
		),
		jen.Comment("A text token (every axis at one position) takes Apply's row whole."),
		id("same").Op(":=").True(),
		jen.For(jen.List(jen.Id("_"), id("p")).Op(":=").Range().Id("ps").Index(jen.Lit(1), jen.Empty())).Block(
			jen.If(id("p").Op("!=").Id("ps").Index(jen.Lit(0))).Block(id("same").Op("=").False(), jen.Break()),
		),
		jen.If(id("same")).Block(
			jen.If(id("p").Op(":=").Id("ps").Index(jen.Lit(0)), id("inTable").Call(id("p"))).Block(
				jen.Copy(id("row"), id("tab").Index(jen.Int().Call(id("p")).Op("*").Id("rowLen"), parens(jen.Int().Call(id("p")).Op("+").Lit(1)).Op("*").Id("rowLen"))),
			).Else().Block(
				id("freqsSet").Dot("fillRows").Call(id("row"), id("ps").Index(jen.Empty(), jen.Lit(1))),
			),
			jen.Continue(),
		),
	}, mixed...)
	fnBody := append([]jen.Code{id("tab").Op(":=").Id("getTable").Call()}, decls...)
	fnBody = append(fnBody, jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Len(id("pos")).Op("/").Id("Axes"), id("t").Op("++")).Block(tokenBody...))
	f.Func().Id("mropeRows").Params(id("rows").Index().Float32(), id("pos").Index().Int32()).Block(fnBody...)

	// func rotateMRoPE(q, k operand, pos []int32, sign float32) { … }
	f.Comment("rotateMRoPE rotates the len(pos)/Axes tokens of q and k, assembling the rows of")
	f.Comment("exactChunk tokens at a time into a scratch buffer for the rotate kernel.")
	f.Func().Id("rotateMRoPE").Params(ids("q", "k").Id("operand"), id("pos").Index().Int32(), id("sign").Float32()).Block(
		id("rows").Op(":=").Id("exactScratch").Dot("Get").Call().Assert(jen.Op("*").Index(id("exactChunk").Op("*").Id("rowLen")).Float32()),
		id("tokens").Op(":=").Len(id("pos")).Op("/").Id("Axes"),
		jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Id("tokens"), id("t").Op("+=").Id("exactChunk")).Block(
			id("n").Op(":=").Min(id("exactChunk"), id("tokens").Op("-").Id("t")),
			id("mropeRows").Call(id("rows").Index(jen.Empty(), id("n").Op("*").Id("rowLen")), id("pos").Index(id("t").Op("*").Id("Axes"), parens(id("t").Op("+").Id("n")).Op("*").Id("Axes"))),
			id("rotateRun").Call(id("q").Dot("from").Call(id("t")), id("k").Dot("from").Call(id("t")), id("rows").Index(jen.Empty(), id("n").Op("*").Id("rowLen")), id("chunkIdx").Index(jen.Empty(), id("n")), id("sign")),
		),
		id("exactScratch").Dot("Put").Call(id("rows")),
	)

	// func checkMRoPE(fn, arg, heads string, n, npos, h int) { … }
	pre := jen.Lit(pkg + ": ").Op("+").Id("fn").Op("+").Lit(": ")
	f.Comment("checkMRoPE panics unless npos, the length of an M-RoPE pos, is a multiple of")
	f.Comment("Axes and n == (npos/Axes)·h·HeadDim with h ≥ 1, naming the function and argument.")
	f.Func().Id("checkMRoPE").Params(ids("fn", "arg", "heads").String(), ids("n", "npos", "h").Int()).Block(
		jen.If(id("npos").Op("%").Id("Axes").Op("!=").Lit(0)).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("len(pos) = ").Op("+").Add(itoa(id("npos"))).Op("+").Lit(", want a multiple of Axes = ").Op("+").Add(itoa(id("Axes")))),
		),
		jen.If(id("h").Op("<").Lit(1)).Block(
			jen.Panic(jen.Add(pre).Op("+").Id("heads").Op("+").Lit(" = ").Op("+").Add(itoa(id("h"))).Op("+").Lit(", want ").Op("+").Id("heads").Op("+").Lit(" >= 1")),
		),
		id("tokens").Op(":=").Id("npos").Op("/").Id("Axes"),
		jen.If(id("n").Op("%").Id("HeadDim").Op("!=").Lit(0).Op("||").Id("n").Op("/").Id("HeadDim").Op("%").Id("h").Op("!=").Lit(0).Op("||").Id("n").Op("/").Id("HeadDim").Op("/").Id("h").Op("!=").Id("tokens")).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("len(").Op("+").Id("arg").Op("+").Lit(") = ").Op("+").Add(itoa(id("n"))).
				Op("+").Lit(", want len(pos)/Axes*").Op("+").Id("heads").Op("+").Lit("*HeadDim = ").Op("+").Add(itoa(id("tokens"))).
				Op("+").Lit("*").Op("+").Add(itoa(id("h"))).Op("+").Lit("*").Op("+").Add(itoa(id("HeadDim")))),
		),
	)

	single := func(name string, doc []string, sign int) {
		for _, l := range doc {
			f.Comment(l)
		}
		f.Comment("It panics, before writing anything, if len(pos) is not a multiple of Axes, heads < 1,")
		f.Comment("or len(x) != len(pos)/Axes*heads*HeadDim.")
		f.Func().Id(name).Params(id("x").Add(c.tensor()), id("pos").Index().Int32(), id("heads").Int()).Block(
			id("checkMRoPE").Call(jen.Lit(name), jen.Lit("x"), jen.Lit("heads"), jen.Len(id("x")), jen.Len(id("pos")), id("heads")),
			id("rotateMRoPE").Call(id("contiguous").Call(id("x"), id("x"), id("heads")), id("operand").Values(), id("pos"), jen.Lit(sign)),
		)
	}
	single("ApplyMRoPE", []string{
		"ApplyMRoPE applies the multimodal rotary embedding to x, [len(pos)/Axes][heads][HeadDim],",
		"in place: pair i of every head of token t turns by pos[t*Axes+a_i]·ω_i, a_i the axis of",
		"pair i (Hugging Face apply_multimodal_rotary_pos_emb with position_ids[a][t] =",
		"pos[t*Axes+a]). A text token has equal positions on every axis and gets ordinary",
		"RoPE, as Apply at that position.",
	}, 1)
	single("InverseMRoPE", []string{
		"InverseMRoPE rotates x in place by the negated angles of ApplyMRoPE (its transpose,",
		"the backward pass), scaling by AttentionFactor as ApplyMRoPE does.",
	}, -1)
	f.Comment("ApplyQKMRoPE applies the multimodal rotary embedding in place to the queries q,")
	f.Comment("[len(pos)/Axes][qHeads][HeadDim], and the keys k, [len(pos)/Axes][kHeads][HeadDim],")
	f.Comment("assembling each token's cos/sin row once. It equals ApplyMRoPE on q and then on k,")
	f.Comment("and panics, before writing anything, on a bad len(pos), a head count < 1 or a")
	f.Comment("length that does not match.")
	f.Func().Id("ApplyQKMRoPE").Params(ids("q", "k").Add(c.tensor()), id("pos").Index().Int32(), ids("qHeads", "kHeads").Int()).Block(
		id("checkMRoPE").Call(jen.Lit("ApplyQKMRoPE"), jen.Lit("q"), jen.Lit("qHeads"), jen.Len(id("q")), jen.Len(id("pos")), id("qHeads")),
		id("checkMRoPE").Call(jen.Lit("ApplyQKMRoPE"), jen.Lit("k"), jen.Lit("kHeads"), jen.Len(id("k")), jen.Len(id("pos")), id("kHeads")),
		id("rotateMRoPE").Call(id("contiguous").Call(id("q"), id("q"), id("qHeads")), id("contiguous").Call(id("k"), id("k"), id("kHeads")), id("pos"), jen.Lit(1)),
	)
}

// parens is (code).
func parens(c jen.Code) *jen.Statement { return jen.Parens(c) }

// mropeDoc is the package-comment paragraph of an M-RoPE spec ("" for
// ordinary RoPE).
func mropeDoc(c *Consts) string {
	s := c.Spec
	if c.MRoPE == nil {
		return ""
	}
	how := "consecutive sections of pairs (Qwen2-VL apply_multimodal_rotary_pos_emb)"
	if s.MRoPEInterleaved {
		how = "interleaved sections (Qwen3-VL apply_interleaved_mrope: axis a > 0 takes pairs a, a+Axes, … below Axes·section[a], every other pair, the tail included, axis 0)"
	}
	freqs := "ω_i as above"
	switch s.MRoPEFreqs {
	case spec.MRoPEFreqsPerAxis:
		freqs = "each section restarting at ω = 1 as Qwen2-VL's VisionRotaryEmbedding(2·section) (Frequencies lists them per pair)"
	case spec.MRoPEFreqsAlternate:
		freqs = "the ordinary frequencies dealt to the axes in turn as Pixtral's PixtralRotaryEmbedding (freqs[a::Axes] for axis a; Frequencies lists them per pair)"
	}
	return fmt.Sprintf("Multimodal RoPE: mrope_section %v splits the pairs among Axes = %d position axes in %s, with %s. "+
		"ApplyMRoPE, ApplyQKMRoPE and InverseMRoPE take Axes positions per token; Apply and the other forms turn every pair by one position (a text token).",
		s.MRoPESection, c.MRoPE.Axes, how, freqs)
}

// explainMRoPE prints the axis runs of an M-RoPE spec (`posenc explain`).
func (c *Consts) explainMRoPE(w io.Writer) {
	m := c.MRoPE
	if m == nil {
		return
	}
	s := c.Spec
	fmt.Fprintf(w, "mrope: section %v over %d axes, interleaved %v, frequencies %s; pairs by axis:", s.MRoPESection, m.Axes, s.MRoPEInterleaved, s.MRoPEFreqs)
	for _, r := range m.Runs() {
		if r.Hi-r.Lo == 1 {
			fmt.Fprintf(w, " %d:a%d", r.Lo, r.Axis)
		} else {
			fmt.Fprintf(w, " %d-%d:a%d", r.Lo, r.Hi-1, r.Axis)
		}
	}
	fmt.Fprintln(w)
}
