package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/spec"
)

// The table-free rows (issues 14 and 26): a position p outside the table
// is split into its four bytes, p = d3·2^24 + d2·2^16 + d1·2^8 + d0 with d3
// signed (two's complement, so negative positions split the same way), and
// by angle addition, (cos + i·sin)(pω) is the complex product of the four
// rows (cos + i·sin)(d_k·2^(8k)·ω): every digit has a table of 2^exactShift
// rows, cos and sin of d·2^(8k)·ω (the top one times AttentionFactor),
// computed in float64 from math.Sincos once per frequency set and rounded
// to float32. A row is then ((D3·D2)·D1)·D0 per pair in float32 (the farRows
// kernel, asm/abi FarRows), with no math.Sincos and no cache per token, so
// unrelated positions (one decode step of many sequences) cost what
// consecutive ones and table rows do.
//
// Errors, per pair: each digit's angle is a float64 product of an exact
// integer and ω rounded once, so the four angles add up to p·ω within about
// 2^−53·Σ|digit angle| ≤ 2^−52·(|p|+2^25)·ω_max (the 2^25 for small negative
// p, whose top digit −1 is cancelled by the others): 4.8e−7 rad at 2^31 and
// 7.5e−9 rad near 0 with ω = 1. The four float32 entries add at most 2^−25
// each and the three float32 complex products (every product, difference and
// sum rounded) at most √5·2^−24 each (Brent, Percival and Zimmermann 2007),
// about 5.7e−7 in all (measured: 2.1e−7 below 2^20 and 2.7e−7 above, over
// 12.8 million pairs), against the bounds 1e−6 and 1e−5 of docs/design.

// ropeExactShift is log2 of the rows of each digit table: 256 rows of
// RotaryDim float32 (128 KiB for RotaryDim 128, 512 KiB the four tables of
// a frequency set), built on first use: the layout of abi.FarRows.
const ropeExactShift = abi.FarDigitBits

// ropeRowSlots is the number of entries of the row cache of a frequency set
// (direct-mapped by position mod ropeRowSlots): the float32 rows of the
// last single-token positions, which every layer of a decode step asks for
// again.
const ropeRowSlots = 4

// ropeExactDigits is the number of 8-bit digits of an int32 position, each
// with a table of 2^ropeExactShift rows.
const ropeExactDigits = abi.FarDigits

// ropeExact emits the angle-addition path: the digit constants, freqSet
// with its digit tables and row caches, the farRows step and the sets of
// the spec's static frequencies.
func ropeExact(f *jen.File, c *Consts) {
	s := c.Spec
	f.Comment("exactShift is the bits of each digit of a position outside the table (its bytes),")
	f.Comment("exactLow the rows of each digit's table and exactDigits the digits of an int32.")
	f.Const().Defs(
		jen.Id("exactShift").Op("=").Lit(ropeExactShift),
		jen.Id("exactLow").Op("=").Lit(1).Op("<<").Id("exactShift"),
		jen.Id("exactDigits").Op("=").Lit(ropeExactDigits),
	)

	// type posRow struct { pos int32; row [rowLen]float32 }
	f.Comment("posRow is the float32 table row of one position outside the table.")
	f.Comment("row comes first, at the start of the allocation, so that the rotate kernel's loads")
	f.Comment("are aligned as in the table where the size class allows (RotaryDim 128: 576 bytes).")
	f.Type().Id("posRow").Struct(jen.Id("row").Index(jen.Id("rowLen")).Float32(), jen.Id("pos").Int32())

	// type freqSet struct { w *[nFreq]float64; digitOnce sync.Once; digits *[exactDigits*exactLow*2*nFreq]float32; rows, spare [4]atomic.Pointer[posRow]; chunks, chunkSpare [4]atomic.Pointer[posRows] }
	f.Comment("freqSet is a frequency set served by angle addition: its float32 digit tables")
	f.Comment("(built once, digitTables), a cache of the rows of single positions (rotateAt), one")
	f.Comment("of the rows of chunks (rotateChunk), and their spares. Cache entries are immutable")
	f.Comment("once stored, so concurrent calls are safe.")
	f.Type().Id("freqSet").Struct(
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
		jen.Id("digitOnce").Qual("sync", "Once"),
		jen.Id("digits").Op("*").Add(digitsType()),
		jen.Id("rows").Index(jen.Lit(ropeRowSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("posRow")),
		jen.Id("spare").Index(jen.Lit(ropeRowSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("posRow")),
		jen.List(jen.Id("chunks"), jen.Id("chunkSpare")).Index(jen.Lit(ropeChunkSlots)).Qual("sync/atomic", "Pointer").Types(jen.Id("posRows")),
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

	ropeChunkCache(f)

	// func (fs *freqSet) digitTables() *[exactDigits*exactLow*2*nFreq]float32
	f.Comment("digitTables returns the digit tables of fs (the operand of the farRows kernel,")
	f.Comment("asm/abi FarRows), building them on first use: row d of table k, at")
	f.Comment("(k·exactLow + d)·2·nFreq, holds cos and sin of v·ω_i, v = d·2^(exactShift·k)")
	f.Comment("(an exact integer, so the angle is one rounded float64 product), each value")
	f.Comment("computed in float64 and rounded once to float32; the top table (k = exactDigits−1)")
	f.Comment("takes d as a signed digit, int8(d), and is multiplied by AttentionFactor.")
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("digitTables").Params().Op("*").Add(digitsType()).Block(
		id("fs").Dot("digitOnce").Dot("Do").Call(jen.Func().Params().Block(
			id("t").Op(":=").New(digitsType()),
			jen.For(id("k").Op(":=").Lit(0), id("k").Op("<").Id("exactDigits"), id("k").Op("++")).Block(
				jen.For(id("d").Op(":=").Lit(0), id("d").Op("<").Id("exactLow"), id("d").Op("++")).Block(
					id("r").Op(":=").Parens(jen.Op("*").Index(jen.Lit(2).Op("*").Id("nFreq")).Float32()).Call(id("t").Index(jen.Parens(id("k").Op("*").Id("exactLow").Op("+").Id("d")).Op("*").Lit(2).Op("*").Id("nFreq"), jen.Empty())),
					id("v").Op(":=").Int64().Call(id("d")).Op("<<").Parens(id("exactShift").Op("*").Id("k")),
					id("a").Op(":=").Lit(1.0),
					jen.If(id("k").Op("==").Id("exactDigits").Op("-").Lit(1)).Block(
						jen.List(id("v"), id("a")).Op("=").List(jen.Int64().Call(jen.Int8().Call(id("d"))).Op("<<").Parens(id("exactShift").Op("*").Id("k")), id("AttentionFactor")),
					),
					jen.For(jen.List(id("i"), id("wi")).Op(":=").Range().Id("fs").Dot("w")).Block(
						jen.List(id("sn"), id("cs")).Op(":=").Qual("math", "Sincos").Call(jen.Float64().Call(id("v")).Op("*").Id("wi")),
						jen.List(id("r").Index(id("i")), id("r").Index(id("nFreq").Op("+").Id("i"))).Op("=").List(jen.Float32().Call(id("a").Op("*").Id("cs")), jen.Float32().Call(id("a").Op("*").Id("sn"))),
					),
				),
			),
			id("fs").Dot("digits").Op("=").Id("t"),
		)),
		jen.Return(id("fs").Dot("digits")),
	)

	// func farRowsGeneric(rows, digits []float32, pos []int32)
	f.Comment("cmul32 is the complex product (xc + i·xs)(yc + i·ys) in float32 with every")
	f.Comment("product rounded (float32(x*y) forbids an FMA, so every GOARCH gives the same")
	f.Comment("bits, those of the assembly farRows kernels).")
	f.Func().Id("cmul32").Params(jen.List(id("xc"), id("xs"), id("yc"), id("ys")).Float32()).Params(jen.Float32(), jen.Float32()).Block(
		jen.Return(
			jen.Float32().Call(id("xc").Op("*").Id("yc")).Op("-").Float32().Call(id("xs").Op("*").Id("ys")),
			jen.Float32().Call(id("xs").Op("*").Id("yc")).Op("+").Float32().Call(id("xc").Op("*").Id("ys")),
		),
	)
	dig := func(k int, what string) jen.Code {
		i := id("i")
		if what == "s" {
			i = id("nFreq").Op("+").Id("i")
		}
		return id("dr").Index(jen.Lit(k)).Index(i)
	}
	store := []jen.Code{
		jen.List(id("row").Index(id("i")), id("row").Index(id("nFreq").Op("+").Id("i"))).Op("=").List(id("rc"), id("rs")),
	}
	if s.Layout != spec.LayoutHalf {
		two := func() *jen.Statement { return jen.Lit(2).Op("*").Id("i") }
		store = []jen.Code{
			jen.List(id("row").Index(two()), id("row").Index(two().Op("+").Lit(1))).Op("=").List(id("rc"), id("rc")),
			jen.List(id("row").Index(id("RotaryDim").Op("+").Add(two())), id("row").Index(id("RotaryDim").Op("+").Add(two()).Op("+").Lit(1))).Op("=").List(id("rs"), id("rs")),
		}
	}
	f.Comment("farRowsGeneric is the portable farRows kernel (asm/abi FarRows): row t of rows")
	f.Comment("is ((D3·D2)·D1)·D0 per pair (cmul32), D_k the row of digits' table k at byte k")
	f.Comment("of pos[t].")
	f.Func().Id("farRowsGeneric").Params(jen.List(id("rows"), id("digits")).Index().Float32(), id("pos").Index().Int32()).Block(
		jen.For(jen.List(id("t"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("row").Op(":=").Add(ropeRowPtr(id("rows"), id("t"))),
			jen.Var().Id("dr").Index(id("exactDigits")).Op("*").Index(jen.Lit(2).Op("*").Id("nFreq")).Float32(),
			jen.For(id("k").Op(":=").Range().Id("dr")).Block(
				id("b").Op(":=").Int().Call(jen.Uint32().Call(id("p")).Op(">>").Parens(id("exactShift").Op("*").Id("k")).Op("&").Parens(id("exactLow").Op("-").Lit(1))),
				id("dr").Index(id("k")).Op("=").Parens(jen.Op("*").Index(jen.Lit(2).Op("*").Id("nFreq")).Float32()).Call(id("digits").Index(jen.Parens(id("k").Op("*").Id("exactLow").Op("+").Id("b")).Op("*").Lit(2).Op("*").Id("nFreq"), jen.Empty())),
			),
			jen.For(id("i").Op(":=").Lit(0), id("i").Op("<").Id("nFreq"), id("i").Op("++")).Block(append([]jen.Code{
				jen.List(id("mc"), id("ms")).Op(":=").Id("cmul32").Call(dig(3, "c"), dig(3, "s"), dig(2, "c"), dig(2, "s")),
				jen.List(id("hc"), id("hs")).Op(":=").Id("cmul32").Call(id("mc"), id("ms"), dig(1, "c"), dig(1, "s")),
				jen.List(id("rc"), id("rs")).Op(":=").Id("cmul32").Call(id("hc"), id("hs"), dig(0, "c"), dig(0, "s")),
			}, store...)...),
		),
	)

	// func (fs *freqSet) fillRows(rows []float32, pos []int32)
	f.Comment("fillRows computes the table rows of pos into rows by angle addition: one farRows")
	f.Comment("call of the active variant with the digit tables.")
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("fillRows").Params(id("rows").Index().Float32(), id("pos").Index().Int32()).Block(
		id("active").Dot("farRows").Call(
			id("rows").Index(jen.Empty(), jen.Len(id("pos")).Op("*").Id("rowLen")),
			id("fs").Dot("digitTables").Call().Index(jen.Empty(), jen.Empty()),
			id("pos"),
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

// digitsType is the type of a frequency set's digit tables:
// [exactDigits*exactLow*2*nFreq]float32.
func digitsType() *jen.Statement {
	return jen.Index(jen.Id("exactDigits").Op("*").Id("exactLow").Op("*").Lit(2).Op("*").Id("nFreq")).Float32()
}
