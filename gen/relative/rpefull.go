package relative

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
)

// rpeFullFields is the kernels struct of rpe_full packages (docs/internals.md,
// kernel ABI "rpe_full and xl"); asm/amd64 and asm/arm64 implement the same
// fields.
var rpeFullFields = []gocode.KernelField{
	{Name: "dotRows", Type: "func(dst, x, rows []float32)"},
	{Name: "scoresRow", Type: "func(dst, q, k, bias []float32, scale float32)"},
	{Name: "axpyRows", Type: "func(dst, w, rows []float32)"},
}

// relFiles runs the API, generic and test builders of a relative-attention
// encoding and appends the registry with the given kernels fields.
func relFiles(c *Consts, fields []gocode.KernelField, builds ...func(*Consts) (emit.File, error)) ([]emit.File, error) {
	var files []emit.File
	for _, build := range builds {
		f, err := build(c)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	reg, err := gocode.Registry(c.Spec.Name, c.Spec.File, fields)
	if err != nil {
		return nil, err
	}
	return append(files, reg), nil
}

// rpeFullFiles returns the Go files of an rpe_full package (Shaw et al. 2018).
func rpeFullFiles(c *Consts) ([]emit.File, error) {
	s := c.Spec
	if s.HeadDim < 1 || c.NumBuckets != 2*s.RMax-1 || c.BucketSpan != s.RMax-1 {
		return nil, fmt.Errorf("golang: %s: rpe_full constants not derived (head_dim %d, %d rows, span %d)", s.File, s.HeadDim, c.NumBuckets, c.BucketSpan)
	}
	files, err := relFiles(c, append(append([]gocode.KernelField(nil), rpeFullFields...), attention.Fields...), rpeFullAPI, rpeFullGeneric, rpeFullTest)
	if err != nil {
		return nil, err
	}
	att, err := rpeFullAttentionFiles(c)
	if err != nil {
		return nil, err
	}
	return append(files, att...), nil
}

// Short jennifer helpers for the relative-attention emitters.
var (
	jid  = jen.Id
	jlit = jen.Lit
)

// rows renders s[a*HeadDim : (b)*HeadDim] for an identifier a.
func rows(s, a string, b jen.Code) *jen.Statement {
	return jid(s).Index(jid(a).Op("*").Id("HeadDim"), jen.Parens(b).Op("*").Id("HeadDim"))
}

// relChecks emits checkDims and checkLen, shared by rpe_full and xl.
func relChecks(f *jen.File, pkg string) {
	// func checkDims(fn string, lq, lk, qOffset int) {
	//	if lq < 0 || lk < 0 { panic(...) }
	//	if qOffset < 0 { panic(...) }
	//	if (lk != 0 && lq > math.MaxInt/lk) || lq+lk > math.MaxInt/HeadDim { panic(...) }
	// }
	f.Comment("checkDims panics unless lq, lk and qOffset are non-negative and the call's buffer")
	f.Comment("sizes lq·lk and (lq+lk)·HeadDim fit an int.")
	f.Func().Id("checkDims").Params(jid("fn").String(), jen.List(jid("lq"), jid("lk"), jid("qOffset")).Int()).Block(
		jen.If(jid("lq").Op("<").Lit(0).Op("||").Id("lk").Op("<").Lit(0)).Block(
			gocode.Panicf(pkg, "%s: negative length: lq = %d, lk = %d", jid("fn"), jid("lq"), jid("lk")),
		),
		jen.If(jid("qOffset").Op("<").Lit(0)).Block(
			gocode.Panicf(pkg, "%s: negative qOffset %d (the position of query 0)", jid("fn"), jid("qOffset")),
		),
		jen.If(jen.Parens(jid("lk").Op("!=").Lit(0).Op("&&").Id("lq").Op(">").Qual("math", "MaxInt").Op("/").Id("lk")).Op("||").
			Id("lq").Op(">").Qual("math", "MaxInt").Op("/").Lit(2).Op("/").Id("HeadDim").Op("||").
			Id("lk").Op(">").Qual("math", "MaxInt").Op("/").Lit(2).Op("/").Id("HeadDim")).Block(
			gocode.Panicf(pkg, "%s: lq = %d, lk = %d: buffers too large", jid("fn"), jid("lq"), jid("lk")),
		),
	)
	// func checkLen(fn, arg string, n, want int) { if n != want { panic(...) } }
	f.Comment("checkLen panics unless n, the length of argument arg of function fn, is want.")
	f.Func().Id("checkLen").Params(jen.List(jid("fn"), jid("arg")).String(), jen.List(jid("n"), jid("want")).Int()).Block(
		jen.If(jid("n").Op("!=").Id("want")).Block(
			gocode.Panicf(pkg, "%s: len(%s) = %d, want %d", jid("fn"), jid("arg"), jid("n"), jid("want")),
		),
	)
	// var bufPool sync.Pool
	// func getBuf(n int) *[]float32 { ... }
	f.Comment("bufPool recycles per-call scratch buffers.")
	f.Var().Id("bufPool").Qual("sync", "Pool")
	f.Comment("getBuf returns a buffer of n floats from bufPool (return it with bufPool.Put).")
	f.Func().Id("getBuf").Params(jid("n").Int()).Op("*").Index().Float32().Block(
		jen.If(
			jen.List(jid("p"), jid("ok")).Op(":=").Id("bufPool").Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
			jid("ok").Op("&&").Cap(jen.Op("*").Id("p")).Op(">=").Id("n"),
		).Block(
			jen.Op("*").Id("p").Op("=").Parens(jen.Op("*").Id("p")).Index(jen.Op(":").Id("n")),
			jen.Return(jid("p")),
		),
		jid("b").Op(":=").Make(jen.Index().Float32(), jid("n")),
		jen.Return(jen.Op("&").Id("b")),
	)
}

// rpeFullAPI emits <name>.go: constants, Bucket, length checks, Scores and Output.
func rpeFullAPI(c *Consts) (emit.File, error) {
	s := c.Spec
	pkg := s.Name
	f := gocode.NewFile(pkg, s.File)
	gocode.PackageDoc(f, fmt.Sprintf("Package %s implements relative position representations (Shaw, Uszkoreit and\n"+
		"Vaswani, \"Self-Attention with Relative Position Representations\", 2018), per head:\n"+
		"\n"+
		"\te_ij = q_i·(k_j + a^K_b)/√HeadDim    (eqs. 4 and 5)\n"+
		"\to_i  = Σ_j α_ij (v_j + a^V_b)         (eq. 3)\n"+
		"\n"+
		"with query i at position qOffset+i, key j at position j and b = Bucket(qOffset+i−j) =\n"+
		"clamp(qOffset+i−j, −(RMax−1), RMax−1) + RMax−1 (eq. 6, r_max = %d) a row of the learned\n"+
		"[Buckets][HeadDim] tables a^K and a^V. Vectors are [l][HeadDim] rows, float32.\n"+
		"\n"+
		"Neither function builds the [lq][lk][HeadDim] tensor of relative embeddings: Scores\n"+
		"computes q_i·a^K_b once per query and distinct row, and Output sums the weights of\n"+
		"each row before multiplying by a^V, so both cost O(lq·(lk + Buckets)·HeadDim).", pkg, s.RMax))

	f.Comment("HeadDim is the per-head dimension of q, k, v and the table rows.")
	f.Const().Id("HeadDim").Op("=").Lit(s.HeadDim)
	f.Comment("RMax is the clipping distance: distances beyond ±(RMax−1) share the last rows.")
	f.Const().Id("RMax").Op("=").Lit(s.RMax)
	f.Comment("Buckets is the number of rows of a^K and a^V, 2·RMax−1.")
	f.Const().Id("Buckets").Op("=").Lit(c.NumBuckets)
	f.Comment("BucketSpan is the largest |rel| with its own row, RMax−1.")
	f.Const().Id("BucketSpan").Op("=").Lit(c.BucketSpan)

	// func Bucket(rel int) int { clamp; return rel + BucketSpan }
	f.Comment("Bucket returns the table row of rel = query position − key position:")
	f.Comment("clamp(rel, −(RMax−1), RMax−1) + RMax−1 (Shaw et al. 2018, eq. 6). It accepts any int.")
	f.Func().Id("Bucket").Params(jid("rel").Int()).Int().Block(
		jen.If(jid("rel").Op(">").Id("BucketSpan")).Block(jid("rel").Op("=").Id("BucketSpan")).
			Else().If(jid("rel").Op("<").Op("-").Id("BucketSpan")).Block(jid("rel").Op("=").Op("-").Id("BucketSpan")),
		jen.Return(jid("rel").Op("+").Id("BucketSpan")),
	)

	// func posAt(qOffset, i int) int — saturating qOffset+i.
	f.Comment("posAt returns qOffset+i, the position of query i, saturated at math.MaxInt (Bucket")
	f.Comment("is constant that far out, and every key position is below it).")
	f.Func().Id("posAt").Params(jen.List(jid("qOffset"), jid("i")).Int()).Int().Block(
		jen.If(jid("qOffset").Op(">").Qual("math", "MaxInt").Op("-").Id("i")).Block(jen.Return(jen.Qual("math", "MaxInt"))),
		jen.Return(jid("qOffset").Op("+").Id("i")),
	)
	// func keySplit(p, lk int) (top, bottom int)
	f.Comment("keySplit splits the lk keys of a query at position p by row: keys [0, top) are")
	f.Comment("BucketSpan or more before it (row Buckets−1), keys [bottom, lk) BucketSpan or more")
	f.Comment("after it (row 0), and key j in [top, bottom) has row p−j+BucketSpan. 0 ≤ top ≤ bottom ≤ lk.")
	f.Func().Id("keySplit").Params(jen.List(jid("p"), jid("lk")).Int()).Params(jen.List(jid("top"), jid("bottom")).Int()).Block(
		jen.List(jid("top"), jid("bottom")).Op("=").List(jid("lk"), jid("lk")),
		jen.If(jid("p").Op("-").Id("BucketSpan").Op("<").Id("lk").Op("-").Lit(1)).Block(
			jid("top").Op("=").Id("max").Call(jid("p").Op("-").Id("BucketSpan").Op("+").Lit(1), jlit(0)),
		),
		jen.If(jid("p").Op("<").Id("lk").Op("-").Id("BucketSpan")).Block(
			jid("bottom").Op("=").Id("max").Call(jid("p").Op("+").Id("BucketSpan"), jid("top")),
		),
		jen.Return(),
	)
	// func fill(s []float32, v float32) {
	//	if len(s) == 0 { return }
	//	s[0] = v
	//	for n := 1; n < len(s); n *= 2 { copy(s[n:], s[:n]) }
	// }
	f.Comment("fill sets every element of s to v, by doubling copies (memmove is vectorized).")
	f.Func().Id("fill").Params(jid("s").Index().Float32(), jid("v").Float32()).Block(
		jen.If(jen.Len(jid("s")).Op("==").Lit(0)).Block(jen.Return()),
		jid("s").Index(jlit(0)).Op("=").Id("v"),
		jen.For(jid("n").Op(":=").Lit(1), jid("n").Op("<").Len(jid("s")), jid("n").Op("*=").Lit(2)).Block(
			jen.Copy(jid("s").Index(jid("n").Op(":")), jid("s").Index(jen.Op(":").Id("n"))),
		),
	)
	// func sum64(x []float32) float64 — eight float64 partial sums, so the
	// adds are not one latency-bound chain.
	f.Comment("sum64 returns Σ x[j] in float64, in eight partial sums.")
	acc := func(i int) *jen.Statement { return jid(fmt.Sprintf("s%d", i)) }
	var accs, adds []jen.Code
	for i := range 8 {
		accs = append(accs, acc(i))
		x := jid("x").Index(jid("j").Op("+").Lit(i))
		if i == 0 {
			x = jid("x").Index(jid("j"))
		}
		adds = append(adds, acc(i).Op("+=").Float64().Call(x))
	}
	f.Func().Id("sum64").Params(jid("x").Index().Float32()).Float64().Block(
		jen.Var().List(accs...).Float64(),
		jid("j").Op(":=").Lit(0),
		jen.For(jen.Empty(), jid("j").Op("+").Lit(8).Op("<=").Len(jid("x")), jid("j").Op("+=").Lit(8)).Block(adds...),
		jen.For(jen.Empty(), jid("j").Op("<").Len(jid("x")), jid("j").Op("++")).Block(
			jid("s0").Op("+=").Float64().Call(jid("x").Index(jid("j"))),
		),
		jen.Return(jen.Parens(jen.Parens(acc(0).Op("+").Add(acc(1))).Op("+").Parens(acc(2).Op("+").Add(acc(3)))).Op("+").
			Parens(jen.Parens(acc(4).Op("+").Add(acc(5))).Op("+").Parens(acc(6).Op("+").Add(acc(7))))),
	)
	relChecks(f, pkg)

	// invSqrtD = 1/√HeadDim, rounded to float32 once.
	f.Comment("invSqrtD is 1/√HeadDim, the scale of Scores.")
	f.Var().Id("invSqrtD").Op("=").Float32().Call(jlit(1).Op("/").Qual("math", "Sqrt").Call(jid("HeadDim")))

	shapeDoc := "Query i sits at position qOffset+i, key j at position j."
	checkDoc := "It panics, before writing anything, on a negative lq, lk or qOffset or a length that does not match."

	// func Scores(dst, q, k, aK []float32, lq, lk, qOffset int)
	f.Comment("Scores writes the attention logits of Shaw et al. (2018), eq. 4 with eq. 5's relative")
	f.Comment("key term, to dst [lq][lk]:")
	f.Comment("")
	f.Comment("\tdst[i][j] = q_i·(k_j + aK[Bucket(qOffset+i−j)]) / √HeadDim")
	f.Comment("")
	f.Comment("for one head: q is [lq][HeadDim], k [lk][HeadDim], aK [Buckets][HeadDim];")
	f.Comment(shapeDoc)
	f.Comment("It computes q_i·aK[b] once for each row b that query i meets (at most min(lk, Buckets))")
	f.Comment("and adds it to q_i·k_j: O(lq·(lk + Buckets)·HeadDim), never the [lq][lk][HeadDim] tensor.")
	f.Comment(checkDoc)
	f.Func().Id("Scores").Params(jen.List(jid("dst"), jid("q"), jid("k"), jid("aK")).Index().Float32(), jen.List(jid("lq"), jid("lk"), jid("qOffset")).Int()).Block(
		jid("checkDims").Call(jlit("Scores"), jid("lq"), jid("lk"), jid("qOffset")),
		jid("checkLen").Call(jlit("Scores"), jlit("dst"), jen.Len(jid("dst")), jid("lq").Op("*").Id("lk")),
		jid("checkLen").Call(jlit("Scores"), jlit("q"), jen.Len(jid("q")), jid("lq").Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Scores"), jlit("k"), jen.Len(jid("k")), jid("lk").Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Scores"), jlit("aK"), jen.Len(jid("aK")), jid("Buckets").Op("*").Id("HeadDim")),
		jen.If(jid("lq").Op("==").Lit(0).Op("||").Id("lk").Op("==").Lit(0)).Block(jen.Return()),
		jid("kern").Op(":=").Id("active"),
		jen.Comment("qa[b−lo] = q_i·aK[b] for the rows lo…hi this query meets; bias[j] = qa[Bucket(p−j)−lo]."),
		jid("bp").Op(":=").Id("getBuf").Call(jid("min").Call(jid("lk"), jid("Buckets")).Op("+").Id("lk")),
		jen.List(jid("qa"), jid("bias")).Op(":=").List(
			jen.Parens(jen.Op("*").Id("bp")).Index(jen.Op(":").Len(jen.Op("*").Id("bp")).Op("-").Id("lk")),
			jen.Parens(jen.Op("*").Id("bp")).Index(jen.Len(jen.Op("*").Id("bp")).Op("-").Id("lk").Op(":")),
		),
		jen.For(jid("i").Op(":=").Range().Id("lq")).Block(
			jid("p").Op(":=").Id("posAt").Call(jid("qOffset"), jid("i")),
			jen.Comment("Distances run from p (key 0) down to p−(lk−1); rows lo…hi."),
			jen.List(jid("lo"), jid("hi")).Op(":=").List(jid("Bucket").Call(jid("p").Op("-").Parens(jid("lk").Op("-").Lit(1))), jid("Bucket").Call(jid("p"))),
			jen.List(jid("top"), jid("bottom")).Op(":=").Id("keySplit").Call(jid("p"), jid("lk")),
			jid("qi").Op(":=").Id("q").Index(jid("i").Op("*").Id("HeadDim"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("HeadDim")),
			jid("kern").Dot("dotRows").Call(jid("qa").Index(jen.Op(":").Id("hi").Op("-").Id("lo").Op("+").Lit(1)), jid("qi"), rows("aK", "lo", jid("hi").Op("+").Lit(1))),
			jen.Comment("Keys before top share row hi, keys from bottom on row lo; between, key j has row"),
			jen.Comment("p−j+BucketSpan: a reversed copy of qa."),
			jid("fill").Call(jid("bias").Index(jen.Op(":").Id("top")), jid("qa").Index(jid("hi").Op("-").Id("lo"))),
			jid("at").Op(":=").Id("p").Op("-").Id("lo").Op("+").Id("BucketSpan"),
			jen.For(jid("j").Op(":=").Id("top"), jid("j").Op("<").Id("bottom"), jid("j").Op("++")).Block(
				jid("bias").Index(jid("j")).Op("=").Id("qa").Index(jid("at").Op("-").Id("j")),
			),
			jid("fill").Call(jid("bias").Index(jid("bottom").Op(":")), jid("qa").Index(jlit(0))),
			jid("kern").Dot("scoresRow").Call(jid("dst").Index(jid("i").Op("*").Id("lk"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("lk")), jid("qi"), jid("k"), jid("bias"), jid("invSqrtD")),
		),
		jid("bufPool").Dot("Put").Call(jid("bp")),
	)

	// func Output(dst, weights, v, aV []float32, lq, lk, qOffset int)
	f.Comment("Output writes the attention outputs of Shaw et al. (2018), eq. 3, to dst [lq][HeadDim]:")
	f.Comment("")
	f.Comment("\tdst[i] = Σ_j weights[i][j]·(v_j + aV[Bucket(qOffset+i−j)])")
	f.Comment("")
	f.Comment("for one head: weights is [lq][lk] (the softmax of Scores, or any weights), v [lk][HeadDim],")
	f.Comment("aV [Buckets][HeadDim]; " + shapeDoc)
	f.Comment("It sums each query's weights by row, w_b = Σ_{j: Bucket(qOffset+i−j) = b} weights[i][j]")
	f.Comment("(in float64), then adds Σ_j weights[i][j]·v_j and Σ_b w_b·aV[b]: O(lq·(lk + Buckets)·HeadDim).")
	f.Comment(checkDoc)
	f.Func().Id("Output").Params(jen.List(jid("dst"), jid("weights"), jid("v"), jid("aV")).Index().Float32(), jen.List(jid("lq"), jid("lk"), jid("qOffset")).Int()).Block(
		jid("checkDims").Call(jlit("Output"), jid("lq"), jid("lk"), jid("qOffset")),
		jid("checkLen").Call(jlit("Output"), jlit("dst"), jen.Len(jid("dst")), jid("lq").Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Output"), jlit("weights"), jen.Len(jid("weights")), jid("lq").Op("*").Id("lk")),
		jid("checkLen").Call(jlit("Output"), jlit("v"), jen.Len(jid("v")), jid("lk").Op("*").Id("HeadDim")),
		jid("checkLen").Call(jlit("Output"), jlit("aV"), jen.Len(jid("aV")), jid("Buckets").Op("*").Id("HeadDim")),
		jen.If(jid("lk").Op("==").Lit(0)).Block(jen.Clear(jid("dst")), jen.Return()),
		jid("kern").Op(":=").Id("active"),
		jid("bp").Op(":=").Id("getBuf").Call(jid("min").Call(jid("lk"), jid("Buckets"))),
		jen.For(jid("i").Op(":=").Range().Id("lq")).Block(
			jid("p").Op(":=").Id("posAt").Call(jid("qOffset"), jid("i")),
			jen.List(jid("lo"), jid("hi")).Op(":=").List(jid("Bucket").Call(jid("p").Op("-").Parens(jid("lk").Op("-").Lit(1))), jid("Bucket").Call(jid("p"))),
			jen.List(jid("top"), jid("bottom")).Op(":=").Id("keySplit").Call(jid("p"), jid("lk")),
			jid("wi").Op(":=").Id("weights").Index(jid("i").Op("*").Id("lk"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("lk")),
			jid("wb").Op(":=").Parens(jen.Op("*").Id("bp")).Index(jen.Op(":").Id("hi").Op("-").Id("lo").Op("+").Lit(1)),
			jen.Comment("wb[b−lo] = Σ_{j: Bucket(p−j) = b} wi[j]: key j in [top, bottom) has row p−j+BucketSpan"),
			jen.Comment("to itself; the keys before top sum into row hi, those from bottom on into row lo."),
			jid("at").Op(":=").Id("p").Op("-").Id("lo").Op("+").Id("BucketSpan"),
			jen.For(jid("j").Op(":=").Id("top"), jid("j").Op("<").Id("bottom"), jid("j").Op("++")).Block(
				jid("wb").Index(jid("at").Op("-").Id("j")).Op("=").Id("wi").Index(jid("j")),
			),
			jen.If(jid("BucketSpan").Op("==").Lit(0)).Block(
				jen.Comment("One row: every key is clipped."),
				jid("wb").Index(jlit(0)).Op("=").Float32().Call(jid("sum64").Call(jid("wi"))),
			).Else().Block(
				jen.If(jid("top").Op(">").Lit(0)).Block(
					jid("wb").Index(jid("hi").Op("-").Id("lo")).Op("=").Float32().Call(jid("sum64").Call(jid("wi").Index(jen.Op(":").Id("top")))),
				),
				jen.If(jid("bottom").Op("<").Id("lk")).Block(
					jid("wb").Index(jlit(0)).Op("=").Float32().Call(jid("sum64").Call(jid("wi").Index(jid("bottom").Op(":")))),
				),
			),
			jid("oi").Op(":=").Id("dst").Index(jid("i").Op("*").Id("HeadDim"), jen.Parens(jid("i").Op("+").Lit(1)).Op("*").Id("HeadDim")),
			jen.Clear(jid("oi")),
			jid("kern").Dot("axpyRows").Call(jid("oi"), jid("wi"), jid("v")),
			jid("kern").Dot("axpyRows").Call(jid("oi"), jid("wb"), rows("aV", "lo", jid("hi").Op("+").Lit(1))),
		),
		jid("bufPool").Dot("Put").Call(jid("bp")),
	)
	return gocode.Render(pkg+".go", f)
}

// relArr renders (*[HeadDim]float32)(x): a slice of at least HeadDim floats
// as an array pointer, so the kernels' fixed-trip-count loops need no bounds
// checks.
func relArr(x jen.Code) *jen.Statement {
	return jen.Parens(jen.Op("*").Index(jid("HeadDim")).Float32()).Call(x)
}

// relDot emits dot and dot4, the HeadDim-long float32 dot products every
// generic relative-attention kernel uses.
func relDot(f *jen.File) {
	// func dot(a, b []float32) float32 {
	//	pa, pb := (*[HeadDim]float32)(a), (*[HeadDim]float32)(b)
	//	var s0, s1, s2, s3 float32
	//	x := 0
	//	for ; x <= HeadDim-4; x += 4 { s0 += pa[x]*pb[x]; ... }
	//	for ; x < HeadDim; x++ { s0 += pa[x]*pb[x] }
	//	return (s0 + s1) + (s2 + s3)
	// }
	xo := func(off int) *jen.Statement {
		if off == 0 {
			return jid("x")
		}
		return jid("x").Op("+").Lit(off)
	}
	ab := func(off int) *jen.Statement {
		return jid("pa").Index(xo(off)).Op("*").Id("pb").Index(xo(off))
	}
	f.Comment("dot returns Σ_x a[x]·b[x] over the first HeadDim elements of a and b, in four")
	f.Comment("float32 accumulators (the rounding error stays within HeadDim·2^−24·Σ|a_x·b_x|).")
	f.Func().Id("dot").Params(jen.List(jid("a"), jid("b")).Index().Float32()).Float32().Block(
		jen.List(jid("pa"), jid("pb")).Op(":=").List(relArr(jid("a")), relArr(jid("b"))),
		jen.Var().List(jid("s0"), jid("s1"), jid("s2"), jid("s3")).Float32(),
		jid("x").Op(":=").Lit(0),
		jen.For(jen.Empty(), jid("x").Op("<=").Id("HeadDim").Op("-").Lit(4), jid("x").Op("+=").Lit(4)).Block(
			jid("s0").Op("+=").Add(ab(0)),
			jid("s1").Op("+=").Add(ab(1)),
			jid("s2").Op("+=").Add(ab(2)),
			jid("s3").Op("+=").Add(ab(3)),
		),
		jen.For(jen.Empty(), jid("x").Op("<").Id("HeadDim"), jid("x").Op("++")).Block(
			jid("s0").Op("+=").Add(ab(0)),
		),
		jen.Return(jen.Parens(jid("s0").Op("+").Id("s1")).Op("+").Parens(jid("s2").Op("+").Id("s3"))),
	)
	// func dot4(q, b []float32) (s0, s1, s2, s3 float32) {
	//	pq := (*[HeadDim]float32)(q)
	//	b0, b1, b2, b3 := (*[HeadDim]float32)(b), (*[HeadDim]float32)(b[HeadDim:]), …
	//	for x, v := range pq { s0 += v*b0[x]; s1 += v*b1[x]; s2 += v*b2[x]; s3 += v*b3[x] }
	//	return
	// }
	bRow := func(n int) jen.Code {
		if n == 0 {
			return relArr(jid("b"))
		}
		return relArr(jid("b").Index(jen.Lit(n).Op("*").Id("HeadDim").Op(":")))
	}
	f.Comment("dot4 returns q·b_0 … q·b_3 for the four consecutive HeadDim rows of b: each element of q")
	f.Comment("is loaded once for four rows. Each sum has one float32 accumulator.")
	f.Func().Id("dot4").Params(jen.List(jid("q"), jid("b")).Index().Float32()).Params(jen.List(jid("s0"), jid("s1"), jid("s2"), jid("s3")).Float32()).Block(
		jid("pq").Op(":=").Add(relArr(jid("q"))),
		jen.List(jid("b0"), jid("b1"), jid("b2"), jid("b3")).Op(":=").List(bRow(0), bRow(1), bRow(2), bRow(3)),
		jen.For(jen.List(jid("x"), jid("v")).Op(":=").Range().Id("pq")).Block(
			jid("s0").Op("+=").Id("v").Op("*").Id("b0").Index(jid("x")),
			jid("s1").Op("+=").Id("v").Op("*").Id("b1").Index(jid("x")),
			jid("s2").Op("+=").Id("v").Op("*").Id("b2").Index(jid("x")),
			jid("s3").Op("+=").Id("v").Op("*").Id("b3").Index(jid("x")),
		),
		jen.Return(),
	)
}

// relRowLoop renders the key loop of a scoresRow kernel over len(dst) keys:
// four keys at a time through block, then one at a time through
// single.
func relRowLoop(block func() []jen.Code, single []jen.Code) []jen.Code {
	return []jen.Code{
		jid("j").Op(":=").Lit(0),
		jen.For(jen.Empty(), jid("j").Op("<=").Len(jid("dst")).Op("-").Lit(4), jid("j").Op("+=").Lit(4)).Block(block()...),
		jen.For(jen.Empty(), jid("j").Op("<").Len(jid("dst")), jid("j").Op("++")).Block(single...),
	}
}

// rpeFullGeneric emits <name>_generic.go: dotRows, scoresRow and axpyRows.
func rpeFullGeneric(c *Consts) (emit.File, error) {
	pkg := c.Spec.Name
	f := gocode.NewFile(pkg, c.Spec.File)
	f.Comment("genericKernels is the portable Go implementation, always available; the assembly")
	f.Comment("variants register theirs from the per-architecture files.")
	gk := jen.Dict{
		jid("dotRows"):   jid("dotRowsGeneric"),
		jid("scoresRow"): jid("scoresRowGeneric"),
		jid("axpyRows"):  jid("axpyRowsGeneric"),
	}
	attention.GenericKernels(gk)
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(gk)
	relDot(f)

	// func dotRowsGeneric(dst, x, rows []float32) { for r := range dst { dst[r] = dot(x, rows[r*HeadDim:]) } }
	f.Comment("dotRowsGeneric sets dst[r] = x·rows[r] for r < len(dst); rows holds len(dst) rows of")
	f.Comment("HeadDim floats, x one.")
	f.Func().Id("dotRowsGeneric").Params(jen.List(jid("dst"), jid("x"), jid("rows")).Index().Float32()).Block(
		jid("rows").Op("=").Id("rows").Index(jen.Op(":").Len(jid("dst")).Op("*").Id("HeadDim")),
		jen.For(jid("r").Op(":=").Range().Id("dst")).Block(
			jid("dst").Index(jid("r")).Op("=").Id("dot").Call(jid("x"), jid("rows").Index(jid("r").Op("*").Id("HeadDim").Op(":"))),
		),
	)

	// func scoresRowGeneric(dst, q, k, bias []float32, scale float32) {
	//	k = k[:len(dst)*HeadDim]; bias = bias[:len(dst)]
	//	for j := range dst { dst[j] = (dot(q, k[j*HeadDim:]) + bias[j]) * scale }
	// }
	f.Comment("scoresRowGeneric sets dst[j] = (q·k_j + bias[j])·scale for the len(dst) keys of k")
	f.Comment("([len(dst)][HeadDim]); len(bias) == len(dst).")
	f.Func().Id("scoresRowGeneric").Params(jen.List(jid("dst"), jid("q"), jid("k"), jid("bias")).Index().Float32(), jid("scale").Float32()).Block(
		append([]jen.Code{
			jid("k").Op("=").Id("k").Index(jen.Op(":").Len(jid("dst")).Op("*").Id("HeadDim")),
			jid("bias").Op("=").Id("bias").Index(jen.Op(":").Len(jid("dst"))),
		}, relRowLoop(func() []jen.Code {
			out := []jen.Code{
				jen.List(jid("s0"), jid("s1"), jid("s2"), jid("s3")).Op(":=").Id("dot4").Call(jid("q"), jid("k").Index(jid("j").Op("*").Id("HeadDim").Op(":"))),
			}
			for n := range 4 {
				jn := jid("j").Op("+").Lit(n)
				if n == 0 {
					jn = jid("j")
				}
				out = append(out, jid("dst").Index(jn).Op("=").Parens(jid(fmt.Sprintf("s%d", n)).Op("+").Id("bias").Index(jn.Clone())).Op("*").Id("scale"))
			}
			return out
		}, []jen.Code{
			jid("dst").Index(jid("j")).Op("=").Parens(jid("dot").Call(jid("q"), jid("k").Index(jid("j").Op("*").Id("HeadDim").Op(":"))).Op("+").Id("bias").Index(jid("j"))).Op("*").Id("scale"),
		})...)...,
	)

	// func axpyRowsGeneric(dst, w, rows []float32) — four rows per pass over dst.
	rn := func(n int) *jen.Statement {
		if n == 0 {
			return jid("r")
		}
		return jid("r").Op("+").Lit(n)
	}
	times := func(n int) *jen.Statement {
		if n == 0 {
			return jid("r").Op("*").Id("HeadDim")
		}
		return jen.Parens(rn(n)).Op("*").Id("HeadDim")
	}
	row := func(n int) jen.Code {
		return jid(fmt.Sprintf("r%d", n)).Op(":=").Add(relArr(jid("rows").Index(times(n), times(n+1))))
	}
	term := func(n int) *jen.Statement {
		return jid(fmt.Sprintf("w%d", n)).Op("*").Id(fmt.Sprintf("r%d", n)).Index(jid("x"))
	}
	// The weights are loaded before the dst loop: dst may alias w as far
	// as the compiler knows, so w[r+n] in the loop would be reloaded.
	weights := func(n int) jen.Code {
		var ws, vs []jen.Code
		for i := range n {
			ws = append(ws, jid(fmt.Sprintf("w%d", i)))
			vs = append(vs, jid("w").Index(rn(i)))
		}
		return jen.List(ws...).Op(":=").List(vs...)
	}
	f.Comment("axpyRowsGeneric adds Σ_r w[r]·rows[r] to dst (HeadDim floats); rows holds len(w) rows")
	f.Comment("of HeadDim floats. Four rows share each pass over dst.")
	f.Func().Id("axpyRowsGeneric").Params(jen.List(jid("dst"), jid("w"), jid("rows")).Index().Float32()).Block(
		jid("d").Op(":=").Add(relArr(jid("dst"))),
		jid("rows").Op("=").Id("rows").Index(jen.Op(":").Len(jid("w")).Op("*").Id("HeadDim")),
		jid("r").Op(":=").Lit(0),
		jen.For(jen.Empty(), jid("r").Op("+").Lit(4).Op("<=").Len(jid("w")), jid("r").Op("+=").Lit(4)).Block(
			row(0), row(1), row(2), row(3), weights(4),
			jen.For(jid("x").Op(":=").Range().Id("d")).Block(
				jid("d").Index(jid("x")).Op("+=").Add(term(0)).Op("+").Add(term(1)).Op("+").Add(term(2)).Op("+").Add(term(3)),
			),
		),
		jen.For(jen.Empty(), jid("r").Op("<").Len(jid("w")), jid("r").Op("++")).Block(
			row(0), weights(1),
			jen.For(jid("x").Op(":=").Range().Id("d")).Block(
				jid("d").Index(jid("x")).Op("+=").Add(term(0)),
			),
		),
	)
	return gocode.Render(pkg+"_generic.go", f)
}
