package rope

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

// DeepSeek V2/V3 (multi-head latent attention) around the rotary sub-head:
//
//   - The softmax scale. With a YaRN config that has mscale_all_dim,
//     transformers' DeepseekV3Attention sets
//     scaling = qk_head_dim^−0.5 · mscale², mscale =
//     yarn_get_mscale(factor, mscale_all_dim) = 0.1·mscale_all_dim·ln(factor) + 1
//     (1 for factor ≤ 1), as DeepSeek's own V2 modeling_deepseek.py and
//     V3 inference/model.py do; transformers' DeepseekV2Attention keeps
//     qk_head_dim^−0.5 alone. qk_head_dim (qk_nope_head_dim +
//     qk_rope_head_dim) is not part of the spec, so the generated package
//     exports the factor mscale² as SoftmaxScaleFactor and
//     SoftmaxScale(qkHeadDim).
//
//   - The order of the rotated dims. An interleaved package rotates pairs
//     (2i, 2i+1) and writes them back in place, as DeepSeek's
//     apply_rotary_emb (complex multiply) and transformers' DeepseekV2 do.
//     transformers' DeepseekV3 with rope_interleave (its default) first
//     permutes q_pe and k_pe to (x_0, x_2, …, x_1, x_3, …) and rotates
//     them in rotate_half order, so its outputs hold the same values
//     de-interleaved: out[i] = y[2i], out[R/2+i] = y[2i+1]. q·k is the
//     same either way; Deinterleave gives that order when a tensor must
//     match transformers' element for element.

// softmaxFactor returns mscale², mscale = yarn_get_mscale(factor,
// mscale_all_dim), and whether the spec asks for it (a yarn scaling with a
// non-zero mscale_all_dim, transformers' `if mscale_all_dim:`).
func softmaxFactor(s *spec.Spec) (float64, bool) {
	sc := s.Scaling
	if sc == nil || sc.Type != spec.ScaleYaRN || !sc.HasMscaleAllDim || sc.MscaleAllDim == 0 {
		return 0, false
	}
	m := yarnMscale(sc.Factor, sc.MscaleAllDim)
	return float64(m * m), true
}

// hasDeinterleave reports whether the package gets Deinterleave: every
// interleaved rope package.
func hasDeinterleave(s *spec.Spec) bool {
	return s.Layout == spec.LayoutInterleaved
}

// ropeDeepSeek emits SoftmaxScaleFactor and SoftmaxScale (specs with
// mscale_all_dim) and Deinterleave (interleaved layout).
func ropeDeepSeek(f *jen.File, c *Consts) {
	s := c.Spec
	pkg := s.Name
	if m2, ok := softmaxFactor(s); ok {
		sc := s.Scaling
		f.Comment(fmt.Sprintf("SoftmaxScaleFactor is mscale² with mscale = yarn_get_mscale(factor %s, mscale_all_dim %s)",
			ropeFloat(sc.Factor), ropeFloat(sc.MscaleAllDim)))
		f.Comment("= 0.1·mscale_all_dim·ln(factor) + 1 (1 for factor ≤ 1): DeepSeek multiplies its")
		f.Comment("attention softmax scale by it (transformers' DeepseekV3Attention; see SoftmaxScale).")
		f.Const().Id("SoftmaxScaleFactor").Op("=").Op(ropeFloatConst(m2))
		f.Comment("SoftmaxScale is the scale of q·k before the softmax that transformers'")
		f.Comment("DeepseekV3Attention uses, qkHeadDim^−0.5 · SoftmaxScaleFactor, where qkHeadDim is the")
		f.Comment("whole query/key head, qk_nope_head_dim + qk_rope_head_dim (128 + 64 = 192 for")
		f.Comment("DeepSeek V2 and V3), not HeadDim. DeepSeek's own code (V2 modeling_deepseek.py, V3")
		f.Comment("inference/model.py) uses the same scale; transformers' DeepseekV2Attention leaves")
		f.Comment("SoftmaxScaleFactor out (qkHeadDim^−0.5 alone): pass 1/math.Sqrt(qkHeadDim) to match")
		f.Comment("that class. It panics if qkHeadDim < 1.")
		f.Func().Id("SoftmaxScale").Params(id("qkHeadDim").Int()).Float64().Block(
			jen.If(id("qkHeadDim").Op("<").Lit(1)).Block(
				jen.Panic(jen.Lit(pkg+": SoftmaxScale: qkHeadDim = ").Op("+").Add(itoa(id("qkHeadDim"))).Op("+").Lit(", want qkHeadDim >= 1")),
			),
			jen.Return(jen.Qual("math", "Pow").Call(jen.Float64().Call(id("qkHeadDim")), jen.Lit(-0.5)).Op("*").Id("SoftmaxScaleFactor")),
		)
	}
	if !hasDeinterleave(s) {
		return
	}
	f.Comment("Deinterleave copies src, whole heads of HeadDim values, to dst with the rotated dims of")
	f.Comment("each head reordered from pairs (2i, 2i+1) to (i, RotaryDim/2+i):")
	f.Comment("")
	f.Comment("\tdst[h+i] = src[h+2i], dst[h+RotaryDim/2+i] = src[h+2i+1]  (i < RotaryDim/2)")
	f.Comment("")
	f.Comment("and the values from RotaryDim on copied as they are. After Apply (or ApplyQK) it gives")
	f.Comment("the order transformers' DeepseekV3 returns with rope_interleave (its default), whose")
	f.Comment("apply_rotary_pos_emb_interleave permutes q_pe and k_pe that way before rotating them")
	f.Comment("in rotate_half order; the values are the same, so q·k is too, and only a tensor")
	f.Comment("compared with or handed to that code needs it. It panics, before writing anything, if")
	f.Comment("len(dst) != len(src) or len(src) is not a multiple of HeadDim; dst and src must not overlap.")
	f.Func().Id("Deinterleave").Params(ids("dst", "src").Add(c.tensor())).Block(
		jen.If(jen.Len(id("dst")).Op("!=").Len(id("src")).Op("||").Len(id("src")).Op("%").Id("HeadDim").Op("!=").Lit(0)).Block(
			jen.Panic(jen.Lit(pkg+": Deinterleave: len(dst) = ").Op("+").Add(itoa(jen.Len(id("dst")))).Op("+").
				Lit(", len(src) = ").Op("+").Add(itoa(jen.Len(id("src")))).Op("+").
				Lit(", want equal and a multiple of HeadDim = ").Op("+").Add(itoa(id("HeadDim")))),
		),
		jen.For(id("h").Op(":=").Lit(0), id("h").Op("<").Len(id("src")), id("h").Op("+=").Id("HeadDim")).Block(
			ids("d", "x").Op(":=").List(id("dst").Index(id("h"), id("h").Op("+").Id("HeadDim")), id("src").Index(id("h"), id("h").Op("+").Id("HeadDim"))),
			jen.For(id("i").Op(":=").Range().Id("nFreq")).Block(
				id("d").Index(id("i")).Op("=").Id("x").Index(jen.Lit(2).Op("*").Id("i")),
				id("d").Index(id("nFreq").Op("+").Id("i")).Op("=").Id("x").Index(jen.Lit(2).Op("*").Id("i").Op("+").Lit(1)),
			),
			jen.Copy(id("d").Index(id("RotaryDim"), jen.Empty()), id("x").Index(id("RotaryDim"), jen.Empty())),
		),
	)
}

// deepseekDoc is the package-comment paragraph on the softmax scale and the
// de-interleaved order ("" when neither applies).
func deepseekDoc(c *Consts) string {
	s := c.Spec
	var p string
	if _, ok := softmaxFactor(s); ok {
		p = "DeepSeek: the attention's softmax scale is SoftmaxScale(qk_head_dim) = " +
			"qk_head_dim^−0.5 · SoftmaxScaleFactor (transformers' DeepseekV3Attention and DeepSeek's " +
			"own code; transformers' DeepseekV2Attention omits SoftmaxScaleFactor). "
	}
	if hasDeinterleave(s) {
		p += "Apply writes each rotated pair back to dims 2i and 2i+1 (the order of GPT-J, Llama 4 " +
			"and DeepSeek's own code); transformers' DeepseekV3 with rope_interleave returns the " +
			"same values de-interleaved, dim i then dim RotaryDim/2+i: Apply, then Deinterleave, " +
			"gives its order."
	}
	return p
}
