package relative

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
)

// xlFields is the kernels struct of xl packages (docs/internals.md, kernel
// ABI "rpe_full and xl"); asm/amd64 and asm/arm64 implement the same field.
var xlFields = []gocode.KernelField{
	{Name: "scoresRow", Type: "func(dst, qu, k, qv, r []float32)"},
}

// xlFiles returns the Go files of an xl package (Dai et al. 2019).
func xlFiles(c *Consts) ([]emit.File, error) {
	s := c.Spec
	if s.HeadDim < 2 || s.HeadDim%2 != 0 || len(c.AbsDivisors) != s.HeadDim/2 {
		return nil, fmt.Errorf("golang: %s: %d sinusoid divisors for head_dim %d", s.File, len(c.AbsDivisors), s.HeadDim)
	}
	files, err := relFiles(c, append(append([]gocode.KernelField(nil), xlFields...), attention.Fields...), xlAPI, xlGeneric, xlTest)
	if err != nil {
		return nil, err
	}
	att, err := xlAttentionFiles(c)
	if err != nil {
		return nil, err
	}
	return append(files, att...), nil
}

// xlAPI emits <name>.go: constants, divisors, length checks, Scores and Relative.
func xlAPI(c *Consts) (emit.File, error) {
	s := c.Spec
	pkg := s.Name
	f := gocode.NewFile(pkg, s.File)
	gocode.PackageDoc(f, fmt.Sprintf("Package %s implements the relative attention score of Transformer-XL (Dai et al.,\n"+
		"\"Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context\", 2019,\n"+
		"section 3.3), per head, with the projections W_q, W_k,E and W_k,R applied by the caller:\n"+
		"\n"+
		"\tA_ij = (q_i + u)·k_j + (q_i + v)·r_{qOffset+i−j}\n"+
		"\n"+
		"terms (a)+(c) and (b)+(d) of A^rel, where r_rel = W_k,R·R_rel is the projected encoding\n"+
		"of distance rel, u and v the learned global content and position biases. Query i sits\n"+
		"at position qOffset+i, key j at position j. There is no 1/√HeadDim scale: apply it (or\n"+
		"not) to the scores as the model does. Relative writes the sinusoid R (base %v):\n"+
		"R_d[2i] = sin(d/base^(2i/HeadDim)), R_d[2i+1] = cos(d/base^(2i/HeadDim)), interleaved as\n"+
		"in Vaswani et al.'s sinusoid (the reference implementation of Dai et al. concatenates all sines, then all cosines; a\n"+
		"projection trained on that layout needs its columns permuted).", pkg, s.Base))

	f.Comment("HeadDim is the per-head dimension of q, k, r, u, v and of the sinusoid R.")
	f.Const().Id("HeadDim").Op("=").Lit(s.HeadDim)
	f.Comment("Base is the sinusoid's base: R_d[2i] = sin(d/Base^(2i/HeadDim)).")
	f.Const().Id("Base").Op("=").Lit(s.Base)
	f.Comment("divisors[i] = Base^(2i/HeadDim), computed in float64 by the generator.")
	f.Var().Id("divisors").Op("=").Index(jid("HeadDim").Op("/").Lit(2)).Float64().Add(gocode.FloatList(c.AbsDivisors))
	relChecks(f, pkg)

	// func RelRows(lq, lk int) int
	f.Comment("RelRows is the number of rows of r a Scores call with lq queries and lk keys takes:")
	f.Comment("lq+lk−1, one per distance the call meets (0 when lq or lk is 0 or negative).")
	f.Comment("It panics when r would not fit an int: (lq+lk−1)·HeadDim > math.MaxInt.")
	f.Func().Id("RelRows").Params(jen.List(jid("lq"), jid("lk")).Int()).Int().Block(
		jen.If(jid("lq").Op("<=").Lit(0).Op("||").Id("lk").Op("<=").Lit(0)).Block(jen.Return(jlit(0))),
		// lk ≥ 1, so MaxInt/HeadDim−lk+1 cannot overflow, and lq ≤ it keeps lq+lk−1 ≤ MaxInt/HeadDim.
		jen.If(jid("lq").Op(">").Qual("math", "MaxInt").Op("/").Id("HeadDim").Op("-").Id("lk").Op("+").Lit(1)).Block(
			gocode.Panicf(pkg, "RelRows: lq = %d, lk = %d: lq+lk−1 rows of HeadDim floats do not fit an int", jid("lq"), jid("lk")),
		),
		jen.Return(jid("lq").Op("+").Id("lk").Op("-").Lit(1)),
	)

	checkDoc := "It panics, before writing anything, on a negative lq, lk or qOffset or a length that does not match."
	// func Scores(dst, q, k, r, u, v []float32, lq, lk, qOffset int)
	f.Comment("Scores writes the Transformer-XL attention scores (Dai et al. 2019, A^rel of section 3.3)")
	f.Comment("to dst [lq][lk]:")
	f.Comment("")
	f.Comment("\tdst[i][j] = (q_i + u)·k_j + (q_i + v)·r[lq−1−i+j]")
	f.Comment("")
	f.Comment("for one head: q is [lq][HeadDim], k [lk][HeadDim], u and v HeadDim values, and r is")
	f.Comment("[RelRows(lq, lk)][HeadDim] indexed by relative distance: row m holds the projected")
	f.Comment("encoding of rel = qOffset+lq−1−m, so rows run from distance qOffset+lq−1 (m = 0)")
	f.Comment("down to qOffset−(lk−1), and query i (position qOffset+i) meets key j (position j) at")
	f.Comment("row lq−1−i+j (the D array of docs/internals.md). qOffset only names the distances;")
	f.Comment("the arithmetic does not depend on it. With qOffset = lk−lq (queries are the last lq")
	f.Comment("of lk keys, as with Transformer-XL's memory) the first lk rows are distances lk−1…0,")
	f.Comment("Relative(·, lk) projected, and the last lq−1 are the negative distances of the keys a")
	f.Comment("causal mask removes. No 1/√HeadDim scale is applied.")
	f.Comment(checkDoc)
	f.Func().Id("Scores").Params(jen.List(jid("dst"), jid("q"), jid("k"), jid("r"), jid("u"), jid("v")).Index().Float32(), jen.List(jid("lq"), jid("lk"), jid("qOffset")).Int()).Block(
		jid("checkDims").Call(jlit("Scores"), jid("lq"), jid("lk"), jid("qOffset")),
		jid("checkLen").Call(jlit("Scores"), jlit("dst"), jen.Len(jid("dst")), jid("lq").Op("*").Id("lk")),
		jid("checkLen").Call(jlit("Scores"), jlit("q"), jen.Len(jid("q")), jid("lq").Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Scores"), jlit("k"), jen.Len(jid("k")), jid("lk").Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Scores"), jlit("r"), jen.Len(jid("r")), jid("RelRows").Call(jid("lq"), jid("lk")).Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Scores"), jlit("u"), jen.Len(jid("u")), jid("HeadDim")),
		jid("checkLen").Call(jlit("Scores"), jlit("v"), jen.Len(jid("v")), jid("HeadDim")),
		jen.If(jid("lq").Op("==").Lit(0).Op("||").Id("lk").Op("==").Lit(0)).Block(jen.Return()),
		jid("kern").Op(":=").Id("active"),
		jid("bp").Op(":=").Id("getBuf").Call(jlit(2).Op("*").Id("HeadDim")),
		jen.List(jid("qu"), jid("qv")).Op(":=").List(
			jen.Parens(jen.Op("*").Id("bp")).Index(jen.Op(":").Id("HeadDim")),
			jen.Parens(jen.Op("*").Id("bp")).Index(jid("HeadDim").Op(":")),
		),
		jen.For(jid("i").Op(":=").Range().Id("lq")).Block(
			jid("qi").Op(":=").Id("q").Index(jid("i").Op("*").Id("HeadDim"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("HeadDim")),
			jen.For(jen.List(jid("x"), jid("qx")).Op(":=").Range().Id("qi")).Block(
				jen.List(jid("qu").Index(jid("x")), jid("qv").Index(jid("x"))).Op("=").List(jid("qx").Op("+").Id("u").Index(jid("x")), jid("qx").Op("+").Id("v").Index(jid("x"))),
			),
			jid("m").Op(":=").Id("lq").Op("-").Lit(1).Op("-").Id("i"),
			jid("kern").Dot("scoresRow").Call(
				jid("dst").Index(jid("i").Op("*").Id("lk"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("lk")),
				jid("qu"), jid("k"), jid("qv"), rows("r", "m", jid("m").Op("+").Id("lk")),
			),
		),
		jid("bufPool").Dot("Put").Call(jid("bp")),
	)

	// func Relative(dst []float32, n int)
	f.Comment("Relative writes the sinusoidal relative encoding R of Transformer-XL (Dai et al. 2019,")
	f.Comment("after Vaswani et al. 2017) for distances n−1 down to 0 to dst [n][HeadDim]: row m holds")
	f.Comment("distance d = n−1−m, R_d[2i] = sin(d/Base^(2i/HeadDim)) and R_d[2i+1] = cos(…), computed")
	f.Comment("in float64 and rounded to float32. Projected by W_k,R, rows 0…lk−1 are r's first rows")
	f.Comment("for a Scores call with qOffset = lk−lq.")
	f.Comment("It panics, before writing anything, on a negative n or a length that does not match.")
	f.Func().Id("Relative").Params(jid("dst").Index().Float32(), jid("n").Int()).Block(
		jen.If(jid("n").Op("<").Lit(0).Op("||").Id("n").Op(">").Qual("math", "MaxInt").Op("/").Id("HeadDim")).Block(
			gocode.Panicf(pkg, "Relative: n = %d out of range", jid("n")),
		),
		jid("checkLen").Call(jlit("Relative"), jlit("dst"), jen.Len(jid("dst")), jid("n").Op("*").Id("HeadDim")),
		jen.For(jid("m").Op(":=").Range().Id("n")).Block(
			jid("row").Op(":=").Id("dst").Index(jid("m").Op("*").Id("HeadDim"), jen.Parens(jid("m").Op("+").Lit(1)).Op("*").Id("HeadDim")),
			jid("d").Op(":=").Float64().Call(jid("n").Op("-").Lit(1).Op("-").Id("m")),
			jen.For(jen.List(jid("i"), jid("div")).Op(":=").Range().Id("divisors")).Block(
				jen.List(jid("s"), jid("c")).Op(":=").Qual("math", "Sincos").Call(jid("d").Op("/").Id("div")),
				jen.List(jid("row").Index(jlit(2).Op("*").Id("i")), jid("row").Index(jlit(2).Op("*").Id("i").Op("+").Lit(1))).Op("=").List(jen.Float32().Call(jid("s")), jen.Float32().Call(jid("c"))),
			),
		),
	)
	return gocode.Render(pkg+".go", f)
}

// xlGeneric emits <name>_generic.go: scoresRow.
func xlGeneric(c *Consts) (emit.File, error) {
	pkg := c.Spec.Name
	f := gocode.NewFile(pkg, c.Spec.File)
	f.Comment("genericKernels is the portable Go implementation, always available; the assembly")
	f.Comment("variants register theirs from the per-architecture files.")
	gk := jen.Dict{jid("scoresRow"): jid("scoresRowGeneric")}
	attention.GenericKernels(gk)
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(gk)
	relDot(f)
	// func scoresRowGeneric(dst, qu, k, qv, r []float32) {
	//	k, r = k[:len(dst)*HeadDim], r[:len(dst)*HeadDim]
	//	for j := range dst { dst[j] = dot(qu, k[j*HeadDim:]) + dot(qv, r[j*HeadDim:]) }
	// }
	f.Comment("scoresRowGeneric sets dst[j] = qu·k_j + qv·r_j for the len(dst) rows of k and r")
	f.Comment("([len(dst)][HeadDim] each); qu = q_i+u and qv = q_i+v.")
	f.Func().Id("scoresRowGeneric").Params(jen.List(jid("dst"), jid("qu"), jid("k"), jid("qv"), jid("r")).Index().Float32()).Block(
		append([]jen.Code{jen.List(jid("k"), jid("r")).Op("=").List(
			jid("k").Index(jen.Op(":").Len(jid("dst")).Op("*").Id("HeadDim")),
			jid("r").Index(jen.Op(":").Len(jid("dst")).Op("*").Id("HeadDim")),
		),
		}, relRowLoop(func() []jen.Code {
			out := []jen.Code{
				jen.List(jid("a0"), jid("a1"), jid("a2"), jid("a3")).Op(":=").Id("dot4").Call(jid("qu"), jid("k").Index(jid("j").Op("*").Id("HeadDim").Op(":"))),
				jen.List(jid("b0"), jid("b1"), jid("b2"), jid("b3")).Op(":=").Id("dot4").Call(jid("qv"), jid("r").Index(jid("j").Op("*").Id("HeadDim").Op(":"))),
			}
			for n := range 4 {
				jn := jid("j").Op("+").Lit(n)
				if n == 0 {
					jn = jid("j")
				}
				out = append(out, jid("dst").Index(jn).Op("=").Id(fmt.Sprintf("a%d", n)).Op("+").Id(fmt.Sprintf("b%d", n)))
			}
			return out
		}, []jen.Code{
			jid("dst").Index(jid("j")).Op("=").Id("dot").Call(jid("qu"), jid("k").Index(jid("j").Op("*").Id("HeadDim").Op(":"))).Op("+").
				Id("dot").Call(jid("qv"), jid("r").Index(jid("j").Op("*").Id("HeadDim").Op(":"))),
		})...)...,
	)
	return gocode.Render(pkg+"_generic.go", f)
}
