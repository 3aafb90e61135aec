package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// ropeGenericFile emits <name>_generic.go: the portable rotate kernel. Its
// loops have constant trip counts over array pointers ((*[HeadDim]float32),
// (*[rowLen]float32)), so the compiler proves every index in range and drops
// the bounds checks; the sign of the sines is applied once per row, not once
// per head.
func ropeGenericFile(c *Consts) (emit.File, error) {
	s := c.Spec
	half := s.Layout == spec.LayoutHalf
	f := gocode.NewFile(s.Name, s.File)

	// var genericKernels = kernels{rotate: rotateGeneric}
	f.Comment("genericKernels is the portable implementation of the kernels, available on every CPU.")
	gk := jen.Dict{jen.Id("rotate"): jen.Id("rotateGeneric"), jen.Id("combineRows"): jen.Id("combineRowsGeneric")}
	temperatureGenericKernel(f, gk, c)
	if c.hasAttention() {
		attention.GenericKernels(gk)
	}
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(gk)

	// half:        var sn [nFreq]float32;     for i := range sn { sn[i] = sign * row[nFreq+i] }
	// interleaved: var sn [RotaryDim]float32; for i := range sn { sn[i] = sign * row[RotaryDim+i] }
	snLen, sinOff := "nFreq", "nFreq"
	if !half {
		snLen, sinOff = "RotaryDim", "RotaryDim"
	}

	// func rotateGeneric(q, qSrc []float32, qHeads, qStride, qHeadStride int, k, kSrc []float32, kHeads, kStride, kHeadStride int, table []float32, idx []int32, sign float32) {
	//	for t, r := range idx {
	//		row := (*[rowLen]float32)(table[int(r)*rowLen:])
	//		var sn [snLen]float32
	//		for i := range sn { sn[i] = sign * row[sinOff+i] }
	//		rotateHeads(q, qSrc, t*qStride, qHeads, qHeadStride, row, &sn)
	//		rotateHeads(k, kSrc, t*kStride, kHeads, kHeadStride, row, &sn)
	//	}
	// }
	ints := func(names ...string) jen.Code {
		ids := make([]jen.Code, len(names))
		for i, n := range names {
			ids[i] = jen.Id(n)
		}
		return jen.List(ids...).Int()
	}
	f.Comment("rotateGeneric is the portable rotate kernel (docs/internals.md, kernel ABI): for")
	f.Comment("each token t it rotates the first RotaryDim values of the qHeads heads of q and then")
	f.Comment("of the kHeads heads of k with table row idx[t], reading the heads from qSrc and kSrc")
	f.Comment("(head h of token t at t·stride + h·headStride) and writing them at the same offsets")
	f.Comment("of q and k; sign −1 negates the sines.")
	f.Func().Id("rotateGeneric").Params(
		jen.List(jen.Id("q"), jen.Id("qSrc")).Add(c.tensor()), ints("qHeads", "qStride", "qHeadStride"),
		jen.List(jen.Id("k"), jen.Id("kSrc")).Add(c.tensor()), ints("kHeads", "kStride", "kHeadStride"),
		jen.Id("table").Index().Float32(), jen.Id("idx").Index().Int32(), jen.Id("sign").Float32(),
	).Block(
		jen.For(jen.List(jen.Id("t"), jen.Id("r")).Op(":=").Range().Id("idx")).Block(
			jen.Id("row").Op(":=").Add(ropeRowPtr(jen.Id("table"), jen.Int().Call(jen.Id("r")))),
			jen.Comment("The sines' sign is applied once per row, for all heads."),
			jen.Var().Id("sn").Index(jen.Id(snLen)).Float32(),
			jen.For(jen.Id("i").Op(":=").Range().Id("sn")).Block(
				jen.Id("sn").Index(jen.Id("i")).Op("=").Id("sign").Op("*").Id("row").Index(jen.Id(sinOff).Op("+").Id("i")),
			),
			jen.Id("rotateHeads").Call(jen.Id("q"), jen.Id("qSrc"), jen.Id("t").Op("*").Id("qStride"), jen.Id("qHeads"), jen.Id("qHeadStride"), jen.Id("row"), jen.Op("&").Id("sn")),
			jen.Id("rotateHeads").Call(jen.Id("k"), jen.Id("kSrc"), jen.Id("t").Op("*").Id("kStride"), jen.Id("kHeads"), jen.Id("kHeadStride"), jen.Id("row"), jen.Op("&").Id("sn")),
		),
	)

	// half (pairs (i, i+nFreq)):
	//	for i := 0; i < nFreq; i++ {
	//		c, s := cs[i], ss[i]
	//		x0, x1 := h[i], h[nFreq+i]
	//		h[i], h[nFreq+i] = x0*c-x1*s, x1*c+x0*s
	//	}
	// interleaved (pairs (i, i+1), i even; row and sn hold each value twice):
	//	for i := 0; i < RotaryDim-1; i += 2 { // (not i+1 < RotaryDim: the prove pass needs the constant bound)
	//		c, s := cs[i], ss[i]
	//		x0, x1 := h[i], h[i+1]
	//		h[i], h[i+1] = x0*c-x1*s, x1*c+x0*s
	//	}
	var loop *jen.Statement
	var j0, j1 jen.Code
	if half {
		j0, j1 = jen.Id("i"), jen.Id("nFreq").Op("+").Id("i")
		loop = jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Id("nFreq"), jen.Id("i").Op("++"))
	} else {
		j0, j1 = jen.Id("i"), jen.Id("i").Op("+").Lit(1)
		loop = jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Id("RotaryDim").Op("-").Lit(1), jen.Id("i").Op("+=").Lit(2))
	}
	// 16-bit storage: x0, x1 := widen(x[j0]), widen(x[j1]); y[j0], y[j1] = narrow(…), narrow(…)
	load := func(j jen.Code) jen.Code { return jen.Id("x").Index(j) }
	store := func(v jen.Code) jen.Code { return v }
	if c.storage16() {
		load = func(j jen.Code) jen.Code { return jen.Id("widen").Call(jen.Id("x").Index(j)) }
		store = func(v jen.Code) jen.Code { return jen.Id("narrow").Call(v) }
	}
	loop.Block(
		jen.List(jen.Id("c"), jen.Id("s")).Op(":=").List(jen.Id("cs").Index(jen.Id("i")), jen.Id("ss").Index(jen.Id("i"))),
		jen.List(jen.Id("x0"), jen.Id("x1")).Op(":=").List(load(j0), load(j1)),
		jen.List(jen.Id("y").Index(j0), jen.Id("y").Index(j1)).Op("=").List(
			store(jen.Id("x0").Op("*").Id("c").Op("-").Id("x1").Op("*").Id("s")),
			store(jen.Id("x1").Op("*").Id("c").Op("+").Id("x0").Op("*").Id("s")),
		),
	)

	// func rotateHeads(dst, src []float32, off, heads, headStride int, row *[rowLen]float32, sn *[snLen]float32) {
	//	// Slices of constant length, taken once: indexing them needs neither
	//	// bounds checks nor the per-access nil checks of an array pointer.
	//	cs, ss := row[:snLen:snLen], sn[:]
	//	for h := 0; h < heads; h++ {
	//		o := off + h*headStride
	//		y, x := (*[HeadDim]float32)(dst[o:]), (*[HeadDim]float32)(src[o:])
	//		<loop>
	//		[partial rotary] if y != x { copy(y[RotaryDim:], x[RotaryDim:]) }
	//	}
	// }
	body := []jen.Code{
		jen.Id("o").Op(":=").Id("off").Op("+").Id("h").Op("*").Id("headStride"),
		jen.List(jen.Id("y"), jen.Id("x")).Op(":=").List(
			jen.Parens(jen.Op("*").Index(jen.Id("HeadDim")).Add(c.elem())).Call(jen.Id("dst").Index(jen.Id("o"), jen.Empty())),
			jen.Parens(jen.Op("*").Index(jen.Id("HeadDim")).Add(c.elem())).Call(jen.Id("src").Index(jen.Id("o"), jen.Empty())),
		),
		loop,
	}
	if s.RotaryDim < s.HeadDim {
		body = append(body,
			jen.Comment("From a separate source the dims past RotaryDim are copied; in place they stay."),
			jen.If(jen.Id("y").Op("!=").Id("x")).Block(
				jen.Copy(jen.Id("y").Index(jen.Id("RotaryDim"), jen.Empty()), jen.Id("x").Index(jen.Id("RotaryDim"), jen.Empty())),
			))
	}
	f.Comment("rotateHeads rotates the heads heads of src starting at off, headStride floats apart,")
	f.Comment("with the cosines of row and the signed sines sn, writing them at the same offsets of")
	f.Comment("dst (the same slice in place, else not overlapping src); values RotaryDim..HeadDim")
	f.Comment("are copied from a separate source and untouched in place.")
	f.Func().Id("rotateHeads").Params(
		jen.List(jen.Id("dst"), jen.Id("src")).Add(c.tensor()),
		jen.List(jen.Id("off"), jen.Id("heads"), jen.Id("headStride")).Int(),
		jen.Id("row").Op("*").Index(jen.Id("rowLen")).Float32(),
		jen.Id("sn").Op("*").Index(jen.Id(snLen)).Float32(),
	).Block(
		jen.Comment("Slices of constant length, taken once: indexing them needs neither"),
		jen.Comment("bounds checks nor the per-access nil checks of an array pointer."),
		jen.List(jen.Id("cs"), jen.Id("ss")).Op(":=").List(
			jen.Id("row").Index(jen.Empty(), jen.Id(snLen), jen.Id(snLen)),
			jen.Id("sn").Index(jen.Empty(), jen.Empty()),
		),
		jen.For(jen.Id("h").Op(":=").Lit(0), jen.Id("h").Op("<").Id("heads"), jen.Id("h").Op("++")).Block(body...),
	)
	if c.storage16() {
		ropeStorageFuncs(f, c)
	}
	return gocode.Render(s.Name+"_generic.go", f)
}
