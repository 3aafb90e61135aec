package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

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

	ropeOperand(f, c)

	// func rotateTokensAt(q, k operand, pos []int32, n int, sign float32) {
	//	tab, fs, useTable := getTable, &freqsSet, true
	//	[dynamic]  var scaled [nFreq]float64
	//	           if n > originalMaxPosition { freqsAt(n, &scaled); fs, useTable = nil, false }
	//	[longrope] if n > originalMaxPosition { tab, fs = getLongTable, &longFreqsSet }
	//	c := 0
	//	for t := 0; t < len(pos); {
	//		e := t + 1
	//		if useTable && inTable(pos[t]) {
	//			for e < len(pos) && inTable(pos[e]) { e++ }
	//			qt, kt := q.from(t), k.from(t)
	//			active.rotate(qt.dst, qt.src, …, kt.headStride, tab(), pos[t:e], sign)
	//		} else {
	//			for e < len(pos) && e-t < exactChunk && !(useTable && inTable(pos[e])) { e++ }
	//			fs.rotateChunk(q.from(t), k.from(t), pos[t:e], c, sign)  [dynamic: rotateExact(…, fs, &scaled, c, sign)]
	//			c++
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
			jen.List(jen.Id("fs"), jen.Id("useTable")).Op(":=").List(jen.Op("&").Id("freqsSet"), jen.True()),
			jen.Var().Id("scaled").Index(jen.Id("nFreq")).Float64(),
			jen.Comment("A rescaled base changes every angle, so the whole call takes the exact path."),
			jen.If(jen.Id("n").Op(">").Id("originalMaxPosition")).Block(
				jen.Id("freqsAt").Call(jen.Id("n"), jen.Op("&").Id("scaled")),
				jen.List(jen.Id("fs"), jen.Id("useTable")).Op("=").List(jen.Nil(), jen.False()),
			),
		}
		useTable = jen.Id("useTable").Op("&&").Add(useTable)
		notTable = jen.Op("!").Parens(jen.Id("useTable").Op("&&").Id("inTable").Call(jen.Id("pos").Index(jen.Id("e"))))
	case spec.ScaleLongRoPE:
		setup = []jen.Code{
			jen.List(jen.Id("tab"), jen.Id("fs")).Op(":=").List(jen.Id("getTable"), jen.Op("&").Id("freqsSet")),
			jen.Comment("Hugging Face's longrope switch: long_factor once the sequence outgrows original_max_position."),
			jen.If(jen.Id("n").Op(">").Id("originalMaxPosition")).Block(
				jen.List(jen.Id("tab"), jen.Id("fs")).Op("=").List(jen.Id("getLongTable"), jen.Op("&").Id("longFreqsSet")),
			),
		}
	default:
		setup = []jen.Code{jen.Id("fs").Op(":=").Op("&").Id("freqsSet")}
	}
	tabCall := jen.Id("getTable").Call()
	if scaling == spec.ScaleLongRoPE {
		tabCall = jen.Id("tab").Call()
	}
	from := func(o string) jen.Code { return jen.Id(o).Dot("from").Call(jen.Id("t")) }
	// The c-th chunk outside the table: rotateExact (dynamic NTK, whose rows
	// may come from a rescaled w) or the frequency set's rotateChunk.
	exact := jen.Id("fs").Dot("rotateChunk").Call(from("q"), from("k"), jen.Id("pos").Index(jen.Id("t"), jen.Id("e")), jen.Id("c"), jen.Id("sign"))
	if scaling == spec.ScaleDynamic {
		exact = jen.Id("rotateExact").Call(from("q"), from("k"), jen.Id("pos").Index(jen.Id("t"), jen.Id("e")), jen.Id("fs"), jen.Op("&").Id("scaled"), jen.Id("c"), jen.Id("sign"))
	}
	nParam := jen.Id("n").Int()
	if !c.RuntimeSwitch() {
		nParam = jen.Id("_").Int()
	}
	f.Comment("rotateTokensAt rotates the heads of every token of q and k by the token's position;")
	f.Comment("n is the sequence length that picks the frequencies (dynamic NTK and LongRoPE: the")
	f.Comment("call's max(pos)+1) and sign is 1 (Apply) or −1 (Inverse). Maximal runs of tokens")
	f.Comment("with table rows go to the kernel in one call; the others have their rows computed")
	f.Comment("exactly, exactChunk tokens at a time.")
	f.Func().Id("rotateTokensAt").Params(
		jen.List(jen.Id("q"), jen.Id("k")).Id("operand"),
		jen.Id("pos").Index().Int32(), nParam, jen.Id("sign").Float32(),
	).BlockFunc(func(g *jen.Group) {
		for _, st := range setup {
			g.Add(st)
		}
		g.Id("c").Op(":=").Lit(0).Comment("the chunks outside the table so far")
		g.For(jen.Id("t").Op(":=").Lit(0), jen.Id("t").Op("<").Len(jen.Id("pos")), jen.Empty()).Block(
			jen.Id("e").Op(":=").Id("t").Op("+").Lit(1),
			jen.If(useTable).Block(
				jen.For(jen.Id("e").Op("<").Len(jen.Id("pos")).Op("&&").Id("inTable").Call(jen.Id("pos").Index(jen.Id("e")))).Block(
					jen.Id("e").Op("++"),
				),
				jen.List(jen.Id("qt"), jen.Id("kt")).Op(":=").List(from("q"), from("k")),
				jen.Comment("The kernel is called directly here, not through rotateRun: one call less per decode token."),
				jen.Id("active").Dot("rotate").Call(kernelArgs("qt", "kt", tabCall, jen.Id("pos").Index(jen.Id("t"), jen.Id("e")))...),
			).Else().Block(
				jen.For(jen.Id("e").Op("<").Len(jen.Id("pos")).Op("&&").Id("e").Op("-").Id("t").Op("<").Id("exactChunk").Op("&&").Add(notTable)).Block(
					jen.Id("e").Op("++"),
				),
				exact,
				jen.Id("c").Op("++"),
			),
			jen.Id("t").Op("=").Id("e"),
		)
	})

	// func rotateTokens(q, k operand, pos []int32, sign float32) { rotateTokensAt(q, k, pos, seqLen(pos) or 0, sign) }
	n := jen.Lit(0)
	if c.RuntimeSwitch() {
		n = jen.Id("seqLen").Call(jen.Id("pos"))
	}
	// The decode fast path: one token calls the kernel directly with its table row,
	// or freqsSet.rotateAt with its computed row. rotateTokens is a small function taking
	// the operands once; rotateTokensAt's run loop copies the operand structs
	// (q.from, k.from) per run. With a run-time switch, a position below
	// original_max_position keeps the unswitched frequencies and table (n = p+1 ≤ omp).
	one := jen.Len(jen.Id("pos")).Op("==").Lit(1)
	if c.RuntimeSwitch() {
		one = one.Op("&&").Id("pos").Index(jen.Lit(0)).Op("<").Id("originalMaxPosition")
	}
	f.Comment("rotateTokens is rotateTokensAt with the frequencies of the call's own positions;")
	f.Comment("a single token (decode) skips the run loop.")
	f.Func().Id("rotateTokens").Params(
		jen.List(jen.Id("q"), jen.Id("k")).Id("operand"),
		jen.Id("pos").Index().Int32(), jen.Id("sign").Float32(),
	).Block(
		jen.If(one).Block(
			jen.If(jen.Id("inTable").Call(jen.Id("pos").Index(jen.Lit(0)))).Block(
				jen.Id("active").Dot("rotate").Call(kernelArgs("q", "k", jen.Id("getTable").Call(), jen.Id("pos"))...),
			).Else().Block(
				jen.Id("freqsSet").Dot("rotateAt").Call(jen.Id("q"), jen.Id("k"), jen.Id("pos"), jen.Id("sign")),
			),
			jen.Return(),
		),
		jen.Id("rotateTokensAt").Call(jen.Id("q"), jen.Id("k"), jen.Id("pos"), n, jen.Id("sign")),
	)
}

// kernelArgs are the arguments of active.rotate for the operands q and k,
// the table and idx; the sign is the variable sign.
func kernelArgs(q, k string, table, idx jen.Code) []jen.Code {
	var args []jen.Code
	for _, o := range []string{q, k} {
		for _, fld := range []string{"dst", "src", "heads", "stride", "headStride"} {
			args = append(args, jen.Id(o).Dot(fld))
		}
	}
	return append(args, table, idx, jen.Id("sign"))
}

// ropeOperand emits the operand type (one tensor of a kernel call), its
// constructors and rotateRun, the one place that calls the kernel.
func ropeOperand(f *jen.File, c *Consts) {
	f.Comment("operand is one tensor of a call: the destination and the source (the same slice")
	f.Comment("in place) from the current token on, its head count, and the floats between")
	f.Comment("consecutive tokens (stride) and consecutive heads (headStride). The zero operand")
	f.Comment("has no heads.")
	f.Type().Id("operand").Struct(
		jen.List(jen.Id("dst"), jen.Id("src")).Add(c.tensor()),
		jen.List(jen.Id("heads"), jen.Id("stride"), jen.Id("headStride")).Int(),
	)
	// func (o operand) from(t int) operand { o.dst, o.src = o.dst[t*o.stride:], o.src[t*o.stride:]; return o }
	f.Comment("from returns o starting at token t.")
	f.Func().Params(jen.Id("o").Id("operand")).Id("from").Params(jen.Id("t").Int()).Id("operand").Block(
		jen.List(jen.Id("o").Dot("dst"), jen.Id("o").Dot("src")).Op("=").List(
			jen.Id("o").Dot("dst").Index(jen.Id("t").Op("*").Id("o").Dot("stride"), jen.Empty()),
			jen.Id("o").Dot("src").Index(jen.Id("t").Op("*").Id("o").Dot("stride"), jen.Empty()),
		),
		jen.Return(jen.Id("o")),
	)
	// func contiguous(dst, src []float32, heads int) operand { return operand{dst, src, heads, heads * HeadDim, HeadDim} }
	f.Comment("contiguous is the [token][heads][HeadDim] operand read from src and written to dst.")
	f.Func().Id("contiguous").Params(jen.List(jen.Id("dst"), jen.Id("src")).Add(c.tensor()), jen.Id("heads").Int()).Id("operand").Block(
		jen.Return(jen.Id("operand").Values(jen.Id("dst"), jen.Id("src"), jen.Id("heads"), jen.Id("heads").Op("*").Id("HeadDim"), jen.Id("HeadDim"))),
	)
	// func rotateRun(q, k operand, table []float32, idx []int32, sign float32) { active.rotate(...) }
	args := kernelArgs("q", "k", jen.Id("table"), jen.Id("idx"))
	f.Comment("rotateRun rotates the len(idx) tokens of q and k with the table rows idx selects.")
	f.Func().Id("rotateRun").Params(
		jen.List(jen.Id("q"), jen.Id("k")).Id("operand"),
		jen.Id("table").Index().Float32(), jen.Id("idx").Index().Int32(), jen.Id("sign").Float32(),
	).Block(
		jen.Id("active").Dot("rotate").Call(args...),
	)
}

// ropeExported emits the length check and Apply, ApplyQK, Inverse.
func ropeExported(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	itoa := func(v jen.Code) jen.Code { return jen.Qual("strconv", "Itoa").Call(v) }

	// func checkShape(fn, arg, heads string, n, tokens, h int) {
	//	if h < 1 { panic("pkg: " + fn + ": " + heads + " = " + strconv.Itoa(h) + ", want " + heads + " >= 1") }
	//	// n == tokens*h*HeadDim, tested without overflowing.
	//	if n%HeadDim != 0 || n/HeadDim%h != 0 || n/HeadDim/h != tokens {
	//		panic("pkg: " + fn + ": len(" + arg + ") = " + strconv.Itoa(n) + ", want len(pos)*" + heads + "*HeadDim = " +
	//			strconv.Itoa(tokens) + "*" + strconv.Itoa(h) + "*" + strconv.Itoa(HeadDim)) // the factors as given: the product may overflow
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
				Add(itoa(jen.Id("tokens"))).Op("+").Lit("*").Op("+").Add(itoa(jen.Id("h"))).Op("+").Lit("*").Op("+").Add(itoa(jen.Id("HeadDim")))),
		),
	)

	// func Apply(x []float32, pos []int32, heads int) {
	//	checkShape("Apply", "x", "heads", len(x), len(pos), heads)
	//	rotateTokens(contiguous(x, x, heads), operand{}, pos, 1)
	// }
	single := func(name string, doc []string, sign int) {
		for _, line := range doc {
			f.Comment(line)
		}
		f.Comment("It panics, before writing anything, if heads < 1 or len(x) != len(pos)*heads*HeadDim.")
		f.Func().Id(name).Params(jen.Id("x").Add(c.tensor()), jen.Id("pos").Index().Int32(), jen.Id("heads").Int()).Block(
			jen.Id("checkShape").Call(jen.Lit(name), jen.Lit("x"), jen.Lit("heads"), jen.Len(jen.Id("x")), jen.Len(jen.Id("pos")), jen.Id("heads")),
			jen.Id("rotateTokens").Call(jen.Id("contiguous").Call(jen.Id("x"), jen.Id("x"), jen.Id("heads")), jen.Id("operand").Values(), jen.Id("pos"), jen.Lit(sign)),
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
	//	rotateTokens(contiguous(q, q, qHeads), contiguous(k, k, kHeads), pos, 1)
	// }
	f.Comment("ApplyQK applies the rotary embedding in place to the queries q,")
	f.Comment("[len(pos)][qHeads][HeadDim], and the keys k, [len(pos)][kHeads][HeadDim], of the same")
	f.Comment("tokens (grouped-query attention has kHeads < qHeads), reading each cos/sin row once per")
	f.Comment("token. It equals Apply(q, pos, qHeads) followed by Apply(k, pos, kHeads), and panics,")
	f.Comment("before writing anything, on a head count < 1 or a length that does not match.")
	f.Func().Id("ApplyQK").Params(jen.List(jen.Id("q"), jen.Id("k")).Add(c.tensor()), jen.Id("pos").Index().Int32(), jen.List(jen.Id("qHeads"), jen.Id("kHeads")).Int()).Block(
		jen.Id("checkShape").Call(jen.Lit("ApplyQK"), jen.Lit("q"), jen.Lit("qHeads"), jen.Len(jen.Id("q")), jen.Len(jen.Id("pos")), jen.Id("qHeads")),
		jen.Id("checkShape").Call(jen.Lit("ApplyQK"), jen.Lit("k"), jen.Lit("kHeads"), jen.Len(jen.Id("k")), jen.Len(jen.Id("pos")), jen.Id("kHeads")),
		jen.Id("rotateTokens").Call(jen.Id("contiguous").Call(jen.Id("q"), jen.Id("q"), jen.Id("qHeads")), jen.Id("contiguous").Call(jen.Id("k"), jen.Id("k"), jen.Id("kHeads")), jen.Id("pos"), jen.Lit(1)),
	)

	// func Inverse(x []float32, pos []int32, heads int) { ...; rotateTokens(contiguous(x, x, heads), operand{}, pos, -1) }
	single("Inverse", []string{
		"Inverse rotates x in place by the negated angles −pos[t]·ω_i, scaling by",
		"AttentionFactor as Apply does: it is the transpose of Apply (its backward pass),",
		"so Inverse undoes Apply up to the factor AttentionFactor².",
	}, -1)
}
