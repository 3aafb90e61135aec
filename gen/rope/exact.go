package rope

import (
	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/spec"
)

// The table-free rows (issues 14 and 26): a position outside the table is
// split as p = hi·2^exactShift + lo with lo in [0, 2^exactShift) (an
// arithmetic shift, so negative positions split the same way), and by angle
// addition
//
//	cos(pω) = cos(hi·2^k·ω)·cos(lo·ω) − sin(hi·2^k·ω)·sin(lo·ω)
//	sin(pω) = sin(hi·2^k·ω)·cos(lo·ω) + cos(hi·2^k·ω)·sin(lo·ω)
//
// in float64. The hi factors come by the same addition from the three 8-bit
// digits of hi (bits 8–15, 16–23 and the signed bits 24–31 of p): every
// digit has a float64 table of 2^exactShift rows, cos and sin of
// digit·2^(8k)·ω (the top one times AttentionFactor), built once per
// frequency set from math.Sincos with the low table. A hi row is then two
// complex products per pair, in Go, with no math.Sincos per token, so
// unrelated positions (one decode step of many sequences) cost about what
// consecutive ones do. Each digit's angle is a float64 product of an exact
// integer and ω rounded once; the four angles add up to p·ω with an error
// of at most about 2^−53·Σ|digit angle| ≤ 2^−52·(|p|+2^25)·ω_max (the
// 2^25 for small negative p, whose top digit −1 is cancelled by the
// others): 4.8e−7 rad at 2^31 and 7.5e−9 rad near 0 with ω = 1, against the
// bounds 1e−6 and 1e−5 of docs/design. The three float64 complex products
// add a few 2^−53 each, and the row is rounded once to float32 as the
// table's rows are.

// ropeExactShift is log2 of the rows of each float64 digit table: 256 rows,
// 2^8·RotaryDim·8 bytes (256 KiB for RotaryDim 128; the four tables 1 MiB
// per frequency set), built on first use.
const ropeExactShift = 8

// ropeRowSlots is the number of entries of the row cache of a frequency set
// (direct-mapped by position mod ropeRowSlots): the float32 rows of the
// last single-token positions, which every layer of a decode step asks for
// again.
const ropeRowSlots = 4

// ropeHiSlots is the number of entries of the hi-row cache of a frequency
// set, direct-mapped by hi mod ropeHiSlots: enough that the hi rows of one
// decode step of 64 unrelated sequences seldom share a slot (about 6% of
// them do), at 16 bytes per slot and a 1152-byte row per cached hi.
const ropeHiSlots = 1024

// ropeFarShift is log2 of the largest |p| served by the float64 hi rows:
// beyond 2^20 the bound is 1e−5 (docs/design), and the float32 digit rows of
// the farRows kernel (asm/abi FarRows), three float32 complex products per
// pair and no hi row, stay within 3e−7 of cos and sin there (about half of
// the float64 path's own angle error at 2^31).
const ropeFarShift = 20

// ropeExactDigits is the number of 8-bit digits of an int32 position, each
// with a float64 table of 2^ropeExactShift rows: lo and the three of hi.
const ropeExactDigits = 4

// ropeExact emits the angle-addition path: exactShift, sincos, freqSet with
// its digit tables, the hi rows, the combine step and the sets of the
// spec's static frequencies.
func ropeExact(f *jen.File, c *Consts) {
	s := c.Spec
	f.Comment("exactShift splits a position outside the table as p = hi·2^exactShift + lo,")
	f.Comment("lo in [0, exactLow), for the angle addition of the exact path.")
	f.Comment("exactDigits is the number of exactShift-bit digits of an int32 position: lo and")
	f.Comment("the three of hi, each with a float64 table of exactLow rows.")
	f.Const().Defs(
		jen.Id("exactShift").Op("=").Lit(ropeExactShift),
		jen.Id("exactLow").Op("=").Lit(1).Op("<<").Id("exactShift"),
		jen.Id("exactDigits").Op("=").Lit(ropeExactDigits),
	)
	f.Comment("farPosition is where the far path begins: a position p with |p| > farPosition,")
	f.Comment("where the bound is 1e−5, has its row from the float32 digit tables (farDigits) by")
	f.Comment("the farRows kernel; nearer ones by the float64 hi rows and combineRows.")
	f.Const().Id("farPosition").Op("=").Lit(1).Op("<<").Lit(ropeFarShift)

	// type sincos [2 * nFreq]float64
	f.Comment("sincos holds the cosines (at i) and sines (at nFreq+i) of one angle per pair, in")
	f.Comment("float64: the operand layout of the combineRows kernel (asm/abi CombineRows).")
	f.Type().Id("sincos").Index(jen.Lit(2).Op("*").Id("nFreq")).Float64()

	// var hiScratch = sync.Pool{New: func() any { return new(sincos) }}
	f.Comment("hiScratch holds an uncached hi row of fillRows (a pool: the kernels are called")
	f.Comment("through the variant table, so a stack array would escape). A sincos is 16·nFreq")
	f.Comment("bytes, a size class that keeps the kernel's vector loads within cache lines for")
	f.Comment("RotaryDim 128 (1 KiB).")
	f.Var().Id("hiScratch").Op("=").Qual("sync", "Pool").Values(jen.Dict{jen.Id("New"): jen.Func().Params().Any().Block(
		jen.Return(jen.New(jen.Id("sincos"))))})

	// type hiRow struct { sc sincos; hi int32 }
	f.Comment("hiRow is a cached hi row: A·cos and A·sin of hi·exactLow·ω_i (the factor of the")
	f.Comment("positions [hi·exactLow, (hi+1)·exactLow)); sc first, at the start of the")
	f.Comment("allocation, so that the kernel's vector loads stay within cache lines.")
	f.Type().Id("hiRow").Struct(jen.Id("sc").Id("sincos"), jen.Id("hi").Int32())

	// type hiSlot struct { row atomic.Pointer[hiRow]; missed atomic.Int32 }
	f.Comment("hiSlot is an entry of the hi-row cache: the cached row, immutable once stored,")
	f.Comment("and the hi of the slot's last miss. A hi is cached at its second miss in a row")
	f.Comment("(every layer of a decode step asks for the same positions), so positions asked")
	f.Comment("for once (a new random batch every call) allocate nothing.")
	f.Type().Id("hiSlot").Struct(
		jen.Id("row").Qual("sync/atomic", "Pointer").Types(jen.Id("hiRow")),
		jen.Id("missed").Qual("sync/atomic", "Int32"),
	)

	// type posRow struct { pos int32; row [rowLen]float32 }
	f.Comment("posRow is the float32 table row of one position outside the table.")
	f.Comment("row comes first, at the start of the allocation, so that the rotate kernel's loads")
	f.Comment("are aligned as in the table where the size class allows (RotaryDim 128: 576 bytes).")
	f.Type().Id("posRow").Struct(jen.Id("row").Index(jen.Id("rowLen")).Float32(), jen.Id("pos").Int32())

	// type freqSet struct { w *[nFreq]float64; digitOnce sync.Once; digits *[exactDigits*exactLow*2*nFreq]float64; hi [1024]hiSlot; rows, spare [4]atomic.Pointer[posRow]; chunks, chunkSpare [4]atomic.Pointer[posRows] }
	f.Comment("freqSet is a frequency set served by angle addition: its float64 digit tables")
	f.Comment("(built once, digitRows) and their float32 roundings (farDigits), a direct-mapped cache of hi rows (hiRowOf), one of the")
	f.Comment("rows of single positions (rotateAt), one of the rows of chunks (rotateChunk), and")
	f.Comment("their spares. Cache entries are immutable once stored, so concurrent calls are safe.")
	f.Type().Id("freqSet").Struct(
		jen.Id("w").Op("*").Index(jen.Id("nFreq")).Float64(),
		jen.Id("digitOnce").Qual("sync", "Once"),
		jen.Id("digits").Op("*").Add(digitsType()),
		jen.Id("farOnce").Qual("sync", "Once"),
		jen.Id("far").Op("*").Add(farDigitsType()),
		jen.Id("hi").Index(jen.Lit(ropeHiSlots)).Id("hiSlot"),
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

	// func (fs *freqSet) digitRows() *[exactDigits*exactLow*2*nFreq]float64
	id := jen.Id
	f.Comment("digitRow stores in r row d of digit table k of the frequencies w: cos and sin of")
	f.Comment("v·ω_i, v = d·2^(exactShift·k) (an exact integer, so the angle is one rounded")
	f.Comment("product); the top table (k = exactDigits−1) takes d as a signed digit, int8(d),")
	f.Comment("and is multiplied by AttentionFactor.")
	f.Func().Id("digitRow").Params(id("r").Op("*").Id("sincos"), id("w").Op("*").Index(id("nFreq")).Float64(), jen.List(id("k"), id("d")).Int()).Block(
		id("v").Op(":=").Int64().Call(id("d")).Op("<<").Parens(id("exactShift").Op("*").Id("k")),
		id("a").Op(":=").Lit(1.0),
		jen.If(id("k").Op("==").Id("exactDigits").Op("-").Lit(1)).Block(
			jen.List(id("v"), id("a")).Op("=").List(jen.Int64().Call(jen.Int8().Call(id("d"))).Op("<<").Parens(id("exactShift").Op("*").Id("k")), id("AttentionFactor")),
		),
		jen.For(jen.List(id("i"), id("wi")).Op(":=").Range().Id("w")).Block(
			jen.List(id("sn"), id("cs")).Op(":=").Qual("math", "Sincos").Call(jen.Float64().Call(id("v")).Op("*").Id("wi")),
			jen.List(id("r").Index(id("i")), id("r").Index(id("nFreq").Op("+").Id("i"))).Op("=").List(id("a").Op("*").Id("cs"), id("a").Op("*").Id("sn")),
		),
	)

	// func (fs *freqSet) digitRows() *[exactDigits*exactLow*2*nFreq]float64
	f.Comment("digitRows returns the digit tables of fs, building them on first use: row d of")
	f.Comment("table k (digitRow) is a sincos at (k·exactLow + d)·2·nFreq. Table 0 is the low")
	f.Comment("table of the combineRows kernel; 1…3 give the hi rows (hiFromDigits).")
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("digitRows").Params().Op("*").Add(digitsType()).Block(
		id("fs").Dot("digitOnce").Dot("Do").Call(jen.Func().Params().Block(
			id("t").Op(":=").New(digitsType()),
			jen.For(id("k").Op(":=").Lit(0), id("k").Op("<").Id("exactDigits"), id("k").Op("++")).Block(
				jen.For(id("d").Op(":=").Lit(0), id("d").Op("<").Id("exactLow"), id("d").Op("++")).Block(
					id("digitRow").Call(jen.Parens(jen.Op("*").Id("sincos")).Call(id("t").Index(jen.Parens(id("k").Op("*").Id("exactLow").Op("+").Id("d")).Op("*").Lit(2).Op("*").Id("nFreq"), jen.Empty())), id("fs").Dot("w"), id("k"), id("d")),
				),
			),
			id("fs").Dot("digits").Op("=").Id("t"),
		)),
		jen.Return(id("fs").Dot("digits")),
	)

	// func (fs *freqSet) farDigits() *[exactDigits*exactLow*2*nFreq]float32
	f.Comment("farDigits returns the digit tables of the farRows kernel (asm/abi FarRows):")
	f.Comment("digitRow's rows, each value rounded once to float32, in the layout of digitRows;")
	f.Comment("built on first use, without the float64 tables.")
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("farDigits").Params().Op("*").Add(farDigitsType()).Block(
		id("fs").Dot("farOnce").Dot("Do").Call(jen.Func().Params().Block(
			id("t").Op(":=").New(farDigitsType()),
			jen.Var().Id("r").Id("sincos"),
			jen.For(id("k").Op(":=").Lit(0), id("k").Op("<").Id("exactDigits"), id("k").Op("++")).Block(
				jen.For(id("d").Op(":=").Lit(0), id("d").Op("<").Id("exactLow"), id("d").Op("++")).Block(
					id("digitRow").Call(jen.Op("&").Id("r"), id("fs").Dot("w"), id("k"), id("d")),
					jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Id("r")).Block(
						id("t").Index(jen.Parens(id("k").Op("*").Id("exactLow").Op("+").Id("d")).Op("*").Lit(2).Op("*").Id("nFreq").Op("+").Id("i")).Op("=").Float32().Call(id("x")),
					),
				),
			),
			id("fs").Dot("far").Op("=").Id("t"),
		)),
		jen.Return(id("fs").Dot("far")),
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

	// func hiFromDigits(h *sincos, t *digits, hi int32)
	digit := func(k int, sh jen.Code) jen.Code {
		return jen.Parens(jen.Op("*").Id("sincos")).Call(id("t").Index(
			jen.Parens(jen.Lit(k).Op("*").Id("exactLow").Op("+").Int().Call(jen.Add(sh).Op("&").Parens(id("exactLow").Op("-").Lit(1)))).Op("*").Lit(2).Op("*").Id("nFreq"), jen.Empty()))
	}
	f.Comment("hiFromDigits stores in h the hi row of hi = p>>exactShift, A·cos and A·sin of")
	f.Comment("hi·exactLow·ω_i, as the product of the rows of its three digits in the tables t")
	f.Comment("(digitRows), top·mid·low, by the hiRow kernel of the active variant (asm/abi")
	f.Comment("HiRow); the top digit is signed and carries A. No math.Sincos.")
	f.Func().Id("hiFromDigits").Params(id("h").Op("*").Id("sincos"), id("t").Op("*").Add(digitsType()), id("hi").Int32()).Block(
		jen.List(id("a"), id("b"), id("c")).Op(":=").List(
			digit(3, id("hi").Op(">>").Parens(jen.Lit(2).Op("*").Id("exactShift"))),
			digit(2, id("hi").Op(">>").Id("exactShift")),
			digit(1, id("hi"))),
		id("active").Dot("hiRow").Call(id("h").Index(jen.Empty(), jen.Empty()), id("a").Index(jen.Empty(), jen.Empty()), id("b").Index(jen.Empty(), jen.Empty()), id("c").Index(jen.Empty(), jen.Empty())),
	)

	// func hiRowGeneric(h, a, b, c []float64)
	halves := func(v string) jen.Code {
		return jen.List(
			jen.Parens(jen.Op("*").Index(jen.Id("nFreq")).Float64()).Call(jen.Id(v).Index(jen.Empty(), jen.Id("nFreq"))),
			jen.Parens(jen.Op("*").Index(jen.Id("nFreq")).Float64()).Call(jen.Id(v).Index(jen.Id("nFreq"), jen.Lit(2).Op("*").Id("nFreq"))))
	}
	// float64(x*y): an explicit conversion forbids fusing the product into
	// an FMA, so every GOARCH computes the same bits.
	prod := func(x, y jen.Code) *jen.Statement { return jen.Float64().Call(jen.Add(x).Op("*").Add(y)) }
	at := func(v string) *jen.Statement { return jen.Id(v).Index(jen.Id("i")) }
	f.Comment("hiRowGeneric is the portable hiRow kernel (asm/abi HiRow): per pair, m = a·b and")
	f.Comment("h = m·c as complex numbers, (ac + i·as)(bc + i·bs) = ac·bc − as·bs + i(as·bc + ac·bs),")
	f.Comment("in float64 with every product rounded (float64(x*y) forbids an FMA, so every GOARCH")
	f.Comment("gives the same bits, those of the assembly kernels).")
	f.Func().Id("hiRowGeneric").Params(jen.List(id("h"), id("a"), id("b"), id("c")).Index().Float64()).Block(
		jen.List(id("hc"), id("hs")).Op(":=").Add(halves("h")),
		jen.List(id("ac"), id("as")).Op(":=").Add(halves("a")),
		jen.List(id("bc"), id("bs")).Op(":=").Add(halves("b")),
		jen.List(id("cc"), id("cs")).Op(":=").Add(halves("c")),
		jen.For(id("i").Op(":=").Lit(0), id("i").Op("<").Id("nFreq"), id("i").Op("++")).Block(
			jen.List(id("mc"), id("ms")).Op(":=").List(
				prod(at("ac"), at("bc")).Op("-").Add(prod(at("as"), at("bs"))),
				prod(at("as"), at("bc")).Op("+").Add(prod(at("ac"), at("bs")))),
			jen.List(at("hc"), at("hs")).Op("=").List(
				prod(id("mc"), at("cc")).Op("-").Add(prod(id("ms"), at("cs"))),
				prod(id("ms"), at("cc")).Op("+").Add(prod(id("mc"), at("cs")))),
		),
	)

	// func (fs *freqSet) hiRowOf(hi int32, tab *digits, h *sincos) *sincos
	f.Comment("hiRowOf returns the hi row of hi: the cached one, or one computed from the digit")
	f.Comment("tables tab into h (the caller's scratch) at a first miss, or into a new cached")
	f.Comment("row at a second miss in a row of the same hi.")
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("hiRowOf").Params(id("hi").Int32(), id("tab").Op("*").Add(digitsType()), id("h").Op("*").Id("sincos")).Op("*").Id("sincos").Block(
		id("sl").Op(":=").Op("&").Id("fs").Dot("hi").Index(jen.Uint32().Call(id("hi")).Op("%").Lit(ropeHiSlots)),
		jen.If(id("r").Op(":=").Id("sl").Dot("row").Dot("Load").Call(), id("r").Op("!=").Nil().Op("&&").Id("r").Dot("hi").Op("==").Id("hi")).Block(
			jen.Return(jen.Op("&").Id("r").Dot("sc")),
		),
		jen.If(id("sl").Dot("missed").Dot("Swap").Call(id("hi")).Op("!=").Id("hi")).Block(
			id("hiFromDigits").Call(id("h"), id("tab"), id("hi")),
			jen.Return(id("h")),
		),
		id("r").Op(":=").Op("&").Id("hiRow").Values(jen.Dict{id("hi"): id("hi")}),
		id("hiFromDigits").Call(jen.Op("&").Id("r").Dot("sc"), id("tab"), id("hi")),
		id("sl").Dot("row").Dot("Store").Call(id("r")),
		jen.Return(jen.Op("&").Id("r").Dot("sc")),
	)

	// func farPos(p int32) bool { return p > farPosition || p < -farPosition }
	f.Comment("farPos reports whether p takes the far path (|p| > farPosition).")
	f.Func().Id("farPos").Params(id("p").Int32()).Bool().Block(
		jen.Return(id("p").Op(">").Id("farPosition").Op("||").Id("p").Op("<").Op("-").Id("farPosition")),
	)

	// func (fs *freqSet) fillRows(rows []float32, pos []int32)
	f.Comment("fillRows computes the table rows of pos into rows by angle addition: per run of")
	f.Comment("far positions (farPos) one farRows call of the active variant with the float32")
	f.Comment("digit tables; per run of nearer positions sharing hi, the hi row (hiRowOf) and")
	f.Comment("one combineRows call with the low table. Each kind of table is built at its first use.")
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("fillRows").Params(id("rows").Index().Float32(), id("pos").Index().Int32()).Block(
		jen.Var().Id("h").Op("*").Id("sincos"),
		jen.For(id("t").Op(":=").Lit(0), id("t").Op("<").Len(id("pos")), jen.Empty()).Block(
			id("e").Op(":=").Id("t").Op("+").Lit(1),
			jen.If(id("farPos").Call(id("pos").Index(id("t")))).Block(
				jen.For(id("e").Op("<").Len(id("pos")).Op("&&").Id("farPos").Call(id("pos").Index(id("e")))).Block(
					id("e").Op("++"),
				),
				id("active").Dot("farRows").Call(
					id("rows").Index(id("t").Op("*").Id("rowLen"), id("e").Op("*").Id("rowLen")),
					id("fs").Dot("farDigits").Call().Index(jen.Empty(), jen.Empty()),
					id("pos").Index(id("t"), id("e")),
				),
				id("t").Op("=").Id("e"),
				jen.Continue(),
			),
			jen.If(id("h").Op("==").Nil()).Block(
				id("h").Op("=").Id("hiScratch").Dot("Get").Call().Assert(jen.Op("*").Id("sincos")),
			),
			id("tab").Op(":=").Id("fs").Dot("digitRows").Call(),
			id("hi").Op(":=").Id("pos").Index(id("t")).Op(">>").Id("exactShift"),
			jen.For(id("e").Op("<").Len(id("pos")).Op("&&").Id("pos").Index(id("e")).Op(">>").Id("exactShift").Op("==").Id("hi").Op("&&").Op("!").Id("farPos").Call(id("pos").Index(id("e")))).Block(
				id("e").Op("++"),
			),
			id("active").Dot("combineRows").Call(
				id("rows").Index(id("t").Op("*").Id("rowLen"), id("e").Op("*").Id("rowLen")),
				id("fs").Dot("hiRowOf").Call(id("hi"), id("tab"), id("h")).Index(jen.Empty(), jen.Empty()),
				id("tab").Index(jen.Empty(), id("exactLow").Op("*").Lit(2).Op("*").Id("nFreq")),
				id("pos").Index(id("t"), id("e")),
				id("exactLow").Op("-").Lit(1),
			),
			id("t").Op("=").Id("e"),
		),
		jen.If(id("h").Op("!=").Nil()).Block(
			id("hiScratch").Dot("Put").Call(id("h")),
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

// digitsType is the type of a frequency set's digit tables:
// [exactDigits*exactLow*2*nFreq]float64.
func digitsType() *jen.Statement {
	return jen.Index(jen.Id("exactDigits").Op("*").Id("exactLow").Op("*").Lit(2).Op("*").Id("nFreq")).Float64()
}

// farDigitsType is the type of a frequency set's float32 digit tables:
// [exactDigits*exactLow*2*nFreq]float32.
func farDigitsType() *jen.Statement {
	return jen.Index(jen.Id("exactDigits").Op("*").Id("exactLow").Op("*").Lit(2).Op("*").Id("nFreq")).Float32()
}
