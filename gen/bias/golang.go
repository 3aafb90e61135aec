package bias

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
)

// biasFields is the kernels struct of alibi and rpe_bias packages
// (docs/internals.md, kernel ABI "alibi and rpe_bias").
var biasFields = []gocode.KernelField{
	{Name: "addRow", Type: "func(dst, src []float32)"},
	{Name: "softmaxRow", Type: "func(row, bias []float32, scale float32)"},
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
	reg, err := gocode.Registry(s.Name, s.File, biasFields)
	if err != nil {
		return nil, err
	}
	return append(files, reg), nil
}

// biasAPI emits <name>.go: constants, slopes or bucket map, length checks,
// the per-call distance array D and the exported AddBias, Softmax and Bias.
func biasAPI(c *Consts) (emit.File, error) {
	s := c.Spec
	pkg := s.Name
	rpe, causal := isRPE(s), isCausal(s)
	f := gocode.NewFile(pkg, s.File)
	if rpe {
		rule := fmt.Sprintf("Buckets follow the clamp rule of seed 000's gather_biases with r_max = %d.", s.RMax)
		if s.Buckets != nil {
			rule = fmt.Sprintf("Buckets follow T5's rule with num = %d, max_distance = %d,\nbidirectional = %v.",
				s.Buckets.Num, s.Buckets.MaxDistance, s.Buckets.Bidirectional)
		}
		gocode.PackageDoc(f, fmt.Sprintf("Package %s adds learned relative-position attention biases to attention\n"+
			"scores laid out [Heads][lq][lk]: query i sits at position qOffset+i, key j at position j,\n"+
			"and the bias of head h is table[h][Bucket(qOffset+i−j)].\n%s", pkg, rule))
	} else {
		mask := "Keys after the query are not masked."
		if causal {
			mask = "Keys after the query are masked (causal attention)."
		}
		gocode.PackageDoc(f, fmt.Sprintf("Package %s adds ALiBi attention biases (Press et al., \"Train Short, Test\n"+
			"Long\", 2022) to attention scores laid out [Heads][lq][lk]: query i sits at position\n"+
			"qOffset+i, key j at position j, and the bias of head h is −slope_h·|qOffset+i−j|.\n%s", pkg, mask))
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
	return gocode.Render(pkg+".go", f)
}

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
		f.Comment("Bucket returns the table column of rel = query position − key position: seed 000's")
		f.Comment("gather_biases rule clamp(rel, −(r_max−1), r_max−1) + r_max−1. It accepts any int.")
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
	// func fillD(d, row []float32, lq, qOffset int) {
	//	k := lq - 1
	//	for m := range d { d[m] = row[Bucket(relAt(qOffset, k-m))] }
	// }
	f.Comment("fillD writes one head's bias for every distance a call meets: d[m] is")
	f.Comment("row[Bucket(rel)] for rel = qOffset+lq−1−m, where row is the head's table row.")
	f.Func().Id("fillD").Params(jen.List(jen.Id("d"), jen.Id("row")).Index().Float32(), jen.List(jen.Id("lq"), jen.Id("qOffset")).Int()).Block(
		jen.Id("row").Op("=").Id("row").Index(jen.Op(":").Id("Buckets")),
		jen.Id("k").Op(":=").Id("lq").Op("-").Lit(1),
		jen.For(jen.Id("m").Op(":=").Range().Id("d")).Block(
			jen.Id("d").Index(jen.Id("m")).Op("=").Id("row").Index(
				jen.Id("Bucket").Call(jen.Id("relAt").Call(jen.Id("qOffset"), jen.Id("k").Op("-").Id("m"))),
			),
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

// biasEachRow emits eachRow (and validKeys for causal ALiBi, fillE for
// ALiBi): the loop every exported function shares.
func biasEachRow(f *jen.File, rpe, causal bool) {
	params := []jen.Code{jen.List(jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset")).Int()}
	fill := jen.Id("fillD").Call(jen.Id("d"), jen.Id("h"), jen.Id("lq"), jen.Id("qOffset"))
	if rpe {
		params = append(params, jen.Id("table").Index().Float32())
		fill = jen.Id("fillD").Call(jen.Id("d"), jen.Id("table").Index(jen.Id("h").Op("*").Id("Buckets").Op(":")), jen.Id("lq"), jen.Id("qOffset"))
	} else {
		params = append(params, jen.Id("shifted").Bool())
	}
	params = append(params, jen.Id("fn").Func().Params(jen.List(jen.Id("off"), jen.Id("valid")).Int(), jen.Id("bias").Index().Float32()))
	valid := jen.Id("valid").Op(":=").Id("lk")
	if causal {
		valid = jen.Id("valid").Op(":=").Id("validKeys").Call(jen.Id("lk"), jen.Id("qOffset"), jen.Id("i"))
		// func validKeys(lk, qOffset, i int) int {
		//	if qOffset >= lk-1-i { return lk }
		//	return qOffset + i + 1
		// }
		f.Comment("validKeys is the number of keys query i (position qOffset+i) may attend to under the")
		f.Comment("causal mask, min(lk, qOffset+i+1), computed without overflow.")
		f.Func().Id("validKeys").Params(jen.List(jen.Id("lk"), jen.Id("qOffset"), jen.Id("i")).Int()).Int().Block(
			jen.If(jen.Id("qOffset").Op(">=").Id("lk").Op("-").Lit(1).Op("-").Id("i")).Block(jen.Return(jen.Id("lk"))),
			jen.Return(jen.Id("qOffset").Op("+").Id("i").Op("+").Lit(1)),
		)
	}
	bias := jen.Id("b").Op(":=").Id("d").Index(jen.Id("lq").Op("-").Lit(1).Op("-").Id("i"), jen.Id("lq").Op("-").Lit(1).Op("-").Id("i").Op("+").Id("lk"))
	bufLen := jen.Id("lq").Op("+").Id("lk").Op("-").Lit(1)
	dSlice := jen.Id("d").Op(":=").Op("*").Id("dp")
	var fillE, useE jen.Code = jen.Null(), jen.Null()
	if !rpe {
		// func fillE(e []float32, h int) { s := slopes[h]; n := float64(len(e)-1); for j := range e { e[j] = float32(-s * (n - float64(j))) } }
		f.Comment("fillE writes e[j] = −slope_h·(lk−1−j), lk = len(e): the bias of a row whose query")
		f.Comment("position p is at least lk−1, shifted by slope_h·(p−lk+1). Softmax is invariant under")
		f.Comment("that per-row shift, and the shifted values stay small where the probability mass")
		f.Comment("is, so rounding them to float32 costs nothing even when p is in the millions.")
		f.Func().Id("fillE").Params(jen.Id("e").Index().Float32(), jen.Id("h").Int()).Block(
			jen.Id("s").Op(":=").Id("slopes").Index(jen.Id("h")),
			jen.Id("n").Op(":=").Float64().Call(jen.Len(jen.Id("e")).Op("-").Lit(1)),
			jen.For(jen.Id("j").Op(":=").Range().Id("e")).Block(
				jen.Id("e").Index(jen.Id("j")).Op("=").Float32().Call(jen.Op("-").Id("s").Op("*").Parens(jen.Id("n").Op("-").Float64().Call(jen.Id("j")))),
			),
		)
		bufLen = jen.Id("lq").Op("+").Lit(2).Op("*").Id("lk").Op("-").Lit(1)
		// d, e := (*dp)[:lq+lk-1], (*dp)[lq+lk-1:]
		dSlice = jen.List(jen.Id("d"), jen.Id("e")).Op(":=").List(
			jen.Parens(jen.Op("*").Id("dp")).Index(jen.Op(":").Id("lq").Op("+").Id("lk").Op("-").Lit(1)),
			jen.Parens(jen.Op("*").Id("dp")).Index(jen.Id("lq").Op("+").Id("lk").Op("-").Lit(1).Op(":")),
		)
		fillE = jen.If(jen.Id("shifted")).Block(jen.Id("fillE").Call(jen.Id("e"), jen.Id("h")))
		// if shifted && qOffset >= lk-1-i { b = e }
		useE = jen.If(jen.Id("shifted").Op("&&").Id("qOffset").Op(">=").Id("lk").Op("-").Lit(1).Op("-").Id("i")).Block(
			jen.Id("b").Op("=").Id("e"),
		)
	}
	// func eachRow(lq, lk, qOffset int, [table []float32 | shifted bool,] fn func(off, valid int, bias []float32)) {
	//	if lq == 0 || lk == 0 { return }
	//	dp := getD(lq + lk - 1)                 // alibi: lq + 2*lk - 1, D then E
	//	d := *dp                                // alibi: d, e := ...
	//	for h := range Heads {
	//		fillD(d, ...)
	//		[if shifted { fillE(e, h) }]
	//		for i := range lq {
	//			valid := lk // or validKeys(lk, qOffset, i)
	//			b := d[lq-1-i : lq-1-i+lk]
	//			[if shifted && qOffset >= lk-1-i { b = e }]
	//			fn((h*lq+i)*lk, valid, b)
	//		}
	//	}
	//	dPool.Put(dp)
	// }
	f.Comment("eachRow calls fn for every row (head h, query i) of a [Heads][lq][lk] buffer with the")
	f.Comment("row's offset, its number of unmasked keys and its bias D[lq−1−i : lq−1−i+lk]")
	f.Comment("(docs/internals.md): D is built once per head from the distances the call meets.")
	if !rpe {
		f.Comment("With shifted (Softmax only), rows whose query position is at least lk−1 get the")
		f.Comment("shifted bias E of fillE instead: the same softmax, without float32 rounding of")
		f.Comment("large distances.")
	}
	f.Func().Id("eachRow").Params(params...).Block(
		jen.If(jen.Id("lq").Op("==").Lit(0).Op("||").Id("lk").Op("==").Lit(0)).Block(jen.Return()),
		jen.Id("dp").Op(":=").Id("getD").Call(bufLen),
		dSlice,
		jen.For(jen.Id("h").Op(":=").Range().Id("Heads")).Block(
			fill,
			fillE,
			jen.For(jen.Id("i").Op(":=").Range().Id("lq")).Block(
				valid,
				bias,
				useE,
				jen.Id("fn").Call(
					jen.Parens(jen.Id("h").Op("*").Id("lq").Op("+").Id("i")).Op("*").Id("lk"),
					jen.Id("valid"),
					jen.Id("b"),
				),
			),
		),
		jen.Id("dPool").Dot("Put").Call(jen.Id("dp")),
	)
}

// biasExported emits AddBias, Softmax and Bias.
func biasExported(f *jen.File, pkg string, rpe, causal bool) {
	// Parameter lists and the calls that thread the table through.
	sig := func(buf string, extra ...jen.Code) []jen.Code {
		p := []jen.Code{jen.Id(buf).Index().Float32()}
		if rpe {
			p = append(p, jen.Id("table").Index().Float32())
		}
		p = append(p, jen.List(jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset")).Int())
		return append(p, extra...)
	}
	checks := func(fn, buf string) []jen.Code {
		cs := []jen.Code{jen.Id("checkShape").Call(jen.Lit(fn), jen.Lit(buf), jen.Len(jen.Id(buf)), jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset"))}
		if rpe {
			cs = append(cs, jen.Id("checkTable").Call(jen.Lit(fn), jen.Id("table")))
		}
		return cs
	}
	each := func(shifted bool, body ...jen.Code) jen.Code {
		args := []jen.Code{jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset")}
		if rpe {
			args = append(args, jen.Id("table"))
		} else {
			args = append(args, jen.Lit(shifted))
		}
		args = append(args, jen.Func().Params(jen.List(jen.Id("off"), jen.Id("valid")).Int(), jen.Id("bias").Index().Float32()).Block(body...))
		return jen.Id("eachRow").Call(args...)
	}
	row := func(buf string) jen.Code {
		return jen.Id("row").Op(":=").Id(buf).Index(jen.Id("off"), jen.Id("off").Op("+").Id("lk"))
	}
	biasDoc := "the bias of head h"
	tableDoc := ""
	if rpe {
		biasDoc = "table[h][Bucket(qOffset+i−j)]"
		tableDoc = " table is [Heads][Buckets]."
	}
	common := "scores is [Heads][lq][lk]; query i sits at position qOffset+i, key j at position j." + tableDoc
	checkDoc := "It panics, before writing anything, on a negative lq, lk or qOffset or a length that does not match."

	// func AddBias(scores []float32, [table []float32,] lq, lk, qOffset int) {
	//	checkShape("AddBias", "scores", len(scores), lq, lk, qOffset)
	//	k := active
	//	eachRow(lq, lk, qOffset, [table,] func(off, valid int, bias []float32) {
	//		row := scores[off : off+lk]
	//		if valid > 0 { k.addRow(row[:valid], bias[:valid]) }   // causal
	//		for j := valid; j < lk; j++ { row[j] = negInf }          // causal
	//		k.addRow(row, bias)                                      // otherwise
	//	})
	// }
	addBody := []jen.Code{row("scores")}
	if causal {
		addBody = append(addBody,
			jen.If(jen.Id("valid").Op(">").Lit(0)).Block(
				jen.Id("k").Dot("addRow").Call(jen.Id("row").Index(jen.Op(":").Id("valid")), jen.Id("bias").Index(jen.Op(":").Id("valid"))),
			),
			jen.For(jen.Id("j").Op(":=").Id("valid"), jen.Id("j").Op("<").Id("lk"), jen.Id("j").Op("++")).Block(
				jen.Id("row").Index(jen.Id("j")).Op("=").Id("negInf"),
			),
		)
		f.Comment("negInf is the score of a masked key after AddBias.")
		f.Var().Id("negInf").Op("=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1)))
	} else {
		addBody = append(addBody, jen.Id("k").Dot("addRow").Call(jen.Id("row"), jen.Id("bias")))
	}
	f.Comment("AddBias adds " + biasDoc + " to every score (h, i, j), in place.")
	if causal {
		f.Comment("Keys after their query (j > qOffset+i) are masked: their scores become −Inf, so")
		f.Comment("AddBias followed by any softmax equals Softmax.")
	}
	f.Comment(common)
	f.Comment(checkDoc)
	f.Func().Id("AddBias").Params(sig("scores")...).Block(append(checks("AddBias", "scores"),
		jen.Id("k").Op(":=").Id("active"),
		each(false, addBody...),
	)...)

	// func Softmax(scores []float32, [table []float32,] lq, lk, qOffset int, scale float32) {
	//	checkShape(...)
	//	k := active
	//	eachRow(lq, lk, qOffset, [table,] func(off, valid int, bias []float32) {
	//		row := scores[off : off+lk]
	//		if valid > 0 { k.softmaxRow(row[:valid], bias[:valid], scale) }
	//		clear(row[valid:])                                       // causal
	//		k.softmaxRow(row, bias, scale)                           // otherwise
	//	})
	// }
	smBody := []jen.Code{row("scores")}
	if causal {
		smBody = append(smBody,
			jen.If(jen.Id("valid").Op(">").Lit(0)).Block(
				jen.Id("k").Dot("softmaxRow").Call(jen.Id("row").Index(jen.Op(":").Id("valid")), jen.Id("bias").Index(jen.Op(":").Id("valid")), jen.Id("scale")),
			),
			jen.Clear(jen.Id("row").Index(jen.Id("valid").Op(":"))),
		)
	} else {
		smBody = append(smBody, jen.Id("k").Dot("softmaxRow").Call(jen.Id("row"), jen.Id("bias"), jen.Id("scale")))
	}
	f.Comment("Softmax replaces every row (h, i) of scores by softmax_j(scale·scores[h][i][j] + bias),")
	f.Comment("with bias " + biasDoc + ": scaling, bias and softmax fused in one pass")
	f.Comment("over memory, the row maximum subtracted before exponentiation.")
	if causal {
		f.Comment("Masked keys (j > qOffset+i) get probability 0.")
	}
	f.Comment(common)
	f.Comment(checkDoc)
	f.Func().Id("Softmax").Params(sig("scores", jen.Id("scale").Float32())...).Block(append(checks("Softmax", "scores"),
		jen.Id("k").Op(":=").Id("active"),
		each(true, smBody...),
	)...)

	// func Bias(dst []float32, [table []float32,] lq, lk, qOffset int) {
	//	checkShape("Bias", "dst", len(dst), lq, lk, qOffset)
	//	eachRow(lq, lk, qOffset, [table,] func(off, _ int, bias []float32) { copy(dst[off:off+lk], bias) })
	// }
	f.Comment("Bias writes " + biasDoc + " for every (h, i, j) to dst, [Heads][lq][lk],")
	if causal {
		f.Comment("unmasked (as the seeds' get_alibi_biases): the mask is AddBias's and Softmax's job.")
	} else {
		f.Comment("the materialized form of what AddBias adds.")
	}
	f.Comment("Query i sits at position qOffset+i, key j at position j." + tableDoc)
	f.Comment(checkDoc)
	f.Func().Id("Bias").Params(sig("dst")...).Block(append(checks("Bias", "dst"),
		each(false, jen.Copy(jen.Id("dst").Index(jen.Id("off"), jen.Id("off").Op("+").Id("lk")), jen.Id("bias"))),
	)...)
}

// biasGeneric emits <name>_generic.go: the portable addRow and softmaxRow.
func biasGeneric(c *Consts) (emit.File, error) {
	pkg := c.Spec.Name
	f := gocode.NewFile(pkg, c.Spec.File)

	// var genericKernels = kernels{addRow: addRowGeneric, softmaxRow: softmaxRowGeneric}
	f.Comment("genericKernels is the portable Go implementation, always available.")
	f.Var().Id("genericKernels").Op("=").Id("kernels").Values(jen.Dict{
		jen.Id("addRow"):     jen.Id("addRowGeneric"),
		jen.Id("softmaxRow"): jen.Id("softmaxRowGeneric"),
	})

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
