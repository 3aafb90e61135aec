package bias

import (
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/gen/gocode"
)

// The position forms: SoftmaxPos, AddBiasPos and BiasPos take one int32
// position per query row (qpos) and per key (kpos) instead of the implicit
// qOffset+i and 0..lk−1, and a head range [h0, h0+nh) instead of all heads:
// varlen batches, padded keys (kpos < 0), paged KV caches (any key order)
// and tensor-parallel shards (vLLM gives each rank the slopes of its own
// heads). docs/bias.md describes them.

var (
	id  = jen.Id
	lit = jen.Lit
)

// biasPositions emits the position forms and their helpers.
func biasPositions(f *jen.File, pkg string, rpe, causal bool) {
	posChecks(f, pkg)
	posHelpers(f, rpe, causal)
	posEachRow(f, rpe)
	posExported(f, rpe, causal)
}

// posChecks emits checkPos.
func posChecks(f *jen.File, pkg string) {
	// func checkPos(fn, arg string, n int, qpos, kpos []int32, h0, nh int) {
	//	if h0 < 0 || nh < 0 || h0 > Heads-nh { panic(...) }
	//	lq, lk := len(qpos), len(kpos)
	//	if (lk != 0 && lq > math.MaxInt/Heads/lk) || n != nh*lq*lk { panic(...) }
	//	for i, q := range qpos { if q < 0 { panic(...) } }
	// }
	f.Comment("checkPos panics unless [h0, h0+nh) is a range of heads, n, the length of argument arg")
	f.Comment("of function fn, is nh·len(qpos)·len(kpos), and no query position is negative.")
	f.Func().Id("checkPos").Params(jen.List(id("fn"), id("arg")).String(), id("n").Int(), jen.List(id("qpos"), id("kpos")).Index().Int32(), jen.List(id("h0"), id("nh")).Int()).Block(
		jen.If(id("h0").Op("<").Lit(0).Op("||").Id("nh").Op("<").Lit(0).Op("||").Id("h0").Op(">").Id("Heads").Op("-").Id("nh")).Block(
			gocode.Panicf(pkg, "%s: heads [%d, %d+%d) are not within [0, Heads = %d)", id("fn"), id("h0"), id("h0"), id("nh"), id("Heads")),
		),
		jen.List(id("lq"), id("lk")).Op(":=").List(jen.Len(id("qpos")), jen.Len(id("kpos"))),
		jen.If(jen.Parens(id("lk").Op("!=").Lit(0).Op("&&").Id("lq").Op(">").Qual("math", "MaxInt").Op("/").Id("Heads").Op("/").Id("lk")).Op("||").
			Id("n").Op("!=").Id("nh").Op("*").Id("lq").Op("*").Id("lk")).Block(
			gocode.Panicf(pkg, "%s: len(%s) = %d, want nh·len(qpos)·len(kpos) = %d·%d·%d", id("fn"), id("arg"), id("n"), id("nh"), id("lq"), id("lk")),
		),
		jen.For(jen.List(id("i"), id("q")).Op(":=").Range().Id("qpos")).Block(
			jen.If(id("q").Op("<").Lit(0)).Block(
				gocode.Panicf(pkg, "%s: qpos[%d] = %d is negative", id("fn"), id("i"), id("q")),
			),
		),
	)
}

// posHelpers emits keyRun, keyMasked, absDist (alibi) and posNegInf.
func posHelpers(f *jen.File, rpe, causal bool) {
	// func keyRun(kpos []int32) int {
	//	if len(kpos) == 0 || kpos[0] < 0 { return 0 }
	//	n := 1
	//	for n < len(kpos) && int64(kpos[n]) == int64(kpos[0])+int64(n) { n++ }
	//	for _, p := range kpos[n:] { if p >= 0 { return 0 } }
	//	return n
	// }
	f.Comment("keyRun returns n ≥ 1 when kpos is one run of consecutive non-negative positions")
	f.Comment("kpos[0], kpos[0]+1, …, kpos[0]+n−1 followed only by padding (one sequence's keys, a paged")
	f.Comment("cache's contiguous blocks, a padded batch row), and 0 otherwise.")
	f.Func().Id("keyRun").Params(id("kpos").Index().Int32()).Int().Block(
		jen.If(jen.Len(id("kpos")).Op("==").Lit(0).Op("||").Id("kpos").Index(lit(0)).Op("<").Lit(0)).Block(jen.Return(lit(0))),
		id("n").Op(":=").Lit(1),
		jen.For(id("n").Op("<").Len(id("kpos")).Op("&&").Int64().Call(id("kpos").Index(id("n"))).Op("==").Int64().Call(id("kpos").Index(lit(0))).Op("+").Int64().Call(id("n"))).Block(
			id("n").Op("++"),
		),
		jen.For(jen.List(id("_"), id("p")).Op(":=").Range().Id("kpos").Index(id("n").Op(":"))).Block(
			jen.If(id("p").Op(">=").Lit(0)).Block(jen.Return(lit(0))),
		),
		jen.Return(id("n")),
	)
	// func keyMasked(q, p int32) bool { return p < 0 [|| p > q] }
	cond := id("p").Op("<").Lit(0)
	doc := "keyMasked reports whether the key at position p is masked for the query at q: padding (p < 0)."
	if causal {
		cond = id("p").Op("<").Lit(0).Op("||").Id("p").Op(">").Id("q")
		doc = "keyMasked reports whether the key at position p is masked for the query at q: padding\n(p < 0) or after the query (causal)."
	}
	lines(f, doc)
	f.Func().Id("keyMasked").Params(jen.List(id("q"), id("p")).Int32()).Bool().Block(jen.Return(cond))
	// var posNegInf = float32(math.Inf(-1))
	f.Comment("posNegInf is the bias of a masked key in the position forms.")
	f.Var().Id("posNegInf").Op("=").Float32().Call(jen.Qual("math", "Inf").Call(lit(-1)))
	if rpe {
		return
	}
	// func absDist(q, p int32) int64 { d := int64(q) - int64(p); if d < 0 { d = -d }; return d }
	f.Comment("absDist is |q−p|, exact in int64 for any int32 positions.")
	f.Func().Id("absDist").Params(jen.List(id("q"), id("p")).Int32()).Int64().Block(
		id("d").Op(":=").Int64().Call(id("q")).Op("-").Int64().Call(id("p")),
		jen.If(id("d").Op("<").Lit(0)).Block(id("d").Op("=").Op("-").Id("d")),
		jen.Return(id("d")),
	)
}

// posEachRow emits eachPosRow, the loop of the position forms' general path.
func posEachRow(f *jen.File, rpe bool) {
	// alibi:
	// func eachPosRow(qpos, kpos []int32, h0, nh int, mask, shift bool, fn func(off, valid int, bias []float32)) {
	//	lq, lk := len(qpos), len(kpos)
	//	if lq == 0 || lk == 0 || nh == 0 { return }
	//	bp := getD(lk); b := *bp
	//	for i, q := range qpos {
	//		dmin, valid := int64(0), 0
	//		if shift { dmin = math.MaxInt64 }
	//		for _, p := range kpos { if !keyMasked(q, p) { valid++; if shift { dmin = min(dmin, absDist(q, p)) } } }
	//		for t := range nh {
	//			ns := -slopes[h0+t]
	//			for j, p := range kpos {
	//				switch {
	//				case mask && keyMasked(q, p): b[j] = posNegInf
	//				case p < 0: b[j] = 0
	//				default: b[j] = float32(ns * float64(absDist(q, p)-dmin))
	//				}
	//			}
	//			fn((t*lq+i)*lk, valid, b)
	//		}
	//	}
	//	dPool.Put(bp)
	// }
	// rpe_bias: (qpos, kpos, table, h0, nh, mask, fn); no shift; per row,
	// run := keyRun(kpos) once; a run fills b[:run] by fillRel(b, row, int(q)-int(kpos[0])) and the
	// padding after it 0 or −Inf; otherwise b[j] = row[Bucket(int(q)-int(p))] (p ≥ 0).
	params := []jen.Code{jen.List(id("qpos"), id("kpos")).Index().Int32()}
	if rpe {
		params = append(params, id("table").Index().Float32())
	}
	params = append(params, jen.List(id("h0"), id("nh")).Int())
	if rpe {
		params = append(params, id("mask").Bool())
	} else {
		params = append(params, jen.List(id("mask"), id("shift")).Bool())
	}
	params = append(params, id("fn").Func().Params(jen.List(id("off"), id("valid")).Int(), id("bias").Index().Float32()))

	count := jen.For(jen.List(id("_"), id("p")).Op(":=").Range().Id("kpos")).Block(
		jen.If(jen.Op("!").Id("keyMasked").Call(id("q"), id("p"))).Block(id("valid").Op("++")),
	)
	var setup, fill []jen.Code
	if rpe {
		setup = []jen.Code{
			id("run").Op(":=").Id("keyRun").Call(id("kpos")),
			jen.Var().Id("pad").Float32().Comment("the bias of a padding key"),
			jen.If(id("mask")).Block(id("pad").Op("=").Id("posNegInf")),
		}
		// if run { fillRel(b, row, int(q)-int(kpos[0])) } else { for j, p := range kpos {...} }
		fill = []jen.Code{
			id("row").Op(":=").Id("table").Index(jen.Parens(id("h0").Op("+").Id("t")).Op("*").Id("Buckets").Op(":")).Index(jen.Op(":").Id("Buckets")),
			jen.If(id("run").Op(">").Lit(0)).Block(
				jen.Id("fillRel").Call(id("b").Index(jen.Op(":").Id("run")), id("row"), jen.Int().Call(id("q")).Op("-").Int().Call(id("kpos").Index(lit(0)))),
				jen.For(id("j").Op(":=").Id("run"), id("j").Op("<").Id("lk"), id("j").Op("++")).Block(
					id("b").Index(id("j")).Op("=").Id("pad"),
				),
			).Else().Block(
				jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("kpos")).Block(
					jen.Switch().Block(
						jen.Case(id("p").Op("<").Lit(0).Op("&&").Id("mask")).Block(id("b").Index(id("j")).Op("=").Id("posNegInf")),
						jen.Case(id("p").Op("<").Lit(0)).Block(id("b").Index(id("j")).Op("=").Lit(0)),
						jen.Default().Block(id("b").Index(id("j")).Op("=").Id("row").Index(jen.Id("Bucket").Call(jen.Int().Call(id("q")).Op("-").Int().Call(id("p"))))),
					),
				),
			),
		}
	} else {
		count = jen.For(jen.List(id("_"), id("p")).Op(":=").Range().Id("kpos")).Block(
			jen.If(jen.Op("!").Id("keyMasked").Call(id("q"), id("p"))).Block(
				id("valid").Op("++"),
				jen.If(id("shift")).Block(id("dmin").Op("=").Min(id("dmin"), id("absDist").Call(id("q"), id("p")))),
			),
		)
		fill = []jen.Code{
			id("ns").Op(":=").Op("-").Id("slopes").Index(id("h0").Op("+").Id("t")),
			jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("kpos")).Block(
				jen.Switch().Block(
					jen.Case(id("mask").Op("&&").Id("keyMasked").Call(id("q"), id("p"))).Block(id("b").Index(id("j")).Op("=").Id("posNegInf")),
					jen.Case(id("p").Op("<").Lit(0)).Block(id("b").Index(id("j")).Op("=").Lit(0)),
					jen.Default().Block(id("b").Index(id("j")).Op("=").Float32().Call(
						id("ns").Op("*").Float64().Call(id("absDist").Call(id("q"), id("p")).Op("-").Id("dmin")))),
				),
			),
		}
	}
	rowInit := []jen.Code{id("valid").Op(":=").Lit(0)}
	if !rpe {
		rowInit = []jen.Code{
			jen.List(id("dmin"), id("valid")).Op(":=").List(jen.Int64().Call(lit(0)), lit(0)),
			jen.If(id("shift")).Block(id("dmin").Op("=").Qual("math", "MaxInt64")),
		}
	}
	body := append(rowInit, count,
		jen.For(id("t").Op(":=").Range().Id("nh")).Block(append(fill,
			id("fn").Call(jen.Parens(id("t").Op("*").Id("lq").Op("+").Id("i")).Op("*").Id("lk"), id("valid"), id("b")),
		)...),
	)
	f.Comment("eachPosRow calls fn for every row (t, i) of a [nh][len(qpos)][len(kpos)] buffer (head")
	f.Comment("h0+t, query at qpos[i]) with the row's offset, its number of unmasked keys and its bias")
	f.Comment("over the keys: −Inf on masked keys when mask is set, else 0 on padding keys (kpos < 0).")
	if rpe {
		f.Comment("The bias of key j is the head's table[Bucket(qpos[i]−kpos[j])]; a run of keys")
		f.Comment("(keyRun) fills it by fillRel, looking up only the distances within ±BucketSpan.")
	} else {
		f.Comment("The bias of key j is −slope·|qpos[i]−kpos[j]|; with shift (SoftmaxPos), the distances")
		f.Comment("are taken relative to the row's nearest unmasked key, a per-row constant softmax ignores,")
		f.Comment("so that float32 rounding of large distances costs nothing where the mass is.")
	}
	f.Func().Id("eachPosRow").Params(params...).Block(append(append([]jen.Code{
		jen.List(id("lq"), id("lk")).Op(":=").List(jen.Len(id("qpos")), jen.Len(id("kpos"))),
		jen.If(id("lq").Op("==").Lit(0).Op("||").Id("lk").Op("==").Lit(0).Op("||").Id("nh").Op("==").Lit(0)).Block(jen.Return()),
		id("bp").Op(":=").Id("getD").Call(id("lk")),
		id("b").Op(":=").Op("*").Id("bp"),
	}, setup...),
		jen.For(jen.List(id("i"), id("q")).Op(":=").Range().Id("qpos")).Block(body...),
		jen.Id("dPool").Dot("Put").Call(id("bp")),
	)...)
}

// posExported emits SoftmaxPos, AddBiasPos and BiasPos.
func posExported(f *jen.File, rpe, causal bool) {
	sig := func(buf string, extra ...jen.Code) []jen.Code {
		p := []jen.Code{id(buf).Index().Float32()}
		if rpe {
			p = append(p, id("table").Index().Float32())
		}
		p = append(p, jen.List(id("qpos"), id("kpos")).Index().Int32(), jen.List(id("h0"), id("nh")).Int())
		return append(p, extra...)
	}
	checks := func(fn, buf string) []jen.Code {
		cs := []jen.Code{id("checkPos").Call(lit(fn), lit(buf), jen.Len(id(buf)), id("qpos"), id("kpos"), id("h0"), id("nh"))}
		if rpe {
			cs = append(cs, id("checkTable").Call(lit(fn), id("table")))
		}
		return cs
	}
	each := func(mask, shift bool, body ...jen.Code) jen.Code {
		args := []jen.Code{id("qpos"), id("kpos")}
		if rpe {
			args = append(args, id("table"))
		}
		args = append(args, id("h0"), id("nh"), lit(mask))
		if !rpe {
			args = append(args, lit(shift))
		}
		args = append(args, jen.Func().Params(jen.List(id("off"), id("valid")).Int(), id("bias").Index().Float32()).Block(body...))
		return id("eachPosRow").Call(args...)
	}
	row := func(buf string) jen.Code {
		return id("row").Op(":=").Id(buf).Index(id("off"), id("off").Op("+").Len(id("kpos")))
	}
	biasDoc := "−slope_h·|qpos[i]−kpos[j]|"
	if rpe {
		biasDoc = "table[h][Bucket(qpos[i]−kpos[j])]"
	}
	maskDoc := "A key with kpos[j] < 0 is padding: masked."
	if causal {
		maskDoc = "A key with kpos[j] < 0 is padding, and a key after its query\n(kpos[j] > qpos[i]) is masked too (causal)."
	}
	common := "scores is [nh][len(qpos)][len(kpos)]: its head t is the model's head h = h0+t (a\n" +
		"tensor-parallel shard runs heads [h0, h0+nh)), query row i sits at position qpos[i] ≥ 0 and key j\n" +
		"at kpos[j], in any order (varlen batches, paged KV caches). " + maskDoc
	if rpe {
		common += "\ntable is the whole model's [Heads][Buckets]."
	}
	checkDoc := "It panics, before writing anything, on heads outside [0, Heads), a negative qpos or a\nlength that does not match."

	// func SoftmaxPos(scores []float32, [table []float32,] qpos, kpos []int32, h0, nh int, scale float32) {
	//	checks
	//	k := active
	//	[alibi: if run := keyRun(kpos); run > 0 && len(kpos) < rampMaxKeys { softmaxRampRows(scores, rampArgs(), scale); return }]
	//	eachPosRow(qpos, kpos, [table,] h0, nh, true, [true,] func(off, valid int, bias []float32) {
	//		row := scores[off : off+len(kpos)]
	//		if valid == 0 { clear(row); return }
	//		if valid < len(row) { for j, b := range bias { if b == posNegInf { row[j] = 0 } } }
	//		k.softmaxRow(row, bias, scale)
	//		if valid < len(row) { ... the same ... }
	//	})
	// }
	// zeroMasked sets row[j] = 0 where bias[j] is −Inf (a masked key).
	zeroMasked := func(v jen.Code) jen.Code {
		return jen.If(id("valid").Op("<").Len(id("row"))).Block(
			jen.For(jen.List(id("j"), id("b")).Op(":=").Range().Id("bias")).Block(
				jen.If(id("b").Op("==").Id("posNegInf")).Block(id("row").Index(id("j")).Op("=").Add(v)),
			),
		)
	}
	smBody := []jen.Code{
		row("scores"),
		jen.If(id("valid").Op("==").Lit(0)).Block(jen.Clear(id("row")), jen.Return()),
		jen.Comment("A masked key's score must not reach the kernel: NaN or ±Inf there would turn its"),
		jen.Comment("−Inf logit into NaN. Zeroed, it contributes e^−Inf = 0, and 0 is its output."),
		zeroMasked(lit(0)),
		id("k").Dot("softmaxRow").Call(id("row"), id("bias"), id("scale")),
		zeroMasked(lit(0)),
	}
	var fast jen.Code = jen.Null()
	if !rpe {
		fast = jen.If(id("run").Op(":=").Id("keyRun").Call(id("kpos")), id("run").Op(">").Lit(0).Op("&&").Len(id("kpos")).Op("<").Id("rampMaxKeys")).Block(
			id("softmaxRampRows").Call(append([]jen.Code{id("scores")}, append(rampArgs(), id("scale"))...)...),
			jen.Return(),
		)
	}
	f.Comment("SoftmaxPos replaces every row (t, i) of scores by softmax_j(scale·scores[t][i][j] + bias),")
	f.Comment("bias " + biasDoc + " of head h = h0+t: the position form of Softmax.")
	f.Comment("Masked keys get probability 0, and a row with no unmasked key is all 0.")
	lines(f, common)
	if !rpe {
		f.Comment("Keys that form one run kpos[0], kpos[0]+1, … (fewer than 2^24), optionally followed by")
		f.Comment("padding, take the table-free softmaxRamp path, as Softmax's decode rows do.")
	}
	lines(f, checkDoc)
	f.Func().Id("SoftmaxPos").Params(sig("scores", id("scale").Float32())...).Block(append(checks("SoftmaxPos", "scores"),
		fast,
		id("k").Op(":=").Id("active"),
		each(true, true, smBody...),
	)...)

	// func AddBiasPos(scores []float32, [table,] qpos, kpos []int32, h0, nh int) {
	//	checks; k := active
	//	eachPosRow(..., true, [false,] func(off, valid int, bias []float32) {
	//		row := scores[off : off+len(kpos)]
	//		k.addRow(row, bias)
	//		if valid < len(row) { for j, b := range bias { if b == posNegInf { row[j] = posNegInf } } }
	//	})
	// }
	f.Comment("AddBiasPos adds " + biasDoc + " of head h = h0+t to every score (t, i, j), in")
	f.Comment("place; masked keys' scores become −Inf, so AddBiasPos followed by any softmax equals")
	f.Comment("SoftmaxPos.")
	lines(f, common)
	lines(f, checkDoc)
	// alibi: if run := keyRun(kpos); run > 0 { addRampRows(scores, rampArgs(), true); return }
	posFast := func(buf string, add bool) jen.Code {
		if rpe {
			return jen.Null()
		}
		return jen.If(id("run").Op(":=").Id("keyRun").Call(id("kpos")), id("run").Op(">").Lit(0)).Block(
			id("addRampRows").Call(append([]jen.Code{id(buf)}, append(rampArgs(), lit(add))...)...),
			jen.Return(),
		)
	}
	f.Func().Id("AddBiasPos").Params(sig("scores")...).Block(append(checks("AddBiasPos", "scores"),
		posFast("scores", true),
		id("k").Op(":=").Id("active"),
		each(true, false, row("scores"),
			id("k").Dot("addRow").Call(id("row"), id("bias")),
			jen.Comment("masked keys become −Inf whatever they held (NaN + −Inf would be NaN)"),
			zeroMasked(id("posNegInf")),
		),
	)...)

	// func BiasPos(dst []float32, [table,] qpos, kpos []int32, h0, nh int) {
	//	checks
	//	eachPosRow(..., false, [false,] func(off, _ int, bias []float32) { copy(dst[off:off+len(kpos)], bias) })
	// }
	f.Comment("BiasPos writes " + biasDoc + " of head h = h0+t for every (t, i, j) to dst,")
	f.Comment("[nh][len(qpos)][len(kpos)], unmasked but for padding keys (kpos[j] < 0), which get 0:")
	f.Comment("the position form of Bias. Query row i sits at position qpos[i] ≥ 0.")
	if rpe {
		f.Comment("table is the whole model's [Heads][Buckets].")
	}
	lines(f, checkDoc)
	f.Func().Id("BiasPos").Params(sig("dst")...).Block(append(checks("BiasPos", "dst"),
		posFast("dst", false),
		each(false, false, jen.Copy(id("dst").Index(id("off"), id("off").Op("+").Len(id("kpos"))), id("bias"))),
	)...)
}

// rampArgs are the arguments softmaxRampRows and addRampRows take between the
// buffer and the last one for keys that are one run: len(qpos), len(kpos), run,
// base = −kpos[0], h0, nh and rel(i) = qpos[i], so key j < run sits at j and
// query row i at qpos[i]−kpos[0] relative to the first key.
func rampArgs() []jen.Code {
	return []jen.Code{
		jen.Len(id("qpos")), jen.Len(id("kpos")), id("run"), jen.Op("-").Int().Call(id("kpos").Index(lit(0))), id("h0"), id("nh"),
		jen.Func().Params(id("i").Int()).Int().Block(jen.Return(jen.Int().Call(id("qpos").Index(id("i"))))),
	}
}

// lines writes text as one line comment per line.
func lines(f *jen.File, text string) {
	for _, l := range strings.Split(text, "\n") {
		f.Comment(l)
	}
}
