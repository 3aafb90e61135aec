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

// ropeRowSlots is the number of entries of the row cache of a frequency set
// (direct-mapped by position mod ropeRowSlots): the float32 rows of the
// last single-token positions, which every layer of a decode step asks for
// again.
const ropeRowSlots = 4

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

	// type posRow struct { pos int32; row [rowLen]float32 }
	f.Comment("posRow is the float32 table row of one position outside the table.")
	f.Type().Id("posRow").Struct(jen.Id("pos").Int32(), jen.Id("row").Index(jen.Id("rowLen")).Float32())

	// type freqSet struct { w *[nFreq]float64; lowOnce sync.Once; low *[exactLow]sincos; hi [4]atomic.Pointer[hiRow]; rows [4]atomic.Pointer[posRow] }
	f.Comment("freqSet is a frequency set served by angle addition: its float64 low table,")
	f.Comment("cos and sin of lo·ω_i for lo < exactLow (built once), a direct-mapped cache of hi")
	f.Comment("rows and one of the rows of single positions (rotateAt). Cache entries are immutable")
	f.Comment("once stored, so concurrent calls are safe.")
	f.Type().Id("freqSet").Struct(
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
		jen.Id("lowOnce").Qual("sync", "Once"),
		jen.Id("low").Op("*").Index(jen.Id("exactLow")).Id("sincos"),
		jen.Id("hi").Index(jen.Lit(ropeHiSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("hiRow")),
		jen.Id("rows").Index(jen.Lit(ropeRowSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("posRow")),
		jen.Id("asked").Index(jen.Lit(ropeRowSlots)).Qual("sync/atomic", "Int64"),
	)

	// func (fs *freqSet) rotateAt(q, k operand, pos []int32, sign float32)
	f.Comment("rotateAt rotates the one token of q and k at pos[0], a position outside the table,")
	f.Comment("with a row of fs. Every layer of a decode step asks for the same position, so a")
	f.Comment("position asked for twice in a row (per slot) has its row computed into a new posRow")
	f.Comment("and cached; later calls use it as it is. A position asked for once has its row")
	f.Comment("computed into the scratch buffer (rotateExact), allocating nothing. Cached rows are")
	f.Comment("never modified, so concurrent calls are safe; asked[slot] holds the last position")
	f.Comment("asked for, with bit 40 set (0 is no position).")
	slot := jen.Uint32().Call(jen.Id("pos").Index(jen.Lit(0))).Op("%").Lit(ropeRowSlots)
	f.Func().Params(jen.Id("fs").Op("*").Id("freqSet")).Id("rotateAt").Params(
		jen.List(jen.Id("q"), jen.Id("k")).Id("operand"), jen.Id("pos").Index().Int32(), jen.Id("sign").Float32(),
	).Block(
		jen.List(jen.Id("p"), jen.Id("i")).Op(":=").List(jen.Id("pos").Index(jen.Lit(0)), slot),
		jen.Id("r").Op(":=").Id("fs").Dot("rows").Index(jen.Id("i")).Dot("Load").Call(),
		jen.If(jen.Id("r").Op("==").Nil().Op("||").Id("r").Dot("pos").Op("!=").Id("p")).Block(
			jen.If(jen.Id("key").Op(":=").Int64().Call(jen.Id("p")).Op("|").Lit(1).Op("<<").Lit(40), jen.Id("fs").Dot("asked").Index(jen.Id("i")).Dot("Swap").Call(jen.Id("key")).Op("!=").Id("key")).Block(
				jen.Id("rotateExact").Call(rotateExactArgs(c)...),
				jen.Return(),
			),
			jen.Id("r").Op("=").Op("&").Id("posRow").Values(jen.Dict{jen.Id("pos"): jen.Id("p")}),
			jen.Id("fs").Dot("fillRows").Call(jen.Id("r").Dot("row").Index(jen.Empty(), jen.Empty()), jen.Id("pos")),
			jen.Id("fs").Dot("rows").Index(jen.Id("i")).Dot("Store").Call(jen.Id("r")),
		),
		jen.Id("active").Dot("rotate").Call(kernelArgs("q", "k", jen.Id("r").Dot("row").Index(jen.Empty(), jen.Empty()), jen.Id("zeroIdx").Index(jen.Empty(), jen.Lit(1)))...),
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
	f.Comment("pair, (hc + i·hs)(lc + i·ls), in float64, rounded once to float32; two pairs per")
	f.Comment("iteration give the out-of-order core two independent chains.")
	pair := func(j jen.Code, sfx string) []jen.Code {
		at := func(arr string) *jen.Statement { return jen.Id(arr).Index(j) }
		c, sn := "c"+sfx, "s"+sfx
		code := []jen.Code{
			jen.List(jen.Id(c), jen.Id(sn)).Op(":=").List(
				at("hc").Op("*").Add(at("lc")).Op("-").Add(at("hs")).Op("*").Add(at("ls")),
				at("hs").Op("*").Add(at("lc")).Op("+").Add(at("hc")).Op("*").Add(at("ls")),
			),
		}
		if s.Layout == spec.LayoutHalf {
			return append(code, jen.List(jen.Id("row").Index(j), jen.Id("row").Index(jen.Id("nFreq").Op("+").Add(j))).Op("=").
				List(jen.Float32().Call(jen.Id(c)), jen.Float32().Call(jen.Id(sn))))
		}
		cf, sf := "cf"+sfx, "sf"+sfx
		two := jen.Lit(2).Op("*").Parens(j)
		return append(code,
			jen.List(jen.Id(cf), jen.Id(sf)).Op(":=").List(jen.Float32().Call(jen.Id(c)), jen.Float32().Call(jen.Id(sn))),
			jen.List(jen.Id("row").Index(two.Clone()), jen.Id("row").Index(two.Clone().Op("+").Lit(1))).Op("=").List(jen.Id(cf), jen.Id(cf)),
			jen.List(jen.Id("row").Index(jen.Id("RotaryDim").Op("+").Add(two.Clone())), jen.Id("row").Index(jen.Id("RotaryDim").Op("+").Add(two.Clone()).Op("+").Lit(1))).Op("=").List(jen.Id(sf), jen.Id(sf)),
		)
	}
	f.Func().Id("combine").Params(jen.Id("row").Op("*").Index(jen.Id("rowLen")).Float32(), jen.List(jen.Id("h"), jen.Id("l")).Op("*").Id("sincos")).BlockFunc(func(g *jen.Group) {
		g.List(jen.Id("hc"), jen.Id("hs"), jen.Id("lc"), jen.Id("ls")).Op(":=").List(
			jen.Op("&").Id("h").Dot("c"), jen.Op("&").Id("h").Dot("s"), jen.Op("&").Id("l").Dot("c"), jen.Op("&").Id("l").Dot("s"))
		body := append(pair(jen.Id("i"), "0"), pair(jen.Id("i").Op("+").Lit(1), "1")...)
		g.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("+").Lit(1).Op("<").Id("nFreq"), jen.Id("i").Op("+=").Lit(2)).Block(body...)
		if (s.RotaryDim/2)%2 == 1 {
			g.Comment("The last pair of an odd pair count.")
			for _, st := range pair(jen.Id("nFreq").Op("-").Lit(1), "") {
				g.Add(st)
			}
		}
	})

	// var freqsSet = freqSet{w: &freqs}  (and longFreqsSet for longrope)
	f.Comment("freqsSet serves the exact rows of freqs.")
	f.Var().Id("freqsSet").Op("=").Id("freqSet").Values(jen.Dict{jen.Id("w"): jen.Op("&").Id("freqs")})
	if ropeScaling(s) == spec.ScaleLongRoPE {
		f.Comment("longFreqsSet serves the exact rows of longFreqs.")
		f.Var().Id("longFreqsSet").Op("=").Id("freqSet").Values(jen.Dict{jen.Id("w"): jen.Op("&").Id("longFreqs")})
	}
}

// rotateExactArgs are rotateAt's arguments of rotateExact: q, k, pos, fs (and
// no rescaled frequencies for dynamic NTK), sign.
func rotateExactArgs(c *Consts) []jen.Code {
	args := []jen.Code{jen.Id("q"), jen.Id("k"), jen.Id("pos"), jen.Id("fs")}
	if ropeScaling(c.Spec) == spec.ScaleDynamic {
		args = append(args, jen.Nil())
	}
	return append(args, jen.Id("sign"))
}
