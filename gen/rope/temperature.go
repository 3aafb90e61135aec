package rope

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/gen/gocode"
)

// Llama 4's attention-temperature tuning (spec key attn_temperature,
// spec/attntemp.go): transformers' Llama4TextAttention.forward multiplies
// the query states of its NoPE layers by
//
//	s(p) = log1p(floor((p + 1) / floor_scale)) · attn_scale + 1
//
// per token position p. The generated package exports TemperatureAt and
// ScaleQ; ScaleQ computes s in float64 once per token, rounds it to
// float32, and runs the scaleRows kernel (abi.ScaleRows) over the tokens'
// rows, so each value is one float32 multiply on every variant.

// ropeTempChunk is the number of tokens whose factors ScaleQ computes into
// a stack array before one scaleRows call.
const ropeTempChunk = 256

// temperatureFields is the kernels-struct field of scaleRows when the spec
// has attn_temperature (none otherwise).
func temperatureFields(c *Consts) []gocode.KernelField {
	if c.Spec.AttnTemperature == nil {
		return nil
	}
	k := c.scaleRowsABI()
	return []gocode.KernelField{{Name: k.Field, Type: k.FuncType()}}
}

// scaleRowsABI is the scaleRows kernel of the package: abi.ScaleRows, or
// abi.ScaleRows16 for 16-bit storage.
func (c *Consts) scaleRowsABI() abi.Kernel {
	if c.storage16() {
		return abi.ScaleRows16
	}
	return abi.ScaleRows
}

// temperatureGenericKernel adds scaleRows: scaleRowsGeneric to the
// genericKernels dict d and emits scaleRowsGeneric into f.
func temperatureGenericKernel(f *jen.File, d jen.Dict, c *Consts) {
	if c.Spec.AttnTemperature == nil {
		return
	}
	d[id("scaleRows")] = id("scaleRowsGeneric")
	// row[j] *= s, or for 16-bit storage row[j] = narrow(widen(row[j]) * s)
	// (widen and narrow of the generic rotate kernel, storage.go).
	body := id("row").Index(id("j")).Op("*=").Id("s")
	if c.storage16() {
		body = id("row").Index(id("j")).Op("=").Id("narrow").Call(id("widen").Call(id("row").Index(id("j"))).Op("*").Id("s"))
		f.Comment("scaleRowsGeneric is the portable scaleRows kernel (asm/abi ScaleRows16): every")
		f.Comment("value of row t widened to float32, multiplied by scales[t] (one rounding) and")
		f.Comment("narrowed back to nearest even, for t < len(scales), j < rowLen.")
	} else {
		f.Comment("scaleRowsGeneric is the portable scaleRows kernel (asm/abi ScaleRows):")
		f.Comment("x[t*rowLen+j] *= scales[t] for t < len(scales), j < rowLen.")
	}
	params := []jen.Code{ids("x", "scales").Index().Float32(), id("rowLen").Int()}
	if c.storage16() {
		params = []jen.Code{id("x").Add(c.tensor()), id("scales").Index().Float32(), id("rowLen").Int()}
	}
	f.Func().Id("scaleRowsGeneric").Params(params...).Block(
		jen.For(jen.List(id("t"), id("s")).Op(":=").Range().Id("scales")).Block(
			id("row").Op(":=").Id("x").Index(id("t").Op("*").Id("rowLen"), parens(id("t").Op("+").Lit(1)).Op("*").Id("rowLen")),
			jen.For(id("j").Op(":=").Range().Id("row")).Block(body),
		),
	)
}

// ropeTemperature emits FloorScale, AttnScale, TemperatureAt and ScaleQ
// (nothing without attn_temperature).
func ropeTemperature(f *jen.File, c *Consts) {
	a := c.Spec.AttnTemperature
	if a == nil {
		return
	}
	pkg := c.Spec.Name
	f.Comment("FloorScale and AttnScale are the attn_temperature constants of the spec (Llama 4's")
	f.Comment("floor_scale and attn_scale, Llama4TextConfig; transformers modeling_llama4.py).")
	f.Const().Defs(
		id("FloorScale").Op("=").Lit(a.FloorScale),
		id("AttnScale").Op("=").Id(ropeFloatConst(a.AttnScale)),
	)

	f.Comment("TemperatureAt is Llama 4's query temperature at position p (transformers")
	f.Comment("Llama4TextAttention.forward, attn_temperature_tuning):")
	f.Comment("")
	f.Comment("\ts(p) = log1p(floor((p+1)/FloorScale))·AttnScale + 1")
	f.Comment("")
	f.Comment("in float64, the floor taken exactly in integers (transformers evaluates it in")
	f.Comment("float32 from a float32 position, the same value below 2^24 for a power-of-two")
	f.Comment("FloorScale). A negative position gets 1, as positions 0 … FloorScale−2 do.")
	f.Func().Id("TemperatureAt").Params(id("p").Int32()).Float64().Block(
		jen.If(id("p").Op("<").Lit(0)).Block(jen.Return(jen.Lit(1.0))),
		id("n").Op(":=").Parens(jen.Int64().Call(id("p")).Op("+").Lit(1)).Op("/").Id("FloorScale"),
		jen.Return(jen.Qual("math", "Log1p").Call(jen.Float64().Call(id("n"))).Op("*").Id("AttnScale").Op("+").Lit(1)),
	)

	f.Comment("ScaleQ multiplies the queries q, [len(pos)][heads][HeadDim], in place by Llama 4's")
	f.Comment("attention temperature: every value of token t times float32(TemperatureAt(pos[t])),")
	f.Comment("the query_states * attn_scales of the NoPE layers (Llama4TextAttention.forward; the")
	if c.storage16() {
		f.Comment("RoPE layers do not call it). Each value is widened to float32, multiplied (one")
		f.Comment("correctly rounded float32 product) and rounded back to the storage type, nearest even.")
	} else {
		f.Comment("RoPE layers do not call it). Each value is one correctly rounded float32 product.")
	}
	f.Comment("It panics, before writing anything, if heads < 1 or len(q) != len(pos)*heads*HeadDim.")
	pre := jen.Lit(pkg + ": ScaleQ: ")
	f.Func().Id("ScaleQ").Params(id("q").Add(c.tensor()), id("pos").Index().Int32(), id("heads").Int()).Block(
		jen.If(id("heads").Op("<").Lit(1)).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("heads = ").Op("+").Add(itoa(id("heads"))).Op("+").Lit(", want heads >= 1")),
		),
		id("row").Op(":=").Id("heads").Op("*").Id("HeadDim"),
		jen.If(id("row").Op("/").Id("HeadDim").Op("!=").Id("heads").Op("||").Len(id("pos")).Op("!=").Lit(0).Op("&&").Id("row").Op(">").Qual("math", "MaxInt").Op("/").Len(id("pos")).Op("||").Len(id("q")).Op("!=").Len(id("pos")).Op("*").Id("row")).Block(
			jen.Panic(jen.Add(pre).Op("+").Lit("len(q) = ").Op("+").Add(itoa(jen.Len(id("q")))).Op("+").Lit(", want len(pos)*heads*HeadDim with len(pos) = ").
				Op("+").Add(itoa(jen.Len(id("pos")))).Op("+").Lit(", heads = ").Op("+").Add(itoa(id("heads")))),
		),
		jen.Var().Id("sc").Index(jen.Lit(ropeTempChunk)).Float32(),
		jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Len(id("pos")), id("t").Op("+=").Lit(ropeTempChunk)).Block(
			id("n").Op(":=").Min(jen.Lit(ropeTempChunk), jen.Len(id("pos")).Op("-").Id("t")),
			jen.For(id("i").Op(":=").Range().Id("sc").Index(jen.Empty(), id("n"))).Block(
				id("sc").Index(id("i")).Op("=").Float32().Call(id("TemperatureAt").Call(id("pos").Index(id("t").Op("+").Id("i")))),
			),
			id("active").Dot("scaleRows").Call(id("q").Index(id("t").Op("*").Id("row"), parens(id("t").Op("+").Id("n")).Op("*").Id("row")), id("sc").Index(jen.Empty(), id("n")), id("row")),
		),
	)
}

// temperatureDoc is the package-comment paragraph of a spec with
// attn_temperature ("" otherwise).
func temperatureDoc(c *Consts) string {
	a := c.Spec.AttnTemperature
	if a == nil {
		return ""
	}
	return fmt.Sprintf("Attention temperature (Llama 4, attn_temperature): ScaleQ multiplies the queries of the NoPE layers by log1p(floor((pos+1)/%d))·%s + 1 per token, TemperatureAt gives the factor.",
		a.FloorScale, ropeFloat(a.AttnScale))
}
