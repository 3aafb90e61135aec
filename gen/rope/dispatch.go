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
