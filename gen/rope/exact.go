package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

// The table-free rows (issue 14): a position outside the table is split as
// p = hi·2^exactShift + lo with lo in [0, 2^exactShift) (an arithmetic shift,
// so negative positions split the same way), and by angle addition
//
//	cos(pω) = cos(hi·2^k·ω)·cos(lo·ω) − sin(hi·2^k·ω)·sin(lo·ω)
//	sin(pω) = sin(hi·2^k·ω)·cos(lo·ω) + cos(hi·2^k·ω)·sin(lo·ω)
//
// in float64. The lo factors come from a float64 table of 2^exactShift rows
// built once per frequency set; the hi factors (already multiplied by
// AttentionFactor) are computed with math.Sincos once per distinct hi and
// kept in a small lock-free cache, so consecutive decode and prefill
// positions, which share hi, cost one complex multiply per pair. Each
// angle is a float64 product rounded once, as the reference's fl(p·ω), so
// the angle differs from the reference's by at most about 2^−52·|p·ω|
// (2.3e−10 rad at |p| = 2^20 and ω = 1, 4.8e−7 rad at 2^31, against the
// bounds 1e−6 and 1e−5 of docs/design), and the float64 combination adds a
// few 2^−53; the row is rounded once to float32 as the table's rows are.

// ropeExactShift is log2 of the rows of the float64 low table: 256 rows,
// 2^8·RotaryDim·8 bytes (256 KiB for RotaryDim 128), built on first use.
const ropeExactShift = 8

// ropeHiSlots is the number of entries of the hi cache of a frequency set
// (direct-mapped by hi mod ropeHiSlots): a prefill chunk straddling a
// boundary and a decode stream in another goroutine keep their rows.
const ropeHiSlots = 4

// ropeExact emits the angle-addition path: exactShift, sincos, hiRow,
// freqSet with its low table and hi cache, the combine step and the sets of
// the spec's static frequencies.
func ropeExact(f *jen.File, c *Consts) {
	s := c.Spec
	f.Comment("exactShift splits a position outside the table as p = hi·2^exactShift + lo,")
	f.Comment("lo in [0, exactLow), for the angle addition of the exact path.")
	f.Const().Defs(
		jen.Id("exactShift").Op("=").Lit(ropeExactShift),
		jen.Id("exactLow").Op("=").Lit(1).Op("<<").Id("exactShift"),
	)

	// type sincos struct{ c, s [nFreq]float64 }
	f.Comment("sincos holds the cosines and sines of one angle per pair, in float64.")
	f.Type().Id("sincos").Struct(jen.List(jen.Id("c"), jen.Id("s")).Index(jen.Id("nFreq")).Float64())

	// type hiRow struct { hi int32; sincos }
	f.Comment("hiRow holds A·cos(hi·2^exactShift·ω_i) and A·sin(hi·2^exactShift·ω_i), A the")
	f.Comment("AttentionFactor: the factor of the positions [hi·exactLow, (hi+1)·exactLow).")
	f.Type().Id("hiRow").Struct(jen.Id("hi").Int32(), jen.Id("sincos"))

	// type freqSet struct { w *[nFreq]float64; lowOnce sync.Once; low *[exactLow]sincos; hi [4]atomic.Pointer[hiRow] }
	f.Comment("freqSet is a frequency set served by angle addition: its float64 low table,")
	f.Comment("cos and sin of lo·ω_i for lo < exactLow (built once), and a direct-mapped cache")
	f.Comment("of hi rows. Cache entries are immutable once stored, so concurrent calls are safe.")
	f.Type().Id("freqSet").Struct(
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
		jen.Id("lowOnce").Qual("sync", "Once"),
		jen.Id("low").Op("*").Index(jen.Id("exactLow")).Id("sincos"),
		jen.Id("hi").Index(jen.Lit(ropeHiSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("hiRow")),
	)

	// func (fs *freqSet) lowRows() *[exactLow]sincos
	f.Comment("lowRows returns cos(lo·ω_i) and sin(lo·ω_i) for lo < exactLow, building them on first use.")
	f.Func().Params(jen.Id("fs").Op("*").Id("freqSet")).Id("lowRows").Params().Op("*").Index(jen.Id("exactLow")).Id("sincos").Block(
		jen.Id("fs").Dot("lowOnce").Dot("Do").Call(jen.Func().Params().Block(
			jen.Id("low").Op(":=").New(jen.Index(jen.Id("exactLow")).Id("sincos")),
			jen.For(jen.Id("lo").Op(":=").Range().Id("low")).Block(
				jen.For(jen.List(jen.Id("i"), jen.Id("wi")).Op(":=").Range().Id("fs").Dot("w")).Block(
					jen.List(jen.Id("low").Index(jen.Id("lo")).Dot("s").Index(jen.Id("i")), jen.Id("low").Index(jen.Id("lo")).Dot("c").Index(jen.Id("i"))).Op("=").
						Qual("math", "Sincos").Call(jen.Float64().Call(jen.Id("lo")).Op("*").Id("wi")),
				),
			),
			jen.Id("fs").Dot("low").Op("=").Id("low"),
		)),
		jen.Return(jen.Id("fs").Dot("low")),
	)

	// func (fs *freqSet) hiRow(hi int32) *hiRow
	f.Comment("hiRow returns the hi row of fs, from the cache or computed with math.Sincos (which")
	f.Comment("reduces large arguments accurately); hi·exactLow is an exact float64 and the angle")
	f.Comment("hi·exactLow·ω_i a product rounded once.")
	f.Func().Params(jen.Id("fs").Op("*").Id("freqSet")).Id("hiRow").Params(jen.Id("hi").Int32()).Op("*").Id("hiRow").Block(
		jen.Id("slot").Op(":=").Op("&").Id("fs").Dot("hi").Index(jen.Uint32().Call(jen.Id("hi")).Op("%").Lit(ropeHiSlots)),
		jen.If(jen.Id("h").Op(":=").Id("slot").Dot("Load").Call(), jen.Id("h").Op("!=").Nil().Op("&&").Id("h").Dot("hi").Op("==").Id("hi")).Block(
			jen.Return(jen.Id("h")),
		),
		jen.Id("h").Op(":=").Op("&").Id("hiRow").Values(jen.Dict{jen.Id("hi"): jen.Id("hi")}),
		jen.Id("base").Op(":=").Float64().Call(jen.Id("hi")).Op("*").Id("exactLow"),
		jen.For(jen.List(jen.Id("i"), jen.Id("wi")).Op(":=").Range().Id("fs").Dot("w")).Block(
			jen.List(jen.Id("sn"), jen.Id("cs")).Op(":=").Qual("math", "Sincos").Call(jen.Id("base").Op("*").Id("wi")),
			jen.List(jen.Id("h").Dot("c").Index(jen.Id("i")), jen.Id("h").Dot("s").Index(jen.Id("i"))).Op("=").
				List(jen.Id("AttentionFactor").Op("*").Id("cs"), jen.Id("AttentionFactor").Op("*").Id("sn")),
		),
		jen.Id("slot").Dot("Store").Call(jen.Id("h")),
		jen.Return(jen.Id("h")),
	)

	// func (fs *freqSet) fillRows(rows []float32, pos []int32)
	f.Comment("fillRows computes the table rows of pos into rows by angle addition, looking the")
	f.Comment("hi row up only when hi changes.")
	f.Func().Params(jen.Id("fs").Op("*").Id("freqSet")).Id("fillRows").Params(jen.Id("rows").Index().Float32(), jen.Id("pos").Index().Int32()).Block(
		jen.Id("low").Op(":=").Id("fs").Dot("lowRows").Call(),
		jen.Var().Id("h").Op("*").Id("hiRow"),
		jen.For(jen.List(jen.Id("t"), jen.Id("p")).Op(":=").Range().Id("pos")).Block(
			jen.If(jen.Id("hi").Op(":=").Id("p").Op(">>").Id("exactShift"), jen.Id("h").Op("==").Nil().Op("||").Id("h").Dot("hi").Op("!=").Id("hi")).Block(
				jen.Id("h").Op("=").Id("fs").Dot("hiRow").Call(jen.Id("hi")),
			),
			jen.Id("combine").Call(ropeRowPtr(jen.Id("rows"), jen.Id("t")), jen.Op("&").Id("h").Dot("sincos"), jen.Op("&").Id("low").Index(jen.Id("p").Op("&").Parens(jen.Id("exactLow").Op("-").Lit(1)))),
		),
	)

	// func combine(row *[rowLen]float32, h, l *sincos) — the complex product h·l per pair, rounded once.
	f.Comment("combine stores in row the product of the hi factors h and the lo factors l per")
	f.Comment("pair, (hc + i·hs)(lc + i·ls), in float64, rounded once to float32.")
	hc := jen.Id("hc").Op("*").Id("lc").Op("-").Id("hs").Op("*").Id("ls")
	hs := jen.Id("hs").Op("*").Id("lc").Op("+").Id("hc").Op("*").Id("ls")
	var store []jen.Code
	if s.Layout == spec.LayoutHalf {
		store = []jen.Code{
			jen.List(jen.Id("row").Index(jen.Id("i")), jen.Id("row").Index(jen.Id("nFreq").Op("+").Id("i"))).Op("=").
				List(jen.Float32().Call(hc), jen.Float32().Call(hs)),
		}
	} else {
		store = []jen.Code{
			jen.List(jen.Id("cf"), jen.Id("sf")).Op(":=").List(jen.Float32().Call(hc), jen.Float32().Call(hs)),
			jen.List(jen.Id("row").Index(jen.Lit(2).Op("*").Id("i")), jen.Id("row").Index(jen.Lit(2).Op("*").Id("i").Op("+").Lit(1))).Op("=").List(jen.Id("cf"), jen.Id("cf")),
			jen.List(jen.Id("row").Index(jen.Id("RotaryDim").Op("+").Lit(2).Op("*").Id("i")), jen.Id("row").Index(jen.Id("RotaryDim").Op("+").Lit(2).Op("*").Id("i").Op("+").Lit(1))).Op("=").List(jen.Id("sf"), jen.Id("sf")),
		}
	}
	f.Func().Id("combine").Params(jen.Id("row").Op("*").Index(jen.Id("rowLen")).Float32(), jen.List(jen.Id("h"), jen.Id("l")).Op("*").Id("sincos")).Block(
		jen.For(jen.Id("i").Op(":=").Range().Id("nFreq")).Block(
			append([]jen.Code{
				jen.List(jen.Id("hc"), jen.Id("hs"), jen.Id("lc"), jen.Id("ls")).Op(":=").List(
					jen.Id("h").Dot("c").Index(jen.Id("i")), jen.Id("h").Dot("s").Index(jen.Id("i")),
					jen.Id("l").Dot("c").Index(jen.Id("i")), jen.Id("l").Dot("s").Index(jen.Id("i"))),
			}, store...)...,
		),
	)

	// var freqsSet = freqSet{w: &freqs}  (and longFreqsSet for longrope)
	f.Comment("freqsSet serves the exact rows of freqs.")
	f.Var().Id("freqsSet").Op("=").Id("freqSet").Values(jen.Dict{jen.Id("w"): jen.Op("&").Id("freqs")})
	if ropeScaling(s) == spec.ScaleLongRoPE {
		f.Comment("longFreqsSet serves the exact rows of longFreqs.")
		f.Var().Id("longFreqsSet").Op("=").Id("freqSet").Values(jen.Dict{jen.Id("w"): jen.Op("&").Id("longFreqs")})
	}
}
