package rope

import (
	"github.com/dave/jennifer/jen"
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
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(jen.Dict{jen.Id("rotate"): jen.Id("rotateGeneric")})

	// half:        var sn [nFreq]float32;     for i := range sn { sn[i] = sign * row[nFreq+i] }
	// interleaved: var sn [RotaryDim]float32; for i := range sn { sn[i] = sign * row[RotaryDim+i] }
	snLen, sinOff := "nFreq", "nFreq"
	if !half {
		snLen, sinOff = "RotaryDim", "RotaryDim"
	}

	// func rotateGeneric(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32) {
	//	qs, ks := qHeads*HeadDim, kHeads*HeadDim
	//	for t, r := range idx {
	//		row := (*[rowLen]float32)(table[int(r)*rowLen:])
	//		var sn [snLen]float32
	//		for i := range sn { sn[i] = sign * row[sinOff+i] }
	//		rotateHeads(q[t*qs:(t+1)*qs], row, &sn)
	//		rotateHeads(k[t*ks:(t+1)*ks], row, &sn)
	//	}
	// }
	f.Comment("rotateGeneric is the portable rotate kernel (docs/internals.md, kernel ABI): for")
	f.Comment("each token t it rotates the first RotaryDim values of the qHeads heads of q and then")
	f.Comment("of the kHeads heads of k with table row idx[t]; sign −1 negates the sines.")
	f.Func().Id("rotateGeneric").Params(
		jen.Id("q").Index().Float32(), jen.Id("qHeads").Int(),
		jen.Id("k").Index().Float32(), jen.Id("kHeads").Int(),
		jen.Id("table").Index().Float32(), jen.Id("idx").Index().Int32(), jen.Id("sign").Float32(),
	).Block(
		jen.List(jen.Id("qs"), jen.Id("ks")).Op(":=").List(jen.Id("qHeads").Op("*").Id("HeadDim"), jen.Id("kHeads").Op("*").Id("HeadDim")),
		jen.For(jen.List(jen.Id("t"), jen.Id("r")).Op(":=").Range().Id("idx")).Block(
			jen.Id("row").Op(":=").Add(ropeRowPtr(jen.Id("table"), jen.Int().Call(jen.Id("r")))),
			jen.Comment("The sines' sign is applied once per row, for all heads."),
			jen.Var().Id("sn").Index(jen.Id(snLen)).Float32(),
			jen.For(jen.Id("i").Op(":=").Range().Id("sn")).Block(
				jen.Id("sn").Index(jen.Id("i")).Op("=").Id("sign").Op("*").Id("row").Index(jen.Id(sinOff).Op("+").Id("i")),
			),
			jen.Id("rotateHeads").Call(jen.Id("q").Index(jen.Id("t").Op("*").Id("qs"), jen.Parens(jen.Id("t").Op("+").Lit(1)).Op("*").Id("qs")), jen.Id("row"), jen.Op("&").Id("sn")),
			jen.Id("rotateHeads").Call(jen.Id("k").Index(jen.Id("t").Op("*").Id("ks"), jen.Parens(jen.Id("t").Op("+").Lit(1)).Op("*").Id("ks")), jen.Id("row"), jen.Op("&").Id("sn")),
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
	loop.Block(
		jen.List(jen.Id("c"), jen.Id("s")).Op(":=").List(jen.Id("cs").Index(jen.Id("i")), jen.Id("ss").Index(jen.Id("i"))),
		jen.List(jen.Id("x0"), jen.Id("x1")).Op(":=").List(jen.Id("h").Index(j0), jen.Id("h").Index(j1)),
		jen.List(jen.Id("h").Index(j0), jen.Id("h").Index(j1)).Op("=").List(
			jen.Id("x0").Op("*").Id("c").Op("-").Id("x1").Op("*").Id("s"),
			jen.Id("x1").Op("*").Id("c").Op("+").Id("x0").Op("*").Id("s"),
		),
	)

	// func rotateHeads(x []float32, row *[rowLen]float32, sn *[snLen]float32) {
	//	// Slices of constant length, taken once: indexing them needs neither
	//	// bounds checks nor the per-access nil checks of an array pointer.
	//	cs, ss := row[:snLen:snLen], sn[:]
	//	for ; len(x) >= HeadDim; x = x[HeadDim:] {
	//		h := (*[HeadDim]float32)(x)
	//		<loop>
	//	}
	// }
	f.Comment("rotateHeads rotates every head of x (a whole number of heads) with the cosines of")
	f.Comment("row and the signed sines sn; values RotaryDim..HeadDim of each head are untouched.")
	f.Func().Id("rotateHeads").Params(
		jen.Id("x").Index().Float32(),
		jen.Id("row").Op("*").Index(jen.Id("rowLen")).Float32(),
		jen.Id("sn").Op("*").Index(jen.Id(snLen)).Float32(),
	).Block(
		jen.Comment("Slices of constant length, taken once: indexing them needs neither"),
		jen.Comment("bounds checks nor the per-access nil checks of an array pointer."),
		jen.List(jen.Id("cs"), jen.Id("ss")).Op(":=").List(
			jen.Id("row").Index(jen.Empty(), jen.Id(snLen), jen.Id(snLen)),
			jen.Id("sn").Index(jen.Empty(), jen.Empty()),
		),
		jen.For(jen.Empty(), jen.Len(jen.Id("x")).Op(">=").Id("HeadDim"), jen.Id("x").Op("=").Id("x").Index(jen.Id("HeadDim"), jen.Empty())).Block(
			jen.Id("h").Op(":=").Parens(jen.Op("*").Index(jen.Id("HeadDim")).Float32()).Call(jen.Id("x")),
			loop,
		),
	)
	return gocode.Render(s.Name+"_generic.go", f)
}
