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

	// type sincos [2 * nFreq]float64
	f.Comment("sincos holds the cosines (at i) and sines (at nFreq+i) of one angle per pair, in")
	f.Comment("float64: the operand layout of the combineRows kernel (asm/abi CombineRows).")
	f.Type().Id("sincos").Index(jen.Lit(2).Op("*").Id("nFreq")).Float64()

	// type hiRow struct { hi int32; sc sincos }
	f.Comment("hiRow holds A·cos(hi·2^exactShift·ω_i) and A·sin(hi·2^exactShift·ω_i), A the")
	f.Comment("AttentionFactor: the factor of the positions [hi·exactLow, (hi+1)·exactLow).")
	f.Comment("sc comes first, at the start of the allocation: where the size class is a multiple")
	f.Comment("of 64 bytes (RotaryDim 128: 1152) the kernel's vector loads do not straddle cache")
	f.Comment("lines (with hi first they all did, which cost AVX-512 decode about 5%).")
	f.Type().Id("hiRow").Struct(jen.Id("sc").Id("sincos"), jen.Id("hi").Int32())

	// type posRow struct { pos int32; row [rowLen]float32 }
	f.Comment("posRow is the float32 table row of one position outside the table.")
	f.Comment("row comes first, at the start of the allocation, so that the rotate kernel's loads")
	f.Comment("are aligned as in the table where the size class allows (RotaryDim 128: 576 bytes).")
	f.Type().Id("posRow").Struct(jen.Id("row").Index(jen.Id("rowLen")).Float32(), jen.Id("pos").Int32())

	// type freqSet struct { w *[nFreq]float64; lowOnce sync.Once; low *[exactLow]sincos; hi [4]atomic.Pointer[hiRow]; rows [4]atomic.Pointer[posRow] }
	f.Comment("freqSet is a frequency set served by angle addition: its float64 low table,")
	f.Comment("cos and sin of lo·ω_i for lo < exactLow (built once), a direct-mapped cache of hi")
	f.Comment("rows and one of the rows of single positions (rotateAt). Cache entries are immutable")
	f.Comment("once stored, so concurrent calls are safe.")
	f.Type().Id("freqSet").Struct(
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
		jen.Id("lowOnce").Qual("sync", "Once"),
		jen.Id("low").Op("*").Index(jen.Id("exactLow").Op("*").Lit(2).Op("*").Id("nFreq")).Float64(),
		jen.Id("hi").Index(jen.Lit(ropeHiSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("hiRow")),
		jen.Id("rows").Index(jen.Lit(ropeRowSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("posRow")),
		jen.Id("spare").Index(jen.Lit(ropeRowSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("posRow")),
	)

	// func (fs *freqSet) rotateAt(q, k operand, pos []int32, sign float32) {
	//	p, i := pos[0], uint32(pos[0])%4
	//	r := fs.rows[i].Load()
	//	if r == nil || r.pos != p {
	//		s := fs.spare[i].Swap(nil)
	//		if s != nil && s.pos == p { // asked twice in a row: s becomes the cached row
	//			fs.rows[i].Store(s); r = s
	//		} else {
	//			if s == nil { s = new(posRow) }
	//			s.pos = p; fs.fillRows(s.row[:], pos)
	//			active.rotate(…, s.row[:], zeroIdx[:1], sign)
	//			fs.spare[i].Store(s)
	//			return
	//		}
	//	}
	//	active.rotate(…, r.row[:], zeroIdx[:1], sign)
	// }
	f.Comment("rotateAt rotates the one token of q and k at pos[0], a position outside the table,")
	f.Comment("with a row of fs. Every layer of a decode step asks for the same position, so the")
	f.Comment("row of a position asked for twice in a row (per slot) is cached; later calls use it")
	f.Comment("as it is. A position asked for once has its row computed into the slot's spare")
	f.Comment("posRow, which the call owns between taking it (Swap) and putting it back, and")
	f.Comment("which becomes the cached row when the next call of the slot asks for its")
	f.Comment("position again (a one-token call allocates only when another goroutine holds the")
	f.Comment("spare, or once per cached position). Cached rows are never modified, so")
	f.Comment("concurrent calls are safe.")
	slot := jen.Uint32().Call(jen.Id("pos").Index(jen.Lit(0))).Op("%").Lit(ropeRowSlots)
	rot := func(row jen.Code) jen.Code {
		return jen.Id("active").Dot("rotate").Call(kernelArgs("q", "k", row, jen.Id("zeroIdx").Index(jen.Empty(), jen.Lit(1)))...)
	}
	sp := jen.Id("fs").Dot("spare").Index(jen.Id("i"))
	f.Func().Params(jen.Id("fs").Op("*").Id("freqSet")).Id("rotateAt").Params(
		jen.List(jen.Id("q"), jen.Id("k")).Id("operand"), jen.Id("pos").Index().Int32(), jen.Id("sign").Float32(),
	).Block(
		jen.List(jen.Id("p"), jen.Id("i")).Op(":=").List(jen.Id("pos").Index(jen.Lit(0)), slot),
		jen.Id("r").Op(":=").Id("fs").Dot("rows").Index(jen.Id("i")).Dot("Load").Call(),
		jen.If(jen.Id("r").Op("==").Nil().Op("||").Id("r").Dot("pos").Op("!=").Id("p")).Block(
			jen.Id("s").Op(":=").Add(sp.Clone()).Dot("Swap").Call(jen.Nil()),
			jen.If(jen.Id("s").Op("!=").Nil().Op("&&").Id("s").Dot("pos").Op("==").Id("p")).Block(
				jen.Comment("Asked for twice in a row: the spare becomes the slot's cached row."),
				jen.Id("fs").Dot("rows").Index(jen.Id("i")).Dot("Store").Call(jen.Id("s")),
				jen.Id("r").Op("=").Id("s"),
			).Else().Block(
				jen.If(jen.Id("s").Op("==").Nil()).Block(jen.Id("s").Op("=").New(jen.Id("posRow"))),
				jen.Id("s").Dot("pos").Op("=").Id("p"),
				jen.Id("fs").Dot("fillRows").Call(jen.Id("s").Dot("row").Index(jen.Empty(), jen.Empty()), jen.Id("pos")),
				rot(jen.Id("s").Dot("row").Index(jen.Empty(), jen.Empty())),
				sp.Clone().Dot("Store").Call(jen.Id("s")),
				jen.Return(),
			),
		),
		rot(jen.Id("r").Dot("row").Index(jen.Empty(), jen.Empty())),
	)

	// func (fs *freqSet) lowRows() *[exactLow * 2 * nFreq]float64
	f.Comment("lowRows returns cos(lo·ω_i) and sin(lo·ω_i) for lo < exactLow, building them on first use:")
	f.Comment("row lo is a sincos at lo·2·nFreq.")
	lowType := jen.Index(jen.Id("exactLow").Op("*").Lit(2).Op("*").Id("nFreq")).Float64()
	f.Func().Params(jen.Id("fs").Op("*").Id("freqSet")).Id("lowRows").Params().Op("*").Add(lowType.Clone()).Block(
		jen.Id("fs").Dot("lowOnce").Dot("Do").Call(jen.Func().Params().Block(
			jen.Id("low").Op(":=").New(lowType.Clone()),
			jen.For(jen.Id("lo").Op(":=").Lit(0), jen.Id("lo").Op("<").Id("exactLow"), jen.Id("lo").Op("++")).Block(
				jen.Id("r").Op(":=").Parens(jen.Op("*").Id("sincos")).Call(jen.Id("low").Index(jen.Id("lo").Op("*").Lit(2).Op("*").Id("nFreq"), jen.Empty())),
				jen.For(jen.List(jen.Id("i"), jen.Id("wi")).Op(":=").Range().Id("fs").Dot("w")).Block(
					jen.List(jen.Id("r").Index(jen.Id("nFreq").Op("+").Id("i")), jen.Id("r").Index(jen.Id("i"))).Op("=").
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
			jen.List(jen.Id("h").Dot("sc").Index(jen.Id("i")), jen.Id("h").Dot("sc").Index(jen.Id("nFreq").Op("+").Id("i"))).Op("=").
				List(jen.Id("AttentionFactor").Op("*").Id("cs"), jen.Id("AttentionFactor").Op("*").Id("sn")),
		),
		jen.Id("slot").Dot("Store").Call(jen.Id("h")),
		jen.Return(jen.Id("h")),
	)

	// func (fs *freqSet) fillRows(rows []float32, pos []int32)
	f.Comment("fillRows computes the table rows of pos into rows by angle addition: one")
	f.Comment("combineRows call of the active variant per run of positions sharing hi.")
	id := jen.Id
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("fillRows").Params(id("rows").Index().Float32(), id("pos").Index().Int32()).Block(
		id("low").Op(":=").Id("fs").Dot("lowRows").Call(),
		jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Len(id("pos")), jen.Empty()).Block(
			id("hi").Op(":=").Id("pos").Index(id("t")).Op(">>").Id("exactShift"),
			id("e").Op(":=").Id("t").Op("+").Lit(1),
			jen.For(id("e").Op("<").Len(id("pos")).Op("&&").Id("pos").Index(id("e")).Op(">>").Id("exactShift").Op("==").Id("hi")).Block(
				id("e").Op("++"),
			),
			id("active").Dot("combineRows").Call(
				id("rows").Index(id("t").Op("*").Id("rowLen"), id("e").Op("*").Id("rowLen")),
				id("fs").Dot("hiRow").Call(id("hi")).Dot("sc").Index(jen.Empty(), jen.Empty()),
				id("low").Index(jen.Empty(), jen.Empty()),
				id("pos").Index(id("t"), id("e")),
				id("exactLow").Op("-").Lit(1),
			),
			id("t").Op("=").Id("e"),
		),
	)

	// func combineRowsGeneric(rows []float32, hi, low []float64, pos []int32, mask int)
	f.Comment("combineRowsGeneric is the portable combineRows kernel (asm/abi CombineRows): row t")
	f.Comment("of rows is combine of hi and the low row pos[t]&mask.")
	f.Func().Id("combineRowsGeneric").Params(id("rows").Index().Float32(), jen.List(id("hi"), id("low")).Index().Float64(), id("pos").Index().Int32(), id("mask").Int()).Block(
		id("h").Op(":=").Parens(jen.Op("*").Id("sincos")).Call(id("hi")),
		jen.For(jen.List(id("t"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("combine").Call(ropeRowPtr(id("rows"), id("t")), id("h"),
				jen.Parens(jen.Op("*").Id("sincos")).Call(id("low").Index(jen.Parens(jen.Int().Call(id("p")).Op("&").Id("mask")).Op("*").Parens(jen.Lit(2).Op("*").Id("nFreq")), jen.Empty()))),
		),
	)

	// func combine(row *[rowLen]float32, h, l *sincos) — the complex product h·l per pair, rounded once.
	f.Comment("combine stores in row the product of the hi factors h and the lo factors l per")
	f.Comment("pair, (hc + i·hs)(lc + i·ls), in float64 with every product rounded (never fused,")
	f.Comment("as in the assembly kernels), rounded once to float32; two pairs per iteration give")
	f.Comment("the out-of-order core two independent chains.")
	pair := func(j jen.Code, sfx string) []jen.Code {
		at := func(arr string) *jen.Statement { return jen.Id(arr).Index(j) }
		c, sn := "c"+sfx, "s"+sfx
		// float64(x*y): an explicit conversion forbids fusing the product
		// into an FMA (Go spec, Arithmetic operators), as the assembly
		// kernels do not fuse either.
		prod := func(x, y string) *jen.Statement { return jen.Float64().Call(at(x).Op("*").Add(at(y))) }
		code := []jen.Code{
			jen.List(jen.Id(c), jen.Id(sn)).Op(":=").List(
				prod("hc", "lc").Op("-").Add(prod("hs", "ls")),
				prod("hs", "lc").Op("+").Add(prod("hc", "ls")),
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
		half := func(v, lo string) jen.Code {
			return jen.Parens(jen.Op("*").Index(jen.Id("nFreq")).Float64()).Call(jen.Id(v).Index(jen.Id(lo), jen.Empty()))
		}
		g.List(jen.Id("hc"), jen.Id("hs"), jen.Id("lc"), jen.Id("ls")).Op(":=").List(
			half("h", "0"), half("h", "nFreq"), half("l", "0"), half("l", "nFreq"))
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
