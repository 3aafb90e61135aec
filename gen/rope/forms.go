package rope

import "github.com/dave/jennifer/jen"

// The engine forms of a rope package (issue 14): strided and packed-QKV
// tensors rotated in place (vLLM's rotary_embedding takes a token stride;
// FlashInfer and ggml take strides too), head-major tensors, rotation from
// a source into a destination or into KV-cache slots (FlashInfer's paged
// append: slot = page·pageSize + offset), and the pure rotation by a
// position delta of ggml's context shift. All of them run the one strided
// rotate kernel through rotateTokens / rotateRun.

// id, ids and lit shorten the jennifer below.
func id(name string) *jen.Statement { return jen.Id(name) }

func ids(names ...string) *jen.Statement {
	cs := make([]jen.Code, len(names))
	for i, n := range names {
		cs[i] = jen.Id(n)
	}
	return jen.List(cs...)
}

func itoa(v jen.Code) *jen.Statement { return jen.Qual("strconv", "Itoa").Call(v) }

// ropeForms emits checkStrided, ApplyStrided, ApplyHeadMajor,
// ApplyQKStrided, ApplyTo, ApplyToSlots and Shift.
func ropeForms(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	ropeCheckStrided(f, pkg)

	// func ApplyStrided(x []float32, pos []int32, heads, stride, headStride int) {
	//	checkStrided("ApplyStrided", len(x), len(pos), heads, stride, headStride)
	//	rotateTokens(operand{x, x, heads, stride, headStride}, operand{}, pos, 1)
	// }
	f.Comment("ApplyStrided applies the rotary embedding in place to heads heads of len(pos) tokens")
	f.Comment("laid out with strides: head h of token t is x[t*stride+h*headStride:][:HeadDim]. The")
	f.Comment("contiguous Apply is stride = heads*HeadDim, headStride = HeadDim; a head-major cache")
	f.Comment("[heads][capacity][HeadDim] whose tokens start at slot s is x = cache[s*HeadDim:],")
	f.Comment("stride = HeadDim, headStride = capacity*HeadDim; floats outside the heads are not")
	f.Comment("touched. It panics, before writing anything, if heads < 1, a stride is negative, the")
	f.Comment("heads overlap, or x is too short.")
	f.Func().Id("ApplyStrided").Params(id("x").Add(c.tensor()), id("pos").Index().Int32(), ids("heads", "stride", "headStride").Int()).Block(
		id("checkStrided").Call(jen.Lit("ApplyStrided"), jen.Len(id("x")), jen.Len(id("pos")), id("heads"), id("stride"), id("headStride")),
		id("rotateTokens").Call(id("operand").Values(id("x"), id("x"), id("heads"), id("stride"), id("headStride")), id("operand").Values(), id("pos"), jen.Lit(1)),
	)

	// func ApplyHeadMajor(x []float32, pos []int32, heads int) {
	//	checkShape("ApplyHeadMajor", "x", "heads", len(x), len(pos), heads)
	//	rotateTokens(operand{x, x, heads, HeadDim, len(pos) * HeadDim}, operand{}, pos, 1)
	// }
	f.Comment("ApplyHeadMajor applies the rotary embedding in place to x laid out head-major,")
	f.Comment("[heads][len(pos)][HeadDim] (the per-head layout of attention kernels); it equals")
	f.Comment("ApplyStrided(x, pos, heads, HeadDim, len(pos)*HeadDim). It panics, before writing")
	f.Comment("anything, if heads < 1 or len(x) != len(pos)*heads*HeadDim.")
	f.Func().Id("ApplyHeadMajor").Params(id("x").Add(c.tensor()), id("pos").Index().Int32(), id("heads").Int()).Block(
		id("checkShape").Call(jen.Lit("ApplyHeadMajor"), jen.Lit("x"), jen.Lit("heads"), jen.Len(id("x")), jen.Len(id("pos")), id("heads")),
		id("rotateTokens").Call(id("operand").Values(id("x"), id("x"), id("heads"), id("HeadDim"), jen.Len(id("pos")).Op("*").Id("HeadDim")), id("operand").Values(), id("pos"), jen.Lit(1)),
	)

	ropeApplyQKStrided(f, c)

	// func ApplyTo(dst, src []float32, pos []int32, heads int) {
	//	checkShape("ApplyTo", "src", "heads", len(src), len(pos), heads)
	//	checkShape("ApplyTo", "dst", "heads", len(dst), len(pos), heads)
	//	rotateTokens(contiguous(dst, src, heads), operand{}, pos, 1)
	// }
	f.Comment("ApplyTo writes to dst the rotary embedding of src, both [len(pos)][heads][HeadDim],")
	f.Comment("in one pass: src is read once and not modified, values RotaryDim..HeadDim are copied.")
	f.Comment("dst and src must be the same slice (then it is Apply) or not overlap. It panics,")
	f.Comment("before writing anything, if heads < 1 or a length is not len(pos)*heads*HeadDim.")
	f.Func().Id("ApplyTo").Params(ids("dst", "src").Add(c.tensor()), id("pos").Index().Int32(), id("heads").Int()).Block(
		id("checkShape").Call(jen.Lit("ApplyTo"), jen.Lit("src"), jen.Lit("heads"), jen.Len(id("src")), jen.Len(id("pos")), id("heads")),
		id("checkShape").Call(jen.Lit("ApplyTo"), jen.Lit("dst"), jen.Lit("heads"), jen.Len(id("dst")), jen.Len(id("pos")), id("heads")),
		id("rotateTokens").Call(id("contiguous").Call(id("dst"), id("src"), id("heads")), id("operand").Values(), id("pos"), jen.Lit(1)),
	)

	ropeApplyToSlots(f, c)
	ropeShift(f, c)
}

// ropeCheckStrided emits checkStrided.
func ropeCheckStrided(f *jen.File, pkg string) {
	// func checkStrided(fn string, n, tokens, heads, stride, headStride int) {
	//	if heads < 1 { panic }
	//	if stride < 0 || headStride < 0 || stride > n || headStride > n { panic }
	//	if tokens == 0 { return }
	//	if heads > 1 && headStride < HeadDim || tokens > 1 && stride < HeadDim { panic: overlap }
	//	if n < HeadDim || heads > 1 && heads-1 > (n-HeadDim)/headStride || tokens > 1 && tokens-1 > (n-HeadDim)/stride { panic: short }
	//	tokenMajor := tokens == 1 || stride >= (heads-1)*headStride+HeadDim
	//	headMajor := heads == 1 || headStride >= (tokens-1)*stride+HeadDim
	//	if !tokenMajor && !headMajor { panic: overlap }
	//	if n < (tokens-1)*stride+(heads-1)*headStride+HeadDim { panic: short }
	// }
	pre := jen.Lit(pkg + ": ").Op("+").Id("fn").Op("+").Lit(": ")
	strides := jen.Lit("stride = ").Op("+").Add(itoa(id("stride"))).Op("+").Lit(", headStride = ").Op("+").Add(itoa(id("headStride")))
	overlap := jen.Add(pre).Op("+").Lit("heads overlap: ").Op("+").Add(strides).Op("+").Lit(", HeadDim = ").Op("+").Add(itoa(id("HeadDim")))
	short := jen.Add(pre).Op("+").Lit("len(x) = ").Op("+").Add(itoa(id("n"))).Op("+").Lit(", want at least (len(pos)-1)*stride+(heads-1)*headStride+HeadDim with len(pos) = ").
		Op("+").Add(itoa(id("tokens"))).Op("+").Lit(", heads = ").Op("+").Add(itoa(id("heads"))).Op("+").Lit(", ").Op("+").Add(strides)
	f.Comment("checkStrided panics unless heads ≥ 1, the strides that matter are in [0, n], the tokens·heads")
	f.Comment("heads of HeadDim floats at t·stride + h·headStride do not overlap, and they all lie")
	f.Comment("in the n floats of x. Two orders are accepted: token-major (heads HeadDim or more")
	f.Comment("apart, tokens at least a token's heads apart) and head-major (the transpose).")
	f.Func().Id("checkStrided").Params(id("fn").String(), ids("n", "tokens", "heads", "stride", "headStride").Int()).Block(
		jen.If(id("heads").Op("<").Lit(1)).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("heads = ").Op("+").Add(itoa(id("heads"))).Op("+").Lit(", want heads >= 1")),
		),
		jen.Comment("A stride only matters with more than one token (head); one larger than n"),
		jen.Comment("then cannot fit."),
		jen.If(id("stride").Op("<").Lit(0).Op("||").Id("headStride").Op("<").Lit(0).Op("||").
			Id("tokens").Op(">").Lit(1).Op("&&").Id("stride").Op(">").Id("n").Op("||").Id("heads").Op(">").Lit(1).Op("&&").Id("headStride").Op(">").Id("n")).Block(
			jen.Panic(jen.Add(pre).Op("+").Add(strides).Op("+").Lit(", want both in [0, len(x)] = [0, ").Op("+").Add(itoa(id("n"))).Op("+").Lit("]")),
		),
		jen.If(id("tokens").Op("==").Lit(0)).Block(jen.Return()),
		jen.Comment("Two heads (tokens) are HeadDim or more apart in either order, so a stride that"),
		jen.Comment("matters is at least HeadDim."),
		jen.If(id("heads").Op(">").Lit(1).Op("&&").Id("headStride").Op("<").Id("HeadDim").Op("||").Id("tokens").Op(">").Lit(1).Op("&&").Id("stride").Op("<").Id("HeadDim")).Block(
			jen.Panic(overlap),
		),
		jen.Comment("(heads−1)·headStride and (tokens−1)·stride must each fit in n−HeadDim: tested by"),
		jen.Comment("division, so that no product below can overflow (each is then at most n)."),
		jen.If(id("n").Op("<").Id("HeadDim").Op("||").
			Id("heads").Op(">").Lit(1).Op("&&").Id("heads").Op("-").Lit(1).Op(">").Parens(id("n").Op("-").Id("HeadDim")).Op("/").Id("headStride").Op("||").
			Id("tokens").Op(">").Lit(1).Op("&&").Id("tokens").Op("-").Lit(1).Op(">").Parens(id("n").Op("-").Id("HeadDim")).Op("/").Id("stride")).Block(
			jen.Panic(short),
		),
		id("tokenMajor").Op(":=").Id("tokens").Op("==").Lit(1).Op("||").Id("stride").Op(">=").Parens(id("heads").Op("-").Lit(1)).Op("*").Id("headStride").Op("+").Id("HeadDim"),
		id("headMajor").Op(":=").Id("heads").Op("==").Lit(1).Op("||").Id("headStride").Op(">=").Parens(id("tokens").Op("-").Lit(1)).Op("*").Id("stride").Op("+").Id("HeadDim"),
		jen.If(jen.Op("!").Id("tokenMajor").Op("&&").Op("!").Id("headMajor")).Block(
			jen.Panic(overlap),
		),
		jen.If(id("n").Op("<").Parens(id("tokens").Op("-").Lit(1)).Op("*").Id("stride").Op("+").Parens(id("heads").Op("-").Lit(1)).Op("*").Id("headStride").Op("+").Id("HeadDim")).Block(
			jen.Panic(short),
		),
	)
}

// ropeApplyQKStrided emits ApplyQKStrided, the packed QKV form.
func ropeApplyQKStrided(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	// func ApplyQKStrided(qkv []float32, pos []int32, qHeads, kHeads, stride int) {
	//	if qHeads < 1 || kHeads < 1 { panic }
	//	if stride/HeadDim < qHeads || stride/HeadDim-qHeads < kHeads { panic }   // stride < (qHeads+kHeads)*HeadDim
	//	if len(pos) == 0 { return }
	//	row := (qHeads + kHeads) * HeadDim
	//	if len(qkv) < row || len(pos)-1 > (len(qkv)-row)/stride { panic }
	//	rotateTokens(operand{qkv, qkv, qHeads + kHeads, stride, HeadDim}, operand{}, pos, 1)
	// }
	//
	// The key heads follow the query heads HeadDim apart, so q and k are one operand of
	// qHeads+kHeads heads: the same bits as two operands (the same row rotates both), and
	// one head loop per token instead of two. Measured on AMD EPYC (AVX-512, 16 tokens,
	// 32 + 8 heads, cache-resident; one process, interleaved rounds, median), the two-operand
	// call took 1.15–1.18× the time of ApplyQK on separate slices, the one-operand call
	// 0.98× — the same bytes in the same order.
	pre := jen.Lit(pkg + ": ApplyQKStrided: ")
	qk := jen.Parens(id("qHeads").Op("+").Id("kHeads")).Op("*").Id("HeadDim")
	f.Comment("ApplyQKStrided applies the rotary embedding in place to the queries and keys of a")
	f.Comment("packed QKV projection (vLLM's layout): token t's row starts at qkv[t*stride] and")
	f.Comment("holds qHeads query heads, then kHeads key heads, each HeadDim floats, then anything")
	f.Comment("else (the values), which is not touched; stride is usually")
	f.Comment("(qHeads+2*kHeads)*HeadDim. It equals ApplyQK on the gathered q and k. It panics,")
	f.Comment("before writing anything, if a head count is < 1, stride < (qHeads+kHeads)*HeadDim, or")
	f.Comment("len(qkv) < (len(pos)-1)*stride + (qHeads+kHeads)*HeadDim.")
	f.Func().Id("ApplyQKStrided").Params(id("qkv").Add(c.tensor()), id("pos").Index().Int32(), ids("qHeads", "kHeads", "stride").Int()).Block(
		jen.If(id("qHeads").Op("<").Lit(1).Op("||").Id("kHeads").Op("<").Lit(1)).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("qHeads = ").Op("+").Add(itoa(id("qHeads"))).Op("+").Lit(", kHeads = ").Op("+").Add(itoa(id("kHeads"))).Op("+").Lit(", want both >= 1")),
		),
		jen.Comment("stride ≥ (qHeads+kHeads)·HeadDim, tested by division: the sum and product may overflow."),
		jen.If(id("stride").Op("/").Id("HeadDim").Op("<").Id("qHeads").Op("||").Id("stride").Op("/").Id("HeadDim").Op("-").Id("qHeads").Op("<").Id("kHeads")).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("stride = ").Op("+").Add(itoa(id("stride"))).Op("+").Lit(", want stride >= (qHeads+kHeads)*HeadDim with qHeads = ").
				Op("+").Add(itoa(id("qHeads"))).Op("+").Lit(", kHeads = ").Op("+").Add(itoa(id("kHeads"))).Op("+").Lit(", HeadDim = ").Op("+").Add(itoa(id("HeadDim")))),
		),
		jen.If(jen.Len(id("pos")).Op("==").Lit(0)).Block(jen.Return()),
		jen.Comment("row ≤ stride ≤ math.MaxInt; (len(pos)−1)·stride is tested by division."),
		id("row").Op(":=").Add(qk),
		jen.If(jen.Len(id("qkv")).Op("<").Id("row").Op("||").Len(id("pos")).Op("-").Lit(1).Op(">").Parens(jen.Len(id("qkv")).Op("-").Id("row")).Op("/").Id("stride")).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("len(qkv) = ").Op("+").Add(itoa(jen.Len(id("qkv")))).Op("+").Lit(", want at least (len(pos)-1)*stride+(qHeads+kHeads)*HeadDim with len(pos) = ").
				Op("+").Add(itoa(jen.Len(id("pos")))).Op("+").Lit(", stride = ").Op("+").Add(itoa(id("stride"))).Op("+").Lit(", (qHeads+kHeads)*HeadDim = ").Op("+").Add(itoa(id("row")))),
		),
		jen.Comment("The key heads follow the query heads: one operand of qHeads+kHeads heads."),
		id("rotateTokens").Call(
			id("operand").Values(id("qkv"), id("qkv"), id("qHeads").Op("+").Id("kHeads"), id("stride"), id("HeadDim")),
			id("operand").Values(),
			id("pos"), jen.Lit(1)),
	)
}

// ropeApplyToSlots emits ApplyToSlots.
func ropeApplyToSlots(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	// func ApplyToSlots(cache []float32, slots []int32, src []float32, pos []int32, heads int) {
	//	checkShape("ApplyToSlots", "src", "heads", len(src), len(pos), heads)
	//	if len(slots) != len(pos) { panic }
	//	if len(cache)%HeadDim != 0 || len(cache)/HeadDim%heads != 0 { panic }
	//	nslots := len(cache) / HeadDim / heads
	//	for t, s := range slots { if uint(s) >= uint(nslots) { panic } }
	//	row := heads * HeadDim
	//	n := seqLen(pos)   (0 without a run-time switch)
	//	for t := 0; t < len(slots); {
	//		e := t + 1
	//		for e < len(slots) && slots[e] == slots[e-1]+1 { e++ }
	//		rotateTokensAt(operand{cache[int(slots[t])*row:], src[t*row:], heads, row, HeadDim}, operand{}, pos[t:e], n, 1)
	//		t = e
	//	}
	// }
	n := jen.Lit(0)
	if c.RuntimeSwitch() {
		n = id("seqLen").Call(id("pos"))
	}
	f.Comment("ApplyToSlots rotates token t of src ([len(pos)][heads][HeadDim]) by pos[t] and writes")
	f.Comment("it to slot slots[t] of cache, [len(cache)/(heads*HeadDim)][heads][HeadDim]: the")
	f.Comment("KV-cache append of paged attention (FlashInfer's append_paged_kv_cache; a slot is")
	f.Comment("page*pageSize + offset), without an intermediate copy. Runs of consecutive slots")
	f.Comment("go to the kernel in one call; the frequencies are those of the whole call,")
	f.Comment("FrequenciesAt(max(pos)+1). A slot given twice holds the later token. src is not")
	f.Comment("modified and must not overlap cache. It panics, before writing anything, if heads < 1,")
	f.Comment("len(src) != len(pos)*heads*HeadDim, len(slots) != len(pos), len(cache) is not a")
	f.Comment("multiple of heads*HeadDim, or a slot is outside the cache.")
	f.Func().Id("ApplyToSlots").Params(id("cache").Add(c.tensor()), id("slots").Index().Int32(), id("src").Add(c.tensor()), id("pos").Index().Int32(), id("heads").Int()).Block(
		id("checkShape").Call(jen.Lit("ApplyToSlots"), jen.Lit("src"), jen.Lit("heads"), jen.Len(id("src")), jen.Len(id("pos")), id("heads")),
		jen.If(jen.Len(id("slots")).Op("!=").Len(id("pos"))).Block(
			jen.Panic(jen.Lit(pkg+": ApplyToSlots: len(slots) = ").Op("+").Add(itoa(jen.Len(id("slots")))).Op("+").Lit(", want len(pos) = ").Op("+").Add(itoa(jen.Len(id("pos"))))),
		),
		jen.Comment("len(cache) a multiple of heads·HeadDim, tested by division: the product may overflow."),
		jen.If(jen.Len(id("cache")).Op("%").Id("HeadDim").Op("!=").Lit(0).Op("||").Len(id("cache")).Op("/").Id("HeadDim").Op("%").Id("heads").Op("!=").Lit(0)).Block(
			jen.Panic(jen.Lit(pkg+": ApplyToSlots: len(cache) = ").Op("+").Add(itoa(jen.Len(id("cache")))).Op("+").Lit(", want a multiple of heads*HeadDim with heads = ").
				Op("+").Add(itoa(id("heads"))).Op("+").Lit(", HeadDim = ").Op("+").Add(itoa(id("HeadDim")))),
		),
		id("nslots").Op(":=").Len(id("cache")).Op("/").Id("HeadDim").Op("/").Id("heads"),
		jen.For(ids("t", "s").Op(":=").Range().Id("slots")).Block(
			jen.If(jen.Uint().Call(id("s")).Op(">=").Uint().Call(id("nslots"))).Block(
				jen.Panic(jen.Lit(pkg+": ApplyToSlots: slots[").Op("+").Add(itoa(id("t"))).Op("+").Lit("] = ").Op("+").Add(itoa(jen.Int().Call(id("s")))).
					Op("+").Lit(", want a slot in [0, ").Op("+").Add(itoa(id("nslots"))).Op("+").Lit(")")),
			),
		),
		jen.Comment("A slot exists, so a row, heads·HeadDim, fits in len(cache)."),
		id("row").Op(":=").Id("heads").Op("*").Id("HeadDim"),
		id("n").Op(":=").Add(n),
		jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Len(id("slots")), jen.Empty()).Block(
			id("e").Op(":=").Id("t").Op("+").Lit(1),
			jen.For(id("e").Op("<").Len(id("slots")).Op("&&").Id("slots").Index(id("e")).Op("==").Id("slots").Index(id("e").Op("-").Lit(1)).Op("+").Lit(1)).Block(
				id("e").Op("++"),
			),
			id("o").Op(":=").Id("operand").Values(
				id("cache").Index(jen.Int().Call(id("slots").Index(id("t"))).Op("*").Id("row"), jen.Empty()),
				id("src").Index(id("t").Op("*").Id("row"), jen.Empty()),
				id("heads"), id("row"), id("HeadDim"),
			),
			id("rotateTokensAt").Call(id("o"), id("operand").Values(), id("pos").Index(id("t"), id("e")), id("n"), jen.Lit(1)),
			id("t").Op("=").Id("e"),
		),
	)
}

// ropeShift emits zeroIdx and Shift.
func ropeShift(f *jen.File, c *Consts) {
	pkg := c.Spec.Name
	f.Comment("zeroIdx selects row 0 for every token of a chunk: Shift's one row.")
	f.Var().Id("zeroIdx").Index(id("exactChunk")).Int32()

	// func Shift(x []float32, delta int32, heads, n int) {
	//	if heads < 1 || len(x)%HeadDim != 0 || len(x)/HeadDim%heads != 0 { panic }
	//	tokens := len(x) / HeadDim / heads
	//	if tokens == 0 { return }
	//	var w [nFreq]float64
	//	freqsAt(n, &w)
	//	rows := exactScratch.Get().(*[exactChunk * rowLen]float32)
	//	fillRow((*[rowLen]float32)(rows[:]), float64(delta), &w, 1)
	//	o := contiguous(x, x, heads)
	//	for t := 0; t < tokens; t += exactChunk {
	//		rotateRun(o.from(t), operand{}, rows[:rowLen], zeroIdx[:min(exactChunk, tokens-t)], 1)
	//	}
	//	exactScratch.Put(rows)
	// }
	f.Comment("Shift rotates every head of x, [tokens][heads][HeadDim] with tokens =")
	f.Comment("len(x)/(heads*HeadDim), in place by the angles delta·ω_i, without AttentionFactor:")
	f.Comment("the pure rotation that moves cached keys delta positions (ggml's context shift,")
	f.Comment("llama_kv_cache seq_add). The frequencies are FrequenciesAt(n); the row is computed")
	f.Comment("exactly, the angle float64(delta)·ω_i in float64, for any delta.")
	f.Comment("")
	f.Comment("RoPE rotations compose (RoFormer, Su et al. 2021: R(a)R(b) = R(a+b)), so for a key")
	f.Comment("rotated by Apply at position p, Shift(x, d, heads, n) gives Apply at p+d, up to")
	f.Comment("float32 rounding, whenever both Apply calls use FrequenciesAt(n): always for rules")
	f.Comment("without a run-time switch; for dynamic NTK when the calls' max(pos)+1 and n are all")
	f.Comment("≤ original_max_position (or all equal); for LongRoPE when they are on the same side")
	f.Comment("of original_max_position (short or long factors). AttentionFactor is not applied")
	f.Comment("again, so Shift(Apply(x, p), d) = Apply(x, p+d) also for YaRN and LongRoPE. It panics,")
	f.Comment("before writing anything, if heads < 1 or len(x) is not a multiple of heads*HeadDim.")
	nArg := id("n").Int()
	f.Func().Id("Shift").Params(id("x").Add(c.tensor()), id("delta").Int32(), id("heads"), nArg).Block(
		jen.Comment("len(x) a multiple of heads·HeadDim, tested by division: the product may overflow."),
		jen.If(id("heads").Op("<").Lit(1).Op("||").Len(id("x")).Op("%").Id("HeadDim").Op("!=").Lit(0).Op("||").Len(id("x")).Op("/").Id("HeadDim").Op("%").Id("heads").Op("!=").Lit(0)).Block(
			jen.Panic(jen.Lit(pkg+": Shift: heads = ").Op("+").Add(itoa(id("heads"))).Op("+").Lit(", len(x) = ").Op("+").Add(itoa(jen.Len(id("x")))).
				Op("+").Lit(", want heads >= 1 and len(x) a multiple of heads*HeadDim")),
		),
		id("tokens").Op(":=").Len(id("x")).Op("/").Id("HeadDim").Op("/").Id("heads"),
		jen.If(id("tokens").Op("==").Lit(0)).Block(jen.Return()),
		jen.Var().Id("w").Index(id("nFreq")).Float64(),
		id("freqsAt").Call(id("n"), jen.Op("&").Id("w")),
		id("rows").Op(":=").Id("exactScratch").Dot("Get").Call().Assert(jen.Op("*").Index(id("exactChunk").Op("*").Id("rowLen")).Float32()),
		id("fillRow").Call(jen.Parens(jen.Op("*").Index(id("rowLen")).Float32()).Call(id("rows").Index(jen.Empty(), jen.Empty())), jen.Float64().Call(id("delta")), jen.Op("&").Id("w"), jen.Lit(1)),
		jen.Comment("tokens ≥ 1, so a token's row, heads·HeadDim, fits in len(x)."),
		id("o").Op(":=").Id("contiguous").Call(id("x"), id("x"), id("heads")),
		jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Id("tokens"), id("t").Op("+=").Id("exactChunk")).Block(
			id("rotateRun").Call(id("o").Dot("from").Call(id("t")), id("operand").Values(),
				id("rows").Index(jen.Empty(), id("rowLen")),
				id("zeroIdx").Index(jen.Empty(), jen.Min(id("exactChunk"), id("tokens").Op("-").Id("t"))),
				jen.Lit(1)),
		),
		id("exactScratch").Dot("Put").Call(id("rows")),
	)
}
