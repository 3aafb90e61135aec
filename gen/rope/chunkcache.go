package rope

import (
	"strconv"

	"github.com/dave/jennifer/jen"
)

// ropeChunkSlots is the number of entries of the chunk cache of a frequency
// set: the float32 rows of the last chunks of positions outside the table
// that multi-token calls asked for, slot c%ropeChunkSlots for a call's c-th
// chunk. Every layer of one decode step of many sequences asks for the same
// positions, in the same chunks, so a batch of up to
// ropeChunkSlots·exactChunk such tokens computes its rows once per step.
const ropeChunkSlots = 4

// ropeChunkCache emits posRows, its holds method and freqSet.rotateChunk:
// rotateAt's cache (a row asked for twice in a row is kept; cached entries
// are immutable; the spare is owned between Swap and Store) for the chunks
// of rotateTokensAt.
func ropeChunkCache(f *jen.File) {
	// type posRows struct { rows [exactChunk * rowLen]float32; pos [exactChunk]int32; n int }
	f.Comment("posRows is the float32 table rows of one chunk of positions outside the table:")
	f.Comment("rows first, at the start of the allocation, as posRow's; pos[:n] are the positions.")
	f.Type().Id("posRows").Struct(
		id("rows").Index(id("exactChunk").Op("*").Id("rowLen")).Float32(),
		id("pos").Index(id("exactChunk")).Int32(),
		id("n").Int(),
	)

	// func (r *posRows) holds(pos []int32) bool { return slices.Equal(r.pos[:r.n], pos) }
	f.Comment("holds reports whether r holds the rows of exactly the positions pos, in order.")
	f.Func().Params(id("r").Op("*").Id("posRows")).Id("holds").Params(id("pos").Index().Int32()).Bool().Block(
		jen.Return(jen.Qual("slices", "Equal").Call(id("r").Dot("pos").Index(jen.Empty(), id("r").Dot("n")), id("pos"))),
	)

	// func (fs *freqSet) rotateChunk(q, k operand, pos []int32, c int, sign float32) {
	//	i := c % ropeChunkSlots
	//	r := fs.chunks[i].Load()
	//	if r == nil || !r.holds(pos) {
	//		s := fs.chunkSpare[i].Swap(nil)
	//		if s != nil && s.holds(pos) { fs.chunks[i].Store(s); r = s } else {
	//			if s == nil { s = new(posRows) }
	//			s.n = copy(s.pos[:], pos)
	//			fs.fillRows(s.rows[:len(pos)*rowLen], pos)
	//			rotateRun(q, k, s.rows[:len(pos)*rowLen], chunkIdx[:len(pos)], sign)
	//			fs.chunkSpare[i].Store(s)
	//			return
	//		}
	//	}
	//	rotateRun(q, k, r.rows[:len(pos)*rowLen], chunkIdx[:len(pos)], sign)
	// }
	f.Comment("rotateChunk rotates the tokens of q and k at pos (at most exactChunk positions, all")
	f.Comment("outside the table), the call's c-th such chunk, with rows of fs. As rotateAt does")
	f.Comment("for one token: the rows of a chunk asked for twice in a row (per slot c mod")
	f.Comment(strconv.Itoa(ropeChunkSlots) + ") are cached, and later calls with the same positions use them as")
	f.Comment("they are (every layer of a decode step asks for the same positions); other")
	f.Comment("chunks are computed into the slot's spare, which the call owns between taking it")
	f.Comment("(Swap) and putting it back, so a new batch every call allocates nothing. Cached")
	f.Comment("rows are never modified, so concurrent calls are safe.")
	slot := jen.Id("fs").Dot("chunks").Index(id("i"))
	sp := jen.Id("fs").Dot("chunkSpare").Index(id("i"))
	rows := func(r string) jen.Code {
		return id(r).Dot("rows").Index(jen.Empty(), jen.Len(id("pos")).Op("*").Id("rowLen"))
	}
	run := func(r string) jen.Code {
		return id("rotateRun").Call(id("q"), id("k"), rows(r), id("chunkIdx").Index(jen.Empty(), jen.Len(id("pos"))), id("sign"))
	}
	f.Func().Params(id("fs").Op("*").Id("freqSet")).Id("rotateChunk").Params(
		jen.List(id("q"), id("k")).Id("operand"), id("pos").Index().Int32(), id("c").Int(), id("sign").Float32(),
	).Block(
		id("i").Op(":=").Id("c").Op("%").Lit(ropeChunkSlots),
		id("r").Op(":=").Add(slot.Clone()).Dot("Load").Call(),
		jen.If(id("r").Op("==").Nil().Op("||").Op("!").Id("r").Dot("holds").Call(id("pos"))).Block(
			id("s").Op(":=").Add(sp.Clone()).Dot("Swap").Call(jen.Nil()),
			jen.If(id("s").Op("!=").Nil().Op("&&").Id("s").Dot("holds").Call(id("pos"))).Block(
				jen.Comment("Asked for twice in a row: the spare becomes the slot's cached chunk."),
				slot.Clone().Dot("Store").Call(id("s")),
				id("r").Op("=").Id("s"),
			).Else().Block(
				jen.If(id("s").Op("==").Nil()).Block(id("s").Op("=").New(id("posRows"))),
				id("s").Dot("n").Op("=").Copy(id("s").Dot("pos").Index(jen.Empty(), jen.Empty()), id("pos")),
				id("fs").Dot("fillRows").Call(rows("s"), id("pos")),
				run("s"),
				sp.Clone().Dot("Store").Call(id("s")),
				jen.Return(),
			),
		),
		run("r"),
	)
}
