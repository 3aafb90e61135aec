package bias

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// biasFields is the kernels struct of alibi and rpe_bias packages
// (docs/internals.md, kernel ABI "alibi and rpe_bias").
var biasFields = []gocode.KernelField{
	{Name: "addRow", Type: "func(dst, src []float32)"},
	{Name: "softmaxRow", Type: "func(row, bias []float32, scale float32)"},
}

// rampField is the alibi packages' third kernel, softmaxRamp (abi.SoftmaxRamp).
var rampField = gocode.KernelField{Name: "softmaxRamp", Type: "func(row []float32, scale, nslope, t0 float32)"}

// addRampField is the alibi packages' fourth kernel, addRamp (abi.AddRamp).
var addRampField = gocode.KernelField{Name: "addRamp", Type: "func(dst []float32, nslope, t0 float64)"}

// fields returns the kernels struct of s: biasFields, and softmaxRamp and
// addRamp for alibi.
func fields(s *spec.Spec) []gocode.KernelField {
	fs := append([]gocode.KernelField(nil), biasFields...)
	if !isRPE(s) {
		fs = append(fs, rampField, addRampField)
	}
	if s.HeadDim > 0 {
		fs = append(fs, attention.Fields...)
	}
	return fs
}

// GoFiles returns the Go files of an alibi or rpe_bias package: the API
// (<name>.go), the generic kernels, the variant registry and the test.
func (c *Consts) GoFiles() ([]emit.File, error) {
	s := c.Spec
	if isRPE(s) {
		if c.NumBuckets < 1 || len(c.BucketMap) != 2*c.BucketSpan+1 {
			return nil, fmt.Errorf("golang: %s: bucket map of %d entries for span %d", s.File, len(c.BucketMap), c.BucketSpan)
		}
	} else if len(c.Slopes) != s.Heads {
		return nil, fmt.Errorf("golang: %s: %d slopes for %d heads", s.File, len(c.Slopes), s.Heads)
	}
	var files []emit.File
	for _, build := range []func(*Consts) (emit.File, error){biasAPI, biasGeneric, biasTest} {
		f, err := build(c)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	reg, err := gocode.Registry(s.Name, s.File, fields(s))
	if err != nil {
		return nil, err
	}
	files = append(files, reg)
	if s.HeadDim > 0 {
		att, err := attentionFiles(c)
		if err != nil {
			return nil, err
		}
		files = append(files, att...)
	}
	return files, nil
}

// biasAPI emits <name>.go: constants, slopes or bucket map, length checks,
// the per-call distance array D and the exported AddBias, Softmax and Bias.
func biasAPI(c *Consts) (emit.File, error) {
	s := c.Spec
	pkg := s.Name
	rpe, causal := isRPE(s), isCausal(s)
	f := gocode.NewFile(pkg, s.File)
	if rpe {
		rule := fmt.Sprintf("Buckets follow the clamp rule of Shaw et al. (2018) with r_max = %d.", s.RMax)
		if s.Buckets != nil {
			rule = fmt.Sprintf("Buckets follow T5's rule with num = %d, max_distance = %d,\nbidirectional = %v.",
				s.Buckets.Num, s.Buckets.MaxDistance, s.Buckets.Bidirectional)
		}
		gocode.PackageDoc(f, fmt.Sprintf("Package %s adds learned relative-position attention biases to attention\n"+
			"scores laid out [Heads][lq][lk]: query i sits at position qOffset+i, key j at position j,\n"+
			"and the bias of head h is table[h][Bucket(qOffset+i−j)].\n%s\n\n%s", pkg, rule, posDoc))
	} else {
		mask := "Keys after the query are not masked."
		if causal {
			mask = "Keys after the query are masked (causal attention)."
		}
		gocode.PackageDoc(f, fmt.Sprintf("Package %s adds ALiBi attention biases (Press et al., \"Train Short, Test\n"+
			"Long\", 2022) to attention scores laid out [Heads][lq][lk]: query i sits at position\n"+
			"qOffset+i, key j at position j, and the bias of head h is −slope_h·|qOffset+i−j|.\n%s\n\n%s", pkg, mask, posDoc))
	}

	f.Comment("Heads is the number of attention heads.")
	f.Const().Id("Heads").Op("=").Lit(s.Heads)
	if rpe {
		biasBucketDecls(f, c)
	} else {
		f.Comment("Causal reports whether keys after the query are masked: AddBias writes −Inf and")
		f.Comment("Softmax writes 0 there. Bias is never masked.")
		f.Const().Id("Causal").Op("=").Lit(causal)

		// var slopes = [Heads]float64{...}
		if len(s.Slopes) > 0 {
			f.Comment("slopes holds slope_h per head, given explicitly by the spec.")
		} else {
			f.Comment(fmt.Sprintf("slopes holds slope_h per head: the ALiBi paper's get_slopes for %d heads with", s.Heads))
			f.Comment(fmt.Sprintf("max_bias %v (a non-power-of-two count n takes the slopes of c = 2^⌊log2 n⌋ heads,", s.MaxBias))
			f.Comment("then every other slope of 2c heads).")
		}
		f.Var().Id("slopes").Op("=").Index(jen.Id("Heads")).Float64().Add(gocode.FloatList(c.Slopes))

		// func Slopes() []float64 { s := slopes; return s[:] }
		f.Comment("Slopes returns a copy of the per-head slopes: the bias of head h for query")
		f.Comment("position p and key position q is −Slopes()[h]·|p−q|.")
		f.Func().Id("Slopes").Params().Index().Float64().Block(
			jen.Id("s").Op(":=").Id("slopes"),
			jen.Return(jen.Id("s").Index(jen.Op(":"))),
		)
	}

	biasChecks(f, pkg, rpe)
	biasDistance(f, c)
	biasEachRow(f, rpe, causal)
	biasExported(f, pkg, rpe, causal)
	biasPositions(f, pkg, rpe, causal)
	return gocode.Render(pkg+".go", f)
}

// posDoc is the package doc's paragraph on the position forms.
const posDoc = "The position forms SoftmaxPos, AddBiasPos and BiasPos take explicit positions instead:\n" +
	"one int32 per query row (qpos, ≥ 0) and per key (kpos, in any order; negative for a\n" +
	"padding key, which is masked), for varlen batches, padded keys and paged KV caches, and\n" +
	"the heads [h0, h0+nh) of a tensor-parallel shard; their buffers are [nh][len(qpos)][len(kpos)].\n" +
	"Decode calls (a few query rows) and keys forming one run build no per-call bias table."

// biasBucketDecls emits Buckets, BucketSpan and Bucket (and the bucket map
// for T5).
func biasBucketDecls(f *jen.File, c *Consts) {
	s := c.Spec
	f.Comment("Buckets is the number of learned biases per head: table is [Heads][Buckets].")
	f.Const().Id("Buckets").Op("=").Lit(c.NumBuckets)
	f.Comment("BucketSpan is the largest |rel| with its own map entry: every rel beyond ±BucketSpan")
	f.Comment("shares the bucket of ±BucketSpan.")
	f.Const().Id("BucketSpan").Op("=").Lit(c.BucketSpan)

	// clamp := func(rel int) { if rel > BucketSpan {...} else if rel < -BucketSpan {...} }
	clamp := jen.If(jen.Id("rel").Op(">").Id("BucketSpan")).Block(
		jen.Id("rel").Op("=").Id("BucketSpan"),
	).Else().If(jen.Id("rel").Op("<").Op("-").Id("BucketSpan")).Block(
		jen.Id("rel").Op("=").Op("-").Id("BucketSpan"),
	)
	if s.Buckets == nil {
		// func Bucket(rel int) int { clamp; return rel + BucketSpan }
		f.Comment("Bucket returns the table column of rel = query position − key position: Shaw et al.'s")
		f.Comment("clip rule clamp(rel, −(r_max−1), r_max−1) + r_max−1. It accepts any int.")
		f.Func().Id("Bucket").Params(jen.Id("rel").Int()).Int().Block(
			clamp,
			jen.Return(jen.Id("rel").Op("+").Id("BucketSpan")),
		)
		return
	}
	// var bucketMap = [2*BucketSpan + 1]uint16{...}
	f.Comment("bucketMap[rel+BucketSpan] is the bucket of rel for |rel| ≤ BucketSpan: Hugging Face")
	f.Comment("T5Attention._relative_position_bucket(relative_position = −rel) evaluated in float64.")
	f.Var().Id("bucketMap").Op("=").Index(jen.Lit(2).Op("*").Id("BucketSpan").Op("+").Lit(1)).Int32().
		CustomFunc(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, func(g *jen.Group) {
			// 16 entries per line.
			for i := 0; i < len(c.BucketMap); i += 16 {
				var row []jen.Code
				for _, b := range c.BucketMap[i:min(i+16, len(c.BucketMap))] {
					row = append(row, jen.Lit(b))
				}
				g.List(row...)
			}
		})
	// func Bucket(rel int) int { clamp; return int(bucketMap[rel+BucketSpan]) }
	f.Comment("Bucket returns the table column of rel = query position − key position under T5's")
	f.Comment("rule (Raffel et al. 2020; Hugging Face T5Attention._relative_position_bucket with")
	f.Comment("relative_position = key − query = −rel): exact distances below max_exact, then")
	f.Comment("logarithmically wider buckets up to max_distance, the last bucket beyond. It accepts any int.")
	f.Func().Id("Bucket").Params(jen.Id("rel").Int()).Int().Block(
		clamp,
		jen.Return(jen.Int().Call(jen.Id("bucketMap").Index(jen.Id("rel").Op("+").Id("BucketSpan")))),
	)
}

// biasChecks emits checkShape (and checkTable for rpe_bias).
func biasChecks(f *jen.File, pkg string, rpe bool) {
	// func checkShape(fn, arg string, n, lq, lk, qOffset int) {
	//	if lq < 0 || lk < 0 { panic(...) }
	//	if qOffset < 0 { panic(...) }
	//	if (lk != 0 && lq > math.MaxInt/Heads/lk) || n != Heads*lq*lk { panic(...) }
	// }
	f.Comment("checkShape panics unless lq, lk and qOffset are non-negative and n, the length of the")
	f.Comment("argument arg of function fn, is Heads·lq·lk.")
	f.Func().Id("checkShape").Params(jen.List(jen.Id("fn"), jen.Id("arg")).String(), jen.List(jen.Id("n"), jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset")).Int()).Block(
		jen.If(jen.Id("lq").Op("<").Lit(0).Op("||").Id("lk").Op("<").Lit(0)).Block(
			gocode.Panicf(pkg, "%s: negative length: lq = %d, lk = %d", jen.Id("fn"), jen.Id("lq"), jen.Id("lk")),
		),
		jen.If(jen.Id("qOffset").Op("<").Lit(0)).Block(
			gocode.Panicf(pkg, "%s: negative qOffset %d (the position of query 0)", jen.Id("fn"), jen.Id("qOffset")),
		),
		jen.If(jen.Parens(jen.Id("lk").Op("!=").Lit(0).Op("&&").Id("lq").Op(">").Qual("math", "MaxInt").Op("/").Id("Heads").Op("/").Id("lk")).Op("||").
			Id("n").Op("!=").Id("Heads").Op("*").Id("lq").Op("*").Id("lk")).Block(
			gocode.Panicf(pkg, "%s: len(%s) = %d, want Heads·lq·lk = %d·%d·%d",
				jen.Id("fn"), jen.Id("arg"), jen.Id("n"), jen.Id("Heads"), jen.Id("lq"), jen.Id("lk")),
		),
	)
	if !rpe {
		return
	}
	// func checkTable(fn string, table []float32) {
	//	if len(table) != Heads*Buckets { panic(...) }
	// }
	f.Comment("checkTable panics unless table holds Heads·Buckets values.")
	f.Func().Id("checkTable").Params(jen.Id("fn").String(), jen.Id("table").Index().Float32()).Block(
		jen.If(jen.Len(jen.Id("table")).Op("!=").Id("Heads").Op("*").Id("Buckets")).Block(
			gocode.Panicf(pkg, "%s: len(table) = %d, want Heads·Buckets = %d·%d",
				jen.Id("fn"), jen.Len(jen.Id("table")), jen.Id("Heads"), jen.Id("Buckets")),
		),
	)
}

// biasDistance emits the D buffer pool and fillD.
func biasDistance(f *jen.File, c *Consts) {
	rpe := isRPE(c.Spec)
	// var dPool sync.Pool
	// func getD(n int) *[]float32 {
	//	if p, ok := dPool.Get().(*[]float32); ok && cap(*p) >= n { *p = (*p)[:n]; return p }
	//	d := make([]float32, n)
	//	return &d
	// }
	f.Comment("dPool recycles the per-call distance buffers D.")
	f.Var().Id("dPool").Qual("sync", "Pool")
	f.Comment("getD returns a buffer of n floats from dPool (return it with dPool.Put).")
	f.Func().Id("getD").Params(jen.Id("n").Int()).Op("*").Index().Float32().Block(
		jen.If(
			jen.List(jen.Id("p"), jen.Id("ok")).Op(":=").Id("dPool").Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
			jen.Id("ok").Op("&&").Cap(jen.Op("*").Id("p")).Op(">=").Id("n"),
		).Block(
			jen.Op("*").Id("p").Op("=").Parens(jen.Op("*").Id("p")).Index(jen.Op(":").Id("n")),
			jen.Return(jen.Id("p")),
		),
		jen.Id("d").Op(":=").Make(jen.Index().Float32(), jen.Id("n")),
		jen.Return(jen.Op("&").Id("d")),
	)

	if !rpe {
		// func fillD(d []float32, h, lq, qOffset int) {
		//	s := slopes[h]
		//	top := float64(qOffset) + float64(lq-1)
		//	for m := range d { d[m] = float32(-s * math.Abs(top-float64(m))) }
		// }
		f.Comment("fillD writes head h's bias for every distance a call meets: d[m] is the bias of")
		f.Comment("rel = qOffset+lq−1−m, −slope·|rel| in float64 rounded to float32. The distance is")
		f.Comment("formed in float64, so no qOffset overflows.")
		f.Func().Id("fillD").Params(jen.Id("d").Index().Float32(), jen.List(jen.Id("h"), jen.Id("lq"), jen.Id("qOffset")).Int()).Block(
			jen.Id("s").Op(":=").Id("slopes").Index(jen.Id("h")),
			jen.Id("top").Op(":=").Float64().Call(jen.Id("qOffset")).Op("+").Float64().Call(jen.Id("lq").Op("-").Lit(1)),
			jen.For(jen.Id("m").Op(":=").Range().Id("d")).Block(
				jen.Id("d").Index(jen.Id("m")).Op("=").Float32().Call(
					jen.Op("-").Id("s").Op("*").Qual("math", "Abs").Call(jen.Id("top").Op("-").Float64().Call(jen.Id("m"))),
				),
			),
		)
		return
	}
	// func fillD(d, row []float32, lq, qOffset int) { fillRel(d, row, relAt(qOffset, lq-1)) }
	f.Comment("fillD writes one head's bias for every distance a call meets: d[m] is")
	f.Comment("row[Bucket(rel)] for rel = qOffset+lq−1−m, where row is the head's table row.")
	f.Func().Id("fillD").Params(jen.List(jen.Id("d"), jen.Id("row")).Index().Float32(), jen.List(jen.Id("lq"), jen.Id("qOffset")).Int()).Block(
		jen.Id("fillRel").Call(jen.Id("d"), jen.Id("row"), jen.Id("relAt").Call(jen.Id("qOffset"), jen.Id("lq").Op("-").Lit(1))),
	)
	// func fillRel(d, row []float32, top int) {
	//	row = row[:Buckets]
	//	hi := 0
	//	if top >= BucketSpan { hi = min(len(d), top-BucketSpan+1) }
	//	fillConst(d[:hi], row[Bucket(BucketSpan)])
	//	m := hi
	//	for ; m < len(d) && top-m > -BucketSpan; m++ { d[m] = row[Bucket(top-m)] }
	//	fillConst(d[m:], row[Bucket(-BucketSpan)])
	// }
	f.Comment("fillRel sets d[m] = row[Bucket(top−m)], row a head's table row; top−m must not")
	f.Comment("overflow. Every rel ≥ BucketSpan shares one bucket and every rel ≤ −BucketSpan another,")
	f.Comment("so only the at most 2·BucketSpan−1 distances in between are looked up; the two constant")
	f.Comment("runs are filled by fillConst at copy speed (decode, lk ≫ BucketSpan, is mostly runs).")
	f.Func().Id("fillRel").Params(jen.List(jen.Id("d"), jen.Id("row")).Index().Float32(), jen.Id("top").Int()).Block(
		jen.Id("row").Op("=").Id("row").Index(jen.Op(":").Id("Buckets")),
		jen.Id("hi").Op(":=").Lit(0),
		jen.If(jen.Id("top").Op(">=").Id("BucketSpan")).Block(
			jen.Id("hi").Op("=").Min(jen.Len(jen.Id("d")), jen.Id("top").Op("-").Id("BucketSpan").Op("+").Lit(1)),
		),
		jen.Id("fillConst").Call(jen.Id("d").Index(jen.Op(":").Id("hi")), jen.Id("row").Index(jen.Id("Bucket").Call(jen.Id("BucketSpan")))),
		jen.Id("m").Op(":=").Id("hi"),
		jen.For(jen.Op(";").Id("m").Op("<").Len(jen.Id("d")).Op("&&").Id("top").Op("-").Id("m").Op(">").Op("-").Id("BucketSpan"), jen.Id("m").Op("++")).Block(
			jen.Id("d").Index(jen.Id("m")).Op("=").Id("row").Index(jen.Id("Bucket").Call(jen.Id("top").Op("-").Id("m"))),
		),
		jen.Id("fillConst").Call(jen.Id("d").Index(jen.Id("m").Op(":")), jen.Id("row").Index(jen.Id("Bucket").Call(jen.Op("-").Id("BucketSpan")))),
	)
	// func fillConst(d []float32, v float32) {
	//	if len(d) == 0 { return }
	//	d[0] = v
	//	for n := 1; n < len(d); n *= 2 { copy(d[n:], d[:n]) }
	// }
	f.Comment("fillConst sets every element of d to v by doubling copies (memmove speed).")
	f.Func().Id("fillConst").Params(jen.Id("d").Index().Float32(), jen.Id("v").Float32()).Block(
		jen.If(jen.Len(jen.Id("d")).Op("==").Lit(0)).Block(jen.Return()),
		jen.Id("d").Index(jen.Lit(0)).Op("=").Id("v"),
		jen.For(jen.Id("n").Op(":=").Lit(1), jen.Id("n").Op("<").Len(jen.Id("d")), jen.Id("n").Op("*=").Lit(2)).Block(
			jen.Copy(jen.Id("d").Index(jen.Id("n").Op(":")), jen.Id("d").Index(jen.Op(":").Id("n"))),
		),
	)
	// func relAt(qOffset, k int) int {
	//	if k > 0 && qOffset > math.MaxInt-k { return math.MaxInt }
	//	return qOffset + k
	// }
	f.Comment("relAt returns qOffset+k saturated at math.MaxInt (Bucket is constant that far out);")
	f.Comment("qOffset ≥ 0 and k > math.MinInt, so the sum cannot underflow.")
	f.Func().Id("relAt").Params(jen.List(jen.Id("qOffset"), jen.Id("k")).Int()).Int().Block(
		jen.If(jen.Id("k").Op(">").Lit(0).Op("&&").Id("qOffset").Op(">").Qual("math", "MaxInt").Op("-").Id("k")).Block(
			jen.Return(jen.Qual("math", "MaxInt")),
		),
		jen.Return(jen.Id("qOffset").Op("+").Id("k")),
	)
}

// biasGeneric emits <name>_generic.go: the portable addRow and softmaxRow.
func biasGeneric(c *Consts) (emit.File, error) {
	pkg := c.Spec.Name
	f := gocode.NewFile(pkg, c.Spec.File)

	// var genericKernels = kernels{addRow: addRowGeneric, softmaxRow: softmaxRowGeneric}
	f.Comment("genericKernels is the portable Go implementation, always available.")
	kd := jen.Dict{
		jen.Id("addRow"):     jen.Id("addRowGeneric"),
		jen.Id("softmaxRow"): jen.Id("softmaxRowGeneric"),
	}
	if !isRPE(c.Spec) {
		kd[jen.Id("softmaxRamp")] = jen.Id("softmaxRampGeneric")
		kd[jen.Id("addRamp")] = jen.Id("addRampGeneric")
	}
	if c.Spec.HeadDim > 0 {
		attention.GenericKernels(kd)
	}
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(kd)

	// func addRowGeneric(dst, src []float32) {
	//	src = src[:len(dst)]
	//	for j, v := range src { dst[j] += v }
	// }
	f.Comment("addRowGeneric adds src to dst element by element; len(src) == len(dst).")
	f.Func().Id("addRowGeneric").Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Float32()).Block(
		jen.Id("src").Op("=").Id("src").Index(jen.Op(":").Len(jen.Id("dst"))),
		jen.For(jen.List(jen.Id("j"), jen.Id("v")).Op(":=").Range().Id("src")).Block(
			jen.Id("dst").Index(jen.Id("j")).Op("+=").Id("v"),
		),
	)

	// func softmaxRowGeneric(row, bias []float32, scale float32) {
	//	bias = bias[:len(row)]
	//	sc := float64(scale)
	//	mx := math.Inf(-1)
	//	for j, v := range row { mx = max(mx, sc*float64(v)+float64(bias[j])) }
	//	var sum float64
	//	for j, v := range row {
	//		e := expNeg(sc*float64(v) + float64(bias[j]) - mx)
	//		row[j] = float32(e)
	//		sum += e
	//	}
	//	inv := float32(1 / sum)
	//	for j := range row { row[j] *= inv }
	// }
	logit := func() *jen.Statement {
		return jen.Id("sc").Op("*").Float64().Call(jen.Id("v")).Op("+").Float64().Call(jen.Id("bias").Index(jen.Id("j")))
	}
	f.Comment("softmaxRowGeneric sets row[j] = softmax_j(scale·row[j] + bias[j]); len(bias) == len(row) ≥ 1")
	f.Comment("and the biases are finite. The logits are formed in float64 (one rounding fewer than")
	f.Comment("float32 arithmetic), the row maximum is subtracted before exponentiation and the")
	f.Comment("normalizer is summed in float64.")
	f.Func().Id("softmaxRowGeneric").Params(jen.List(jen.Id("row"), jen.Id("bias")).Index().Float32(), jen.Id("scale").Float32()).Block(
		jen.Id("bias").Op("=").Id("bias").Index(jen.Op(":").Len(jen.Id("row"))),
		jen.Id("sc").Op(":=").Float64().Call(jen.Id("scale")),
		jen.Id("mx").Op(":=").Qual("math", "Inf").Call(jen.Lit(-1)),
		jen.For(jen.List(jen.Id("j"), jen.Id("v")).Op(":=").Range().Id("row")).Block(
			jen.Id("mx").Op("=").Max(jen.Id("mx"), logit()),
		),
		jen.Var().Id("sum").Float64(),
		jen.For(jen.List(jen.Id("j"), jen.Id("v")).Op(":=").Range().Id("row")).Block(
			jen.Id("e").Op(":=").Id("expNeg").Call(logit().Op("-").Id("mx")),
			jen.Id("row").Index(jen.Id("j")).Op("=").Float32().Call(jen.Id("e")),
			jen.Id("sum").Op("+=").Id("e"),
		),
		jen.Id("inv").Op(":=").Float32().Call(jen.Lit(1).Op("/").Id("sum")),
		jen.For(jen.Id("j").Op(":=").Range().Id("row")).Block(
			jen.Id("row").Index(jen.Id("j")).Op("*=").Id("inv"),
		),
	)
	if !isRPE(c.Spec) {
		biasRampGeneric(f)
		biasAddRampGeneric(f)
	}
	biasExpNeg(f)
	return gocode.Render(pkg+"_generic.go", f)
}

// biasExpNeg emits expNeg, e^x for x ≤ 0: Cody–Waite reduction
// x = k·ln2 + r, |r| ≤ ln2/2, with ln2 split into a high part whose product
// with k is exact and a low part, then e^r by its Taylor series through r^8
// in Horner form (truncation ≤ (ln2/2)^9/9! < 2.1e-10 relative, far below
// float32's 6e-8) and the 2^k scaling written into the exponent bits.
// Results below float32's smallest subnormal (x < −104) are 0.
func biasExpNeg(f *jen.File) {
	// Taylor coefficients 1/n!, n = 8 … 2 (Horner from the highest).
	const degree = 8
	var coeffs []jen.Code
	fact := 1.0
	inv := make([]float64, degree+1)
	for n := 1; n <= degree; n++ {
		fact *= float64(n)
		inv[n] = 1 / fact
	}
	// p := 1/8!; p = p*r + 1/7!; … ; p = p*r + 1/2!
	coeffs = append(coeffs, jen.Id("p").Op(":=").Lit(inv[degree]))
	for n := degree - 1; n >= 2; n-- {
		coeffs = append(coeffs, jen.Id("p").Op("=").Id("p").Op("*").Id("r").Op("+").Lit(inv[n]))
	}
	// func expNeg(x float64) float64 {
	//	if x < -104 { return 0 }
	//	k := math.Round(x * math.Log2E)
	//	r := (x - k*ln2Hi) - k*ln2Lo
	//	p := ...; p = p*r + ...
	//	e := 1 + r + r*r*p
	//	return e * math.Float64frombits(uint64(int64(k)+1023)<<52)
	// }
	f.Comment("ln2Hi + ln2Lo = ln 2 (fdlibm's split): ln2Hi ends in 32 zero bits, so k·ln2Hi is exact")
	f.Comment("for every k expNeg meets.")
	f.Const().Defs(
		jen.Id("ln2Hi").Op("=").Lit(6.93147180369123816490e-01),
		jen.Id("ln2Lo").Op("=").Lit(1.90821492927058770002e-10),
	)
	f.Comment("expNeg returns e^x for x ≤ 0 with a relative error below 3e-10 (far below float32's")
	f.Comment("rounding), faster than math.Exp: x = k·ln2 + r with |r| ≤ ln2/2 (Cody–Waite, ln2 in")
	f.Comment("two parts), e^r from its Taylor series through r^8 in Horner form, 2^k written into the")
	f.Comment("exponent bits. Inputs below")
	f.Comment("−104 give 0: e^−104 is under float32's smallest subnormal.")
	f.Func().Id("expNeg").Params(jen.Id("x").Float64()).Float64().Block(append(append([]jen.Code{
		jen.If(jen.Op("!").Parens(jen.Id("x").Op(">=").Lit(-104))).Block(
			jen.Comment("also NaN: e^NaN is NaN"),
			jen.If(jen.Id("x").Op("!=").Id("x")).Block(jen.Return(jen.Id("x"))),
			jen.Return(jen.Lit(0.0)),
		),
		jen.Id("k").Op(":=").Qual("math", "Round").Call(jen.Id("x").Op("*").Qual("math", "Log2E")),
		jen.Id("r").Op(":=").Parens(jen.Id("x").Op("-").Id("k").Op("*").Id("ln2Hi")).Op("-").Id("k").Op("*").Id("ln2Lo"),
	}, coeffs...),
		jen.Id("e").Op(":=").Lit(1).Op("+").Id("r").Op("+").Id("r").Op("*").Id("r").Op("*").Id("p"),
		jen.Return(jen.Id("e").Op("*").Qual("math", "Float64frombits").Call(
			jen.Uint64().Call(jen.Int64().Call(jen.Id("k")).Op("+").Lit(1023)).Op("<<").Lit(52),
		)),
	)...)
}
