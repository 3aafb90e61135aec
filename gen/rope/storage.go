package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/asm/abi"
)

// 16-bit storage (a spec's dtype f16 or bf16): the generated API takes raw
// []uint16 slices, each element the encoding of one value (IEEE 754
// binary16 for f16, bfloat16 for bf16), so it works with any float16 type.
// Kernels widen to float32, rotate with the float32 table rows and narrow
// back with round to nearest, ties to even. The table, the exact path and
// every check stay as they are; only the element type of the tensors
// changes.

// storage16 reports whether the spec stores its tensors in 16 bits.
func (c *Consts) storage16() bool {
	return c.Spec.DType == "f16" || c.Spec.DType == "bf16"
}

// elem is the Go element type of the package's tensors: float32, or uint16
// for f16 and bf16 storage.
func (c *Consts) elem() *jen.Statement {
	if c.storage16() {
		return jen.Uint16()
	}
	return jen.Float32()
}

// elemBytes is the size of one tensor element: 4, or 2 for 16-bit storage.
func (c *Consts) elemBytes() int {
	if c.storage16() {
		return 2
	}
	return 4
}

// tensor is the slice type of the package's tensors.
func (c *Consts) tensor() *jen.Statement { return jen.Index().Add(c.elem()) }

// rotateABI is the rotate kernel the package uses: abi.Rotate, or
// abi.Rotate16 for 16-bit storage.
func (c *Consts) rotateABI() abi.Kernel {
	if c.storage16() {
		return abi.Rotate16
	}
	return abi.Rotate
}

// storageDoc is the package-comment paragraph on the storage type ("" for
// float32).
func storageDoc(c *Consts) string {
	switch c.Spec.DType {
	case "f16":
		return "Storage is f16 (the spec's dtype): every tensor is a []uint16 of IEEE 754 binary16 " +
			"encodings (any float16 type converts without copying through unsafe.Slice). Values are " +
			"widened to float32, rotated in float32 and rounded back to the nearest binary16, ties to even."
	case "bf16":
		return "Storage is bf16 (the spec's dtype): every tensor is a []uint16 of bfloat16 encodings " +
			"(the upper 16 bits of a float32). Values are widened to float32, rotated in float32 and " +
			"rounded back to the nearest bfloat16, ties to even (the round_to_nearest_even rule of " +
			"e.g. PyTorch's c10::BFloat16)."
	}
	return ""
}

// ropeStorageFuncs emits widen and narrow, the conversions of the generic
// kernel between the storage type and float32.
func ropeStorageFuncs(f *jen.File, c *Consts) {
	bits := func(v jen.Code) *jen.Statement { return jen.Qual("math", "Float32bits").Call(v) }
	from := func(v jen.Code) *jen.Statement { return jen.Qual("math", "Float32frombits").Call(v) }
	u32 := func(v jen.Code) *jen.Statement { return jen.Uint32().Call(v) }
	if c.Spec.DType == "bf16" {
		// func widen(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
		f.Comment("widen returns the float32 a bfloat16 encodes: its bits are the float32's upper half.")
		f.Func().Id("widen").Params(jen.Id("h").Uint16()).Float32().Block(
			jen.Return(from(u32(jen.Id("h")).Op("<<").Lit(16))),
		)
		// func narrow(v float32) uint16 {
		//	b := math.Float32bits(v)
		//	if b&0x7fffffff > 0x7f800000 { return uint16(b>>16) | 0x40 }
		//	return uint16((b + 0x7fff + b>>16&1) >> 16)
		// }
		f.Comment("narrow rounds v to the nearest bfloat16, ties to even: adding 0x7FFF plus the lowest")
		f.Comment("kept bit to the float32 bits carries into bit 16 exactly when the dropped half is")
		f.Comment("above one half, or equal with an odd kept part (overflow yields the infinity). A NaN")
		f.Comment("keeps its sign and top payload bits and is made quiet instead, as the addition could")
		f.Comment("carry it into an infinity.")
		f.Func().Id("narrow").Params(jen.Id("v").Float32()).Uint16().Block(
			jen.Id("b").Op(":=").Add(bits(jen.Id("v"))),
			jen.If(jen.Id("b").Op("&").Lit(0x7fffffff).Op(">").Lit(0x7f800000)).Block(
				jen.Return(jen.Uint16().Call(jen.Id("b").Op(">>").Lit(16)).Op("|").Lit(0x40)),
			),
			jen.Return(jen.Uint16().Call(jen.Parens(jen.Id("b").Op("+").Lit(0x7fff).Op("+").Id("b").Op(">>").Lit(16).Op("&").Lit(1)).Op(">>").Lit(16))),
		)
		return
	}
	// f16: IEEE 754 binary16, bias 15, 10 fraction bits.
	f.Comment("widen returns the float32 an IEEE 754 binary16 encodes (exactly: every binary16 is a")
	f.Comment("float32): the exponent is rebiased from 15 to 127 and the fraction moved up 13 bits;")
	f.Comment("subnormals (exponent field 0) are fraction·2^−24; infinities and NaNs keep their fraction.")
	f.Func().Id("widen").Params(jen.Id("h").Uint16()).Float32().Block(
		jen.Id("sign").Op(":=").Uint32().Call(jen.Id("h").Op("&").Lit(0x8000)).Op("<<").Lit(16),
		jen.List(jen.Id("e"), jen.Id("m")).Op(":=").List(
			jen.Uint32().Call(jen.Id("h").Op(">>").Lit(10)).Op("&").Lit(0x1f),
			jen.Uint32().Call(jen.Id("h").Op("&").Lit(0x3ff)),
		),
		jen.Switch().Block(
			jen.Case(jen.Id("e").Op("==").Lit(0x1f)).Block(
				jen.Return(from(jen.Id("sign").Op("|").Lit(0x7f800000).Op("|").Id("m").Op("<<").Lit(13))),
			),
			jen.Case(jen.Id("e").Op("!=").Lit(0)).Block(
				jen.Return(from(jen.Id("sign").Op("|").Parens(jen.Id("e").Op("+").Lit(127-15)).Op("<<").Lit(23).Op("|").Id("m").Op("<<").Lit(13))),
			),
		),
		jen.Id("v").Op(":=").Float32().Call(jen.Id("m")).Op("*").Op("0x1p-24").Comment("subnormal or zero: exact"),
		jen.If(jen.Id("sign").Op("!=").Lit(0)).Block(jen.Id("v").Op("=").Op("-").Id("v")),
		jen.Return(jen.Id("v")),
	)
	// func narrow(v float32) uint16 { ... }
	f.Comment("narrow rounds v to the nearest IEEE 754 binary16, ties to even. From 65520 (65504")
	f.Comment("plus half an ulp) on the result is infinite; normal results rebias the exponent and")
	f.Comment("round the 13 dropped fraction bits by adding 0xFFF plus the lowest kept bit (a carry")
	f.Comment("may move into the exponent, correctly); below 2^−14 the 24-bit significand is shifted")
	f.Comment("down to units of 2^−24 and rounded to nearest even (2^−25 itself ties to 0). A NaN is")
	f.Comment("made quiet and keeps its top payload bits.")
	f.Func().Id("narrow").Params(jen.Id("v").Float32()).Uint16().Block(
		jen.Id("b").Op(":=").Add(bits(jen.Id("v"))),
		jen.List(jen.Id("sign"), jen.Id("a")).Op(":=").List(jen.Uint16().Call(jen.Id("b").Op(">>").Lit(16)).Op("&").Lit(0x8000), jen.Id("b").Op("&").Lit(0x7fffffff)),
		jen.Switch().Block(
			jen.Case(jen.Id("a").Op(">").Lit(0x7f800000)).Block(
				jen.Return(jen.Id("sign").Op("|").Lit(0x7e00).Op("|").Uint16().Call(jen.Id("a").Op(">>").Lit(13)).Op("&").Lit(0x1ff)),
			),
			jen.Case(jen.Id("a").Op(">=").Lit(0x477ff000)).Block(
				jen.Comment("≥ 65520: infinite"),
				jen.Return(jen.Id("sign").Op("|").Lit(0x7c00)),
			),
			jen.Case(jen.Id("a").Op(">=").Lit(0x38800000)).Block(
				jen.Comment("≥ 2^−14: normal"),
				jen.Id("a").Op("-=").Parens(jen.Lit(127-15)).Op("<<").Lit(23),
				jen.Return(jen.Id("sign").Op("|").Uint16().Call(jen.Parens(jen.Id("a").Op("+").Lit(0xfff).Op("+").Id("a").Op(">>").Lit(13).Op("&").Lit(1)).Op(">>").Lit(13))),
			),
			jen.Case(jen.Id("a").Op(">=").Lit(0x33000000)).Block(
				jen.Comment("≥ 2^−25: subnormal. a = m·2^(e−150) with the 24-bit significand m; in units of 2^−24 that is m >> (126−e)."),
				jen.Id("sh").Op(":=").Lit(126).Op("-").Id("a").Op(">>").Lit(23),
				jen.Id("m").Op(":=").Id("a").Op("&").Lit(0x7fffff).Op("|").Lit(0x800000),
				jen.List(jen.Id("q"), jen.Id("rem"), jen.Id("half")).Op(":=").List(
					jen.Id("m").Op(">>").Id("sh"), jen.Id("m").Op("&").Parens(jen.Lit(1).Op("<<").Id("sh").Op("-").Lit(1)), jen.Uint32().Call(jen.Lit(1)).Op("<<").Parens(jen.Id("sh").Op("-").Lit(1)),
				),
				jen.If(jen.Id("rem").Op(">").Id("half").Op("||").Id("rem").Op("==").Id("half").Op("&&").Id("q").Op("&").Lit(1).Op("==").Lit(1)).Block(
					jen.Id("q").Op("++"),
				),
				jen.Return(jen.Id("sign").Op("|").Uint16().Call(jen.Id("q"))),
			),
		),
		jen.Return(jen.Id("sign")).Comment("below 2^−25: zero"),
	)
}
