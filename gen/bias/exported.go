package bias

import "github.com/dave/jennifer/jen"

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
		if causal {
			// func maskFuture(d []float32, lq, qOffset int) {
			//	if qOffset >= len(d)-lq { return }
			//	for m := qOffset + lq; m < len(d); m++ { d[m] = negInf }
			// }
			f.Comment("maskFuture sets d[m] = −Inf for every m > qOffset+lq−1: the distances only masked")
			f.Comment("keys (j > qOffset+i) meet. Softmax then runs its kernel over whole 16-float vectors")
			f.Comment("past a row's last unmasked key (zeroed scores, −Inf bias: probability exactly 0)")
			f.Comment("instead of ending every row on a masked partial vector.")
			f.Func().Id("maskFuture").Params(jen.Id("d").Index().Float32(), jen.List(jen.Id("lq"), jen.Id("qOffset")).Int()).Block(
				jen.If(jen.Id("qOffset").Op(">=").Len(jen.Id("d")).Op("-").Id("lq")).Block(jen.Return()),
				jen.For(jen.Id("m").Op(":=").Id("qOffset").Op("+").Id("lq"), jen.Id("m").Op("<").Len(jen.Id("d")), jen.Id("m").Op("++")).Block(
					jen.Id("d").Index(jen.Id("m")).Op("=").Id("negInf"),
				),
			)
			fillE = jen.If(jen.Id("shifted")).Block(
				jen.Id("fillE").Call(jen.Id("e"), jen.Id("h")),
				jen.Id("maskFuture").Call(jen.Id("d"), jen.Id("lq"), jen.Id("qOffset")),
			)
		}
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
	// alibi: if lq <= rampMaxRows { addRampRows(scores, Heads, lq, lk, qOffset, true); return }
	rampFast := func(buf string, add bool) jen.Code {
		if rpe {
			return jen.Null()
		}
		return jen.If(jen.Id("lq").Op("<=").Id("rampMaxRows")).Block(
			jen.Id("addRampRows").Call(jen.Id(buf), jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset"), jen.Lit(add)),
			jen.Return(),
		)
	}
	if !rpe {
		f.Comment("Decode calls (lq ≤ rampMaxRows) build no bias table: each row's bias is formed by the")
		f.Comment("addRamp kernel, bit for bit the table's.")
	}
	f.Func().Id("AddBias").Params(sig("scores")...).Block(append(checks("AddBias", "scores"),
		rampFast("scores", true),
		jen.Id("k").Op(":=").Id("active"),
		each(false, addBody...),
	)...)
	if !rpe {
		biasAddRampRows(f, causal)
	}

	// func Softmax(scores []float32, [table []float32,] lq, lk, qOffset int, scale float32) {
	//	checkShape(...)
	//	k := active
	//	eachRow(lq, lk, qOffset, [table,] func(off, valid int, bias []float32) {
	//		row := scores[off : off+lk]
	//		clear(row[valid:])                                       // causal
	//		n := min(lk, (valid+15)&^15)
	//		k.softmaxRow(row[:n], bias[:n], scale)
	//		k.softmaxRow(row, bias, scale)                           // otherwise
	//	})
	// }
	smBody := []jen.Code{row("scores")}
	if causal {
		// The masked keys' scores are cleared first (NaN or ±Inf there must not meet the
		// −Inf bias), then the kernel runs up to the next multiple of 16 keys: lanes past
		// valid have score 0 and bias −Inf (maskFuture), so their exp is 0 and the row
		// ends on whole vectors. valid ≥ 1 under the causal mask.
		smBody = append(smBody,
			jen.Id("n").Op(":=").Min(jen.Id("lk"), jen.Parens(jen.Id("valid").Op("+").Lit(15)).Op("&^").Lit(15)),
			jen.Clear(jen.Id("row").Index(jen.Id("valid").Op(":").Id("n"))),
			jen.Id("k").Dot("softmaxRow").Call(jen.Id("row").Index(jen.Op(":").Id("n")), jen.Id("bias").Index(jen.Op(":").Id("n")), jen.Id("scale")),
			jen.Clear(jen.Id("row").Index(jen.Id("n").Op(":"))),
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
	smCall := []jen.Code{jen.Id("k").Op(":=").Id("active"), each(true, smBody...)}
	if !rpe {
		// if lq <= rampMaxRows && lk < rampMaxKeys { softmaxRampRows(scores, 0, Heads, lq, lk, qOffset, scale); return }
		smCall = append([]jen.Code{jen.If(jen.Id("lq").Op("<=").Id("rampMaxRows").Op("&&").Id("lk").Op("<").Id("rampMaxKeys")).Block(
			jen.Id("softmaxRampRows").Call(jen.Id("scores"), jen.Lit(0), jen.Id("Heads"), jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset"), jen.Id("scale")),
			jen.Return(),
		)}, smCall...)
		biasRampRows(f, causal)
	}
	f.Func().Id("Softmax").Params(sig("scores", jen.Id("scale").Float32())...).Block(append(checks("Softmax", "scores"), smCall...)...)

	// func Bias(dst []float32, [table []float32,] lq, lk, qOffset int) {
	//	checkShape("Bias", "dst", len(dst), lq, lk, qOffset)
	//	eachRow(lq, lk, qOffset, [table,] func(off, _ int, bias []float32) { copy(dst[off:off+lk], bias) })
	// }
	f.Comment("Bias writes " + biasDoc + " for every (h, i, j) to dst, [Heads][lq][lk],")
	if causal {
		f.Comment("unmasked (as Press et al.'s ALiBi bias matrix): the mask is AddBias's and Softmax's job.")
	} else {
		f.Comment("the materialized form of what AddBias adds.")
	}
	f.Comment("Query i sits at position qOffset+i, key j at position j." + tableDoc)
	if !rpe {
		f.Comment("Decode calls (lq ≤ rampMaxRows) build no bias table (addRamp on a cleared row).")
	}
	f.Comment(checkDoc)
	f.Func().Id("Bias").Params(sig("dst")...).Block(append(checks("Bias", "dst"),
		rampFast("dst", false),
		each(false, jen.Copy(jen.Id("dst").Index(jen.Id("off"), jen.Id("off").Op("+").Id("lk")), jen.Id("bias"))),
	)...)
}

// biasRampRows emits rampMaxKeys and softmaxRampRows, the ALiBi Softmax
// without a bias table: each row is one softmaxRamp call.
func biasRampRows(f *jen.File, causal bool) {
	f.Comment("rampMaxKeys bounds the key counts softmaxRamp serves: it keeps t0 − j as float32")
	f.Comment("integers, exact below 2^24. Longer rows take the table path (eachRow).")
	f.Const().Id("rampMaxKeys").Op("=").Lit(1).Op("<<").Lit(24)
	f.Comment("rampMaxRows is the most query rows a Softmax call serves with softmaxRamp (decode")
	f.Comment("and short chunks). With more rows the per-head table D of eachRow, O(lq+lk) to build,")
	f.Comment("is shared by lq rows and a table load is cheaper than forming the bias in registers.")
	f.Const().Id("rampMaxRows").Op("=").Lit(8)
	// func softmaxRampRows(scores []float32, h0, nh, lq, lk, qOffset int, scale float32) {
	//	k := active
	//	for h := range nh {
	//		ns := float32(-slopes[h0+h])
	//		for i := range lq {
	//			row := scores[(h*lq+i)*lk:][:lk]
	//			t0 := lk - 1
	//			if qOffset < lk-1-i { t0 = qOffset + i }
	//			valid := lk                         // causal: validKeys(lk, qOffset, i)
	//			if valid > 0 { k.softmaxRamp(row[:valid], scale, ns, float32(t0)) }
	//			clear(row[valid:])                  // causal
	//		}
	//	}
	// }
	valid := jen.Id("valid").Op(":=").Id("lk")
	var clr jen.Code = jen.Null()
	if causal {
		valid = jen.Id("valid").Op(":=").Id("validKeys").Call(jen.Id("lk"), jen.Id("qOffset"), jen.Id("i"))
		clr = jen.Clear(jen.Id("row").Index(jen.Id("valid").Op(":")))
	}
	f.Comment("softmaxRampRows is Softmax for heads [h0, h0+nh) of scores, [nh][lq][lk] with")
	f.Comment("lk < rampMaxKeys: each row is one softmaxRamp call, the bias −slope·|p−j| formed in the")
	f.Comment("kernel, so no table is built per call (the decode path: lq = 1 costs one pass over the")
	f.Comment("row per head). A row whose query position p is at least lk−1 uses t0 = lk−1, the bias")
	f.Comment("shifted by slope·(p−lk+1): the same softmax, and the ramp stays exact for any p.")
	f.Func().Id("softmaxRampRows").Params(jen.Id("scores").Index().Float32(), jen.List(jen.Id("h0"), jen.Id("nh"), jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset")).Int(), jen.Id("scale").Float32()).Block(
		jen.If(jen.Id("lk").Op("==").Lit(0)).Block(jen.Return()),
		jen.Id("k").Op(":=").Id("active"),
		jen.For(jen.Id("h").Op(":=").Range().Id("nh")).Block(
			jen.Id("ns").Op(":=").Float32().Call(jen.Op("-").Id("slopes").Index(jen.Id("h0").Op("+").Id("h"))),
			jen.For(jen.Id("i").Op(":=").Range().Id("lq")).Block(
				jen.Id("row").Op(":=").Id("scores").Index(jen.Parens(jen.Id("h").Op("*").Id("lq").Op("+").Id("i")).Op("*").Id("lk").Op(":")).Index(jen.Op(":").Id("lk")),
				jen.Id("t0").Op(":=").Id("lk").Op("-").Lit(1),
				jen.If(jen.Id("qOffset").Op("<").Id("lk").Op("-").Lit(1).Op("-").Id("i")).Block(
					jen.Id("t0").Op("=").Id("qOffset").Op("+").Id("i"),
				),
				valid,
				jen.If(jen.Id("valid").Op(">").Lit(0)).Block(
					jen.Id("k").Dot("softmaxRamp").Call(jen.Id("row").Index(jen.Op(":").Id("valid")), jen.Id("scale"), jen.Id("ns"), jen.Float32().Call(jen.Id("t0"))),
				),
				clr,
			),
		),
	)
}

// biasAddRampRows emits addRampRows, AddBias and Bias for few query rows
// without a bias table: each row is one addRamp call.
func biasAddRampRows(f *jen.File, causal bool) {
	// func addRampRows(buf []float32, lq, lk, qOffset int, add bool) {
	//	if lk == 0 { return }
	//	k := active
	//	for h := range Heads {
	//		ns := -slopes[h]
	//		for i := range lq {
	//			row := buf[(h*lq+i)*lk:][:lk]
	//			t0 := float64(qOffset) + float64(i)
	//			if !add { clear(row); k.addRamp(row, ns, t0); continue }
	//			valid := lk                      // causal: validKeys(lk, qOffset, i)
	//			k.addRamp(row[:valid], ns, t0)
	//			for j := valid; j < lk; j++ { row[j] = negInf }   // causal
	//		}
	//	}
	// }
	addBody := []jen.Code{jen.Id("k").Dot("addRamp").Call(jen.Id("row"), jen.Id("ns"), jen.Id("t0"))}
	if causal {
		addBody = []jen.Code{
			jen.Id("valid").Op(":=").Id("validKeys").Call(jen.Id("lk"), jen.Id("qOffset"), jen.Id("i")),
			jen.Id("k").Dot("addRamp").Call(jen.Id("row").Index(jen.Op(":").Id("valid")), jen.Id("ns"), jen.Id("t0")),
			jen.For(jen.Id("j").Op(":=").Id("valid"), jen.Id("j").Op("<").Id("lk"), jen.Id("j").Op("++")).Block(
				jen.Id("row").Index(jen.Id("j")).Op("=").Id("negInf"),
			),
		}
	}
	f.Comment("addRampRows is AddBias (add) or Bias (!add: each row cleared, then the bias added, so a")
	f.Comment("bias of −0 is written as +0) for buf, [Heads][lq][lk]: the bias of row i, key j is")
	f.Comment("float32(−slope·|qOffset+i−j|) formed in float64 by the addRamp kernel, bit for bit the")
	f.Comment("entry of fillD's table, which this decode path does not build (O(lq+lk) scalar work per")
	f.Comment("head that would cost more than the row itself when lq is 1).")
	f.Func().Id("addRampRows").Params(jen.Id("buf").Index().Float32(), jen.List(jen.Id("lq"), jen.Id("lk"), jen.Id("qOffset")).Int(), jen.Id("add").Bool()).Block(
		jen.If(jen.Id("lk").Op("==").Lit(0)).Block(jen.Return()),
		jen.Id("k").Op(":=").Id("active"),
		jen.For(jen.Id("h").Op(":=").Range().Id("Heads")).Block(
			jen.Id("ns").Op(":=").Op("-").Id("slopes").Index(jen.Id("h")),
			jen.For(jen.Id("i").Op(":=").Range().Id("lq")).Block(append([]jen.Code{
				jen.Id("row").Op(":=").Id("buf").Index(jen.Parens(jen.Id("h").Op("*").Id("lq").Op("+").Id("i")).Op("*").Id("lk").Op(":")).Index(jen.Op(":").Id("lk")),
				jen.Id("t0").Op(":=").Float64().Call(jen.Id("qOffset")).Op("+").Float64().Call(jen.Id("i")),
				jen.If(jen.Op("!").Id("add")).Block(
					jen.Clear(jen.Id("row")),
					jen.Id("k").Dot("addRamp").Call(jen.Id("row"), jen.Id("ns"), jen.Id("t0")),
					jen.Continue(),
				),
			}, addBody...)...),
		),
	)
}
