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
	if !rpe {
		biasRampRows(f, causal)
	}
	f.Comment("AddBias adds " + biasDoc + " to every score (h, i, j), in place.")
	if causal {
		f.Comment("Keys after their query (j > qOffset+i) are masked: their scores become −Inf, so")
		f.Comment("AddBias followed by any softmax equals Softmax.")
	}
	f.Comment(common)
	f.Comment(checkDoc)
	// alibi: if lq <= rampMaxRows { addRampRows(scores, lq, lk, lk, qOffset, 0, Heads, queryIndex, true); return }
	rampFast := func(buf string, add bool) jen.Code {
		if rpe {
			return jen.Null()
		}
		return jen.If(jen.Id("lq").Op("<=").Id("rampMaxRows")).Block(
			jen.Id("addRampRows").Call(jen.Id(buf), jen.Id("lq"), jen.Id("lk"), jen.Id("lk"), jen.Id("qOffset"), jen.Lit(0), jen.Id("Heads"), jen.Id("queryIndex"), jen.Lit(add)),
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

	// func Softmax(scores []float32, [table []float32,] lq, lk, qOffset int, scale float32) {
	//	checkShape(...)
	//	k := active
	//	eachRow(lq, lk, qOffset, [table,] func(off, valid int, bias []float32) {
	//		row := scores[off : off+lk]
	//		n := min(lk, (valid+15)&^15)                             // causal:
	//		clear(row[valid:n])
	//		k.softmaxRow(row[:n], bias[:n], scale)
	//		clear(row[n:])
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
		// if lq <= rampMaxRows && lk < rampMaxKeys { softmaxRampRows(scores, lq, lk, lk, qOffset, 0, Heads, queryIndex, scale); return }
		smCall = append([]jen.Code{jen.If(jen.Id("lq").Op("<=").Id("rampMaxRows").Op("&&").Id("lk").Op("<").Id("rampMaxKeys")).Block(
			jen.Id("softmaxRampRows").Call(jen.Id("scores"), jen.Id("lq"), jen.Id("lk"), jen.Id("lk"), jen.Id("qOffset"), jen.Lit(0), jen.Id("Heads"), jen.Id("queryIndex"), jen.Id("scale")),
			jen.Return(),
		)}, smCall...)
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
