package rope

import (
	"fmt"

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
// per head, and the heads go four per pass of the pair loop.
func ropeGenericFile(c *Consts) (emit.File, error) {
	s := c.Spec
	half := s.Layout == spec.LayoutHalf
	f := gocode.NewFile(s.Name, s.File)

	// var genericKernels = kernels{rotate: rotateGeneric}
	f.Comment("genericKernels is the portable implementation of the kernels, available on every CPU.")
	gk := jen.Dict{jen.Id("rotate"): jen.Id("rotateGeneric"), jen.Id("farRows"): jen.Id("farRowsGeneric")}
	temperatureGenericKernel(f, gk, c)
	attention.GenericKernels(gk)
	if c.storage16() {
		attention.GenericKernel16(gk)
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
			jen.Comment("The sines' sign is applied once per row, for all heads; with sign 1 the"),
			jen.Comment("row's own sines serve (the same bits: 1·s = s)."),
			jen.Id("sn").Op(":=").Parens(jen.Op("*").Index(jen.Id(snLen)).Float32()).Call(jen.Id("row").Index(jen.Id(sinOff), jen.Empty())),
			jen.If(jen.Id("sign").Op("!=").Lit(1)).Block(
				jen.Id("neg").Op(":=").New(jen.Index(jen.Id(snLen)).Float32()),
				jen.For(jen.Id("i").Op(":=").Range().Id("neg")).Block(
					jen.Id("neg").Index(jen.Id("i")).Op("=").Id("sign").Op("*").Id("sn").Index(jen.Id("i")),
				),
				jen.Id("sn").Op("=").Id("neg"),
			),
			jen.Id("rotateHeads").Call(jen.Id("q"), jen.Id("qSrc"), jen.Id("t").Op("*").Id("qStride"), jen.Id("qHeads"), jen.Id("qHeadStride"), jen.Id("row"), jen.Id("sn")),
			jen.Id("rotateHeads").Call(jen.Id("k"), jen.Id("kSrc"), jen.Id("t").Op("*").Id("kStride"), jen.Id("kHeads"), jen.Id("kHeadStride"), jen.Id("row"), jen.Id("sn")),
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
	// One pass of the pair loop rotates g heads (dk, sk for k < g): the
	// cosine and the signed sine of a pair are loaded once for all of them.
	// The four-head pass also takes two pairs per iteration (the loop's own
	// instructions halved; a pair count that is odd leaves one pair, done
	// after the loop). Together about 1.3× a one-head loop in pure Go on
	// amd64; the expressions per head are the one-head loop's, so the
	// results are bit-identical.
	loopFor := func(g int) []jen.Code {
		// pairAt returns the two indices of the pair whose first index is
		// i+d (d = 0 with the constant first index at when at != nil).
		pairAt := func(d int, at jen.Code) (jen.Code, jen.Code) {
			i := func() *jen.Statement {
				if at != nil {
					return jen.Add(at)
				}
				if d == 0 {
					return jen.Id("i")
				}
				return jen.Id("i").Op("+").Lit(d)
			}
			if half {
				return i(), jen.Id("nFreq").Op("+").Add(i())
			}
			return i(), i().Op("+").Lit(1)
		}
		// 16-bit storage: x0, x1 := widen(x[j0]), widen(x[j1]); y[j0], y[j1] = narrow(…), narrow(…)
		load := func(x string, j jen.Code) jen.Code { return jen.Id(x).Index(j) }
		store := func(v jen.Code) jen.Code { return v }
		if c.storage16() {
			load = func(x string, j jen.Code) jen.Code { return jen.Id("widen").Call(jen.Id(x).Index(j)) }
			store = func(v jen.Code) jen.Code { return jen.Id("narrow").Call(v) }
		}
		// pair rotates pair (j0, j1) of the g heads; decl declares c, s, x0, x1.
		pair := func(j0, j1 jen.Code, decl bool) []jen.Code {
			op := "="
			if decl {
				op = ":="
			}
			code := []jen.Code{jen.List(jen.Id("c"), jen.Id("s")).Op(op).List(jen.Id("cs").Index(j0), jen.Id("ss").Index(j0))}
			for k := 0; k < g; k++ {
				y, x := headNames(g, k)
				op := ":="
				if k > 0 || !decl {
					op = "="
				}
				code = append(code,
					jen.List(jen.Id("x0"), jen.Id("x1")).Op(op).List(load(x, j0), load(x, j1)),
					jen.List(jen.Id(y).Index(j0), jen.Id(y).Index(j1)).Op("=").List(
						store(jen.Id("x0").Op("*").Id("c").Op("-").Id("x1").Op("*").Id("s")),
						store(jen.Id("x1").Op("*").Id("c").Op("+").Id("x0").Op("*").Id("s")),
					))
			}
			return code
		}
		step, next := 1, 1 // pairs per iteration; index distance of the next pair
		if !half {
			step, next = 2, 2
		}
		pairs := s.RotaryDim / 2
		unroll := g > 1
		if unroll {
			step *= 2
		}
		// half: i < nFreq, or i < nFreq-1 unrolled; interleaved: i < RotaryDim-1,
		// or i < RotaryDim-3 (constant bounds, which the prove pass needs).
		limit := jen.Id("nFreq")
		if !half {
			limit = jen.Id("RotaryDim").Op("-").Lit(1)
		}
		if unroll {
			if half {
				limit = jen.Id("nFreq").Op("-").Lit(1)
			} else {
				limit = jen.Id("RotaryDim").Op("-").Lit(3)
			}
		}
		inc := jen.Id("i").Op("++")
		if step > 1 {
			inc = jen.Id("i").Op("+=").Lit(step)
		}
		j0, j1 := pairAt(0, nil)
		body := pair(j0, j1, true)
		if unroll {
			k0, k1 := pairAt(next, nil)
			body = append(body, pair(k0, k1, false)...)
		}
		code := []jen.Code{jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Add(limit), inc).Block(body...)}
		if unroll && pairs%2 == 1 {
			last := jen.Id("nFreq").Op("-").Lit(1)
			if !half {
				last = jen.Id("RotaryDim").Op("-").Lit(2)
			}
			t0, t1 := pairAt(0, last)
			code = append(code, jen.Comment("The last pair of an odd pair count."), jen.BlockFunc(func(b *jen.Group) {
				for _, st := range pair(t0, t1, true) {
					b.Add(st)
				}
			}))
		}
		return code
	}
	// heads declares the array pointers of g heads from offset o, runs the
	// pair loop and (partial rotary) copies the unrotated dims per head.
	heads := func(g int) []jen.Code {
		arr := jen.Op("*").Index(jen.Id("HeadDim")).Add(c.elem())
		var code []jen.Code
		for k := 0; k < g; k++ {
			y, x := headNames(g, k)
			at := jen.Id("o")
			if k > 0 {
				at = jen.Id("o").Op("+").Lit(k).Op("*").Id("headStride")
			}
			code = append(code, jen.List(jen.Id(y), jen.Id(x)).Op(":=").List(
				jen.Parens(arr.Clone()).Call(jen.Id("dst").Index(at, jen.Empty())),
				jen.Parens(arr.Clone()).Call(jen.Id("src").Index(jen.Add(at).Clone(), jen.Empty())),
			))
		}
		code = append(code, loopFor(g)...)
		if s.RotaryDim < s.HeadDim {
			code = append(code, jen.Comment("From a separate source the dims past RotaryDim are copied; in place they stay."))
			for k := 0; k < g; k++ {
				y, x := headNames(g, k)
				code = append(code, jen.If(jen.Id(y).Op("!=").Id(x)).Block(
					jen.Copy(jen.Id(y).Index(jen.Id("RotaryDim"), jen.Empty()), jen.Id(x).Index(jen.Id("RotaryDim"), jen.Empty())),
				))
			}
		}
		return code
	}

	// func rotateHeads(dst, src []float32, off, heads, headStride int, row *[rowLen]float32, sn *[snLen]float32) {
	//	cs, ss := row[:snLen:snLen], sn[:]
	//	h := 0
	//	for ; h+4 <= heads; h += 4 { o := off + h*headStride; d0, s0 := …; …; d3, s3 := …; <loop over 4 heads> }
	//	for ; h < heads; h++ { o := off + h*headStride; y, x := …; <loop over 1 head> }
	// }
	oAt := jen.Id("o").Op(":=").Id("off").Op("+").Id("h").Op("*").Id("headStride")
	f.Comment("rotateHeads rotates the heads heads of src starting at off, headStride floats apart,")
	f.Comment("with the cosines of row and the signed sines sn, writing them at the same offsets of")
	f.Comment("dst (the same slice in place, else not overlapping src); values RotaryDim..HeadDim")
	f.Comment("are copied from a separate source and untouched in place. Heads go four per pass")
	f.Comment("of the pair loop (each pair's cosine and sine loaded once for the four), the")
	f.Comment("remaining one to three one by one; every head reads its own values before it")
	f.Comment("writes them, so in place and separate buffers give the same bits.")
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
		jen.Id("h").Op(":=").Lit(0),
		jen.For(jen.Empty(), jen.Id("h").Op("+").Lit(4).Op("<=").Id("heads"), jen.Id("h").Op("+=").Lit(4)).Block(
			append([]jen.Code{oAt.Clone()}, heads(4)...)...),
		jen.For(jen.Empty(), jen.Id("h").Op("<").Id("heads"), jen.Id("h").Op("++")).Block(
			append([]jen.Code{oAt.Clone()}, heads(1)...)...),
	)
	if c.storage16() {
		ropeStorageFuncs(f, c)
	}
	return gocode.Render(s.Name+"_generic.go", f)
}

// headNames names head k's destination and source array pointers in a pass
// of g heads: y and x for one head, dk and sk for several (x0 and x1 are the
// values of a pair).
func headNames(g, k int) (y, x string) {
	if g == 1 {
		return "y", "x"
	}
	return fmt.Sprintf("d%d", k), fmt.Sprintf("s%d", k)
}
