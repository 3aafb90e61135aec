package bias

import "github.com/dave/jennifer/jen"

// The portable ALiBi ramp kernels of an alibi package's <name>_generic.go:
// the bias nslope·|t0 − j| formed per key instead of read from a table.

// biasRampGeneric emits softmaxRampGeneric, the portable softmaxRamp.
func biasRampGeneric(f *jen.File) {
	// func softmaxRampGeneric(row []float32, scale, nslope, t0 float32) {
	//	sc, ns, t := float64(scale), float64(nslope), float64(t0)
	//	mx := math.Inf(-1)
	//	for j, v := range row { mx = max(mx, sc*float64(v)+ns*math.Abs(t-float64(j))) }
	//	var sum float64
	//	for j, v := range row { e := expNeg(sc*float64(v) + ns*math.Abs(t-float64(j)) - mx); row[j] = float32(e); sum += e }
	//	inv := float32(1 / sum)
	//	for j := range row { row[j] *= inv }
	// }
	logit := func() *jen.Statement {
		return jen.Id("sc").Op("*").Float64().Call(jen.Id("v")).Op("+").Id("ns").Op("*").Qual("math", "Abs").Call(jen.Id("t").Op("-").Float64().Call(jen.Id("j")))
	}
	f.Comment("softmaxRampGeneric sets row[j] = softmax_j(scale·row[j] + nslope·|t0 − j|): softmaxRowGeneric")
	f.Comment("with the ALiBi bias (Press et al. 2022) formed in float64 instead of read from a table.")
	f.Func().Id("softmaxRampGeneric").Params(jen.Id("row").Index().Float32(), jen.List(jen.Id("scale"), jen.Id("nslope"), jen.Id("t0")).Float32()).Block(
		jen.List(jen.Id("sc"), jen.Id("ns"), jen.Id("t")).Op(":=").List(jen.Float64().Call(jen.Id("scale")), jen.Float64().Call(jen.Id("nslope")), jen.Float64().Call(jen.Id("t0"))),
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
}

// biasAddRampGeneric emits addRampGeneric, the portable addRamp.
func biasAddRampGeneric(f *jen.File) {
	// func addRampGeneric(dst []float32, nslope, t0 float64) {
	//	for j := range dst { dst[j] += float32(nslope * math.Abs(t0-float64(j))) }
	// }
	f.Comment("addRampGeneric adds the ALiBi bias (Press et al. 2022) nslope·|t0 − j| to dst[j], formed")
	f.Comment("in float64 and rounded once to float32: bit for bit the table entry fillD writes.")
	f.Func().Id("addRampGeneric").Params(jen.Id("dst").Index().Float32(), jen.List(jen.Id("nslope"), jen.Id("t0")).Float64()).Block(
		jen.For(jen.Id("j").Op(":=").Range().Id("dst")).Block(
			jen.Id("dst").Index(jen.Id("j")).Op("+=").Float32().Call(
				jen.Id("nslope").Op("*").Qual("math", "Abs").Call(jen.Id("t0").Op("-").Float64().Call(jen.Id("j"))),
			),
		),
	)
}
