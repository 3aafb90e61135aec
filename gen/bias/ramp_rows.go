package bias

import "github.com/dave/jennifer/jen"

// The table-free ALiBi paths of an alibi package: decode calls of Softmax,
// AddBias and Bias (few query rows) and the position forms whose keys are one
// run form each row's bias in the softmaxRamp and addRamp kernels instead of
// building a bias table. One generated loop serves both families: a row's
// query position is given relative to the first key as base + rel(i).

// biasRampRows emits rampMaxKeys, rampMaxRows, queryIndex, softmaxRampRows
// and addRampRows.
func biasRampRows(f *jen.File, causal bool) {
	f.Comment("rampMaxKeys bounds the key counts softmaxRamp serves: it keeps t0 − j as float32")
	f.Comment("integers, exact below 2^24. Longer rows take the table path (eachRow).")
	f.Const().Id("rampMaxKeys").Op("=").Lit(1).Op("<<").Lit(24)
	f.Comment("rampMaxRows is the most query rows a Softmax, AddBias or Bias call serves without a")
	f.Comment("bias table (decode and short chunks). With more rows the per-head table D of eachRow,")
	f.Comment("O(lq+lk) to build, is shared by lq rows and a table load is cheaper than forming the")
	f.Comment("bias in registers.")
	f.Const().Id("rampMaxRows").Op("=").Lit(8)

	// func queryIndex(i int) int { return i }
	f.Comment("queryIndex is the rel argument of softmaxRampRows and addRampRows for Softmax, AddBias")
	f.Comment("and Bias: query i sits at qOffset+i, passed as base = qOffset and rel(i) = i.")
	f.Func().Id("queryIndex").Params(id("i").Int()).Int().Block(jen.Return(id("i")))

	params := func(buf string, last jen.Code) []jen.Code {
		return []jen.Code{
			id(buf).Index().Float32(),
			jen.List(id("lq"), id("lk"), id("run"), id("base"), id("h0"), id("nh")).Int(),
			id("rel").Func().Params(id("i").Int()).Int(),
			last,
		}
	}
	// row := buf[(t*lq+i)*lk:][:lk]
	row := func(buf string) jen.Code {
		return id("row").Op(":=").Id(buf).Index(jen.Parens(id("t").Op("*").Id("lq").Op("+").Id("i")).Op("*").Id("lk").Op(":")).Index(jen.Op(":").Id("lk"))
	}
	// before is base+r < run−1 (the query before the run's last key), tested
	// without forming base+r, which overflows for qOffset near MaxInt.
	before := func() jen.Code { return id("base").Op("<").Id("run").Op("-").Lit(1).Op("-").Id("r") }
	const layout = "[nh][lq][lk] over the model's heads [h0, h0+nh): keys j < run sit at positions j relative to the\n" +
		"first key, the keys from run on are padding, and query row i at p = base + rel(i), compared\n" +
		"with run−1 before it is formed (qOffset near MaxInt does not overflow)."

	// func softmaxRampRows(scores []float32, lq, lk, run, base, h0, nh int, rel func(i int) int, scale float32) {
	//	k := active
	//	for i := range lq {
	//		r := rel(i)
	//		valid, t0 := run, run-1
	//		if base < run-1-r { t0 = max(base+r, 0); valid = max(base+r+1, 0) /* causal */ }
	//		for t := range nh {
	//			row := scores[(t*lq+i)*lk:][:lk]
	//			if valid > 0 { k.softmaxRamp(row[:valid], scale, float32(-slopes[h0+t]), float32(t0)) }
	//			clear(row[valid:])
	//		}
	//	}
	// }
	clamp := []jen.Code{id("t0").Op("=").Max(id("base").Op("+").Id("r"), lit(0))}
	if causal {
		clamp = append(clamp, id("valid").Op("=").Max(id("base").Op("+").Id("r").Op("+").Lit(1), lit(0)))
	}
	f.Comment("softmaxRampRows is Softmax (decode calls) and SoftmaxPos (keys in one run) for scores,")
	lines(f, layout)
	f.Comment("Each row is one softmaxRamp call, the bias −slope·|p−j| of query position p formed in the")
	f.Comment("kernel, so no table is built per call (lq = 1 costs one pass over the row per head).")
	f.Comment("t0 is p clamped to [0, valid−1]: a per-row shift softmax ignores, which keeps t0 exact in")
	f.Comment("float32 for any p. Masked keys get probability 0. It needs lk < rampMaxKeys.")
	f.Func().Id("softmaxRampRows").Params(params("scores", id("scale").Float32())...).Block(
		id("k").Op(":=").Id("active"),
		jen.For(id("i").Op(":=").Range().Id("lq")).Block(
			id("r").Op(":=").Id("rel").Call(id("i")),
			jen.List(id("valid"), id("t0")).Op(":=").List(id("run"), id("run").Op("-").Lit(1)),
			jen.If(before()).Block(clamp...),
			jen.For(id("t").Op(":=").Range().Id("nh")).Block(
				row("scores"),
				jen.If(id("valid").Op(">").Lit(0)).Block(
					id("k").Dot("softmaxRamp").Call(id("row").Index(jen.Op(":").Id("valid")), id("scale"), jen.Float32().Call(jen.Op("-").Id("slopes").Index(id("h0").Op("+").Id("t"))), jen.Float32().Call(id("t0"))),
				),
				jen.Clear(id("row").Index(id("valid").Op(":"))),
			),
		),
	)

	// func addRampRows(buf []float32, lq, lk, run, base, h0, nh int, rel func(i int) int, add bool) {
	//	k := active
	//	for i := range lq {
	//		r := rel(i)
	//		t0 := float64(base) + float64(r)
	//		valid := run
	//		if add && base < run-1-r { valid = max(base+r+1, 0) }   // causal
	//		for t := range nh {
	//			row := buf[(t*lq+i)*lk:][:lk]
	//			if !add { clear(row) }
	//			k.addRamp(row[:valid], -slopes[h0+t], t0)
	//			if add { for j := valid; j < lk; j++ { row[j] = posNegInf } }
	//		}
	//	}
	// }
	var mask jen.Code = jen.Null()
	if causal {
		mask = jen.If(id("add").Op("&&").Add(before())).Block(
			id("valid").Op("=").Max(id("base").Op("+").Id("r").Op("+").Lit(1), lit(0)),
		)
	}
	f.Comment("addRampRows is AddBias and AddBiasPos (add) or Bias and BiasPos (!add: each row cleared,")
	f.Comment("then the bias added, so padding keys get 0 and a −0 bias is written as +0) for buf,")
	lines(f, layout)
	f.Comment("The bias of key j, float32(−slope·|p−j|), is formed in float64 by the addRamp kernel (t0 = p,")
	f.Comment("summed in float64, is exact): bit for bit the entry of the table paths (fillD, eachPosRow),")
	f.Comment("which would cost O(lq+lk) scalar work per head, more than the row itself when lq is 1.")
	f.Comment("With add, masked keys (padding, and after the query when causal) become −Inf.")
	f.Func().Id("addRampRows").Params(params("buf", id("add").Bool())...).Block(
		id("k").Op(":=").Id("active"),
		jen.For(id("i").Op(":=").Range().Id("lq")).Block(
			id("r").Op(":=").Id("rel").Call(id("i")),
			id("t0").Op(":=").Float64().Call(id("base")).Op("+").Float64().Call(id("r")),
			id("valid").Op(":=").Id("run"),
			mask,
			jen.For(id("t").Op(":=").Range().Id("nh")).Block(
				row("buf"),
				jen.If(jen.Op("!").Id("add")).Block(jen.Clear(id("row"))),
				id("k").Dot("addRamp").Call(id("row").Index(jen.Op(":").Id("valid")), jen.Op("-").Id("slopes").Index(id("h0").Op("+").Id("t")), id("t0")),
				jen.If(id("add")).Block(
					jen.For(id("j").Op(":=").Id("valid"), id("j").Op("<").Id("lk"), id("j").Op("++")).Block(
						id("row").Index(id("j")).Op("=").Id("posNegInf"),
					),
				),
			),
		),
	)
}
