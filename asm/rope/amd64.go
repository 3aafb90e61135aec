package rope

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// gen emits the rope kernel of one AVX variant.
type gen struct {
	*amd64.Gen
	bf *bf16Regs // the AVX2 bf16 rotate kernel's conversion constants, or nil
}

// ropeShape is the compile-time geometry of a rope kernel.
type ropeShape struct {
	headDim   int
	rotaryDim int
	half      bool
	span      int        // elements covered by one set of pieces: R/2 (half) or R (interleaved)
	rowLen    int        // floats per table row: R (half) or 2R (interleaved)
	sinOff    int        // float offset of the sin values within a row
	pairOff   int        // half: float offset of x_{i+n} from x_i
	storage   string     // "" (float32), "f16" or "bf16": the tensors' element type
	es        int        // bytes per tensor element: 4, or 2 for 16-bit storage
	kernel    abi.Kernel // abi.Rotate, or abi.Rotate16 for 16-bit storage
}

// newRopeShape derives the geometry from p. Either layout keeps the cos
// values in the first half of a row and the sin values in the second.
func newRopeShape(p Params) ropeShape {
	r := p.RotaryDim
	sh := ropeShape{headDim: p.HeadDim, rotaryDim: r, span: r, rowLen: p.RowLen, sinOff: p.RowLen / 2,
		storage: p.Storage, es: 4, kernel: abi.Rotate}
	if p.Storage != "" {
		sh.es, sh.kernel = 2, abi.Rotate16
	}
	if !p.Interleaved {
		sh.half, sh.span, sh.pairOff = true, r/2, r/2
	}
	return sh
}

// ropeRegs are the general-purpose registers of the rotate kernel: the
// destination and source cursors of the current token of q, the cursor of
// k (rotated in place only, so kSrc is never read), the
// table, the idx cursor and the tokens left. Head counts and strides stay
// in the argument frame and are read where they are needed.
type ropeRegs struct {
	q, qs, k, table, idx, tokens reg.GPVirtual
}

// ropeTensor names one tensor's registers and frame slots; fromSrc says
// whether its head loop also comes in the from-a-separate-source form.
type ropeTensor struct {
	dst, src                  reg.GPVirtual
	heads, stride, headStride string // argument names
	fromSrc                   bool
}

// tensors returns the tensors a token loop rotates, each with only the head
// loops some public function reaches (abi.Rotate): forward, q in place or
// from a separate source (ApplyTo, ApplyToSlots) and k in place (every
// caller passes k = kSrc); inverse, q in place only (Inverse and
// InverseMRoPE pass no k).
func (r ropeRegs) tensors(inv bool) []ropeTensor {
	if inv {
		return []ropeTensor{{r.q, r.qs, "qHeads", "qStride", "qHeadStride", false}}
	}
	return []ropeTensor{
		{r.q, r.qs, "qHeads", "qStride", "qHeadStride", true},
		{r.k, r.k, "kHeads", "kStride", "kHeadStride", false},
	}
}

// arg returns the frame slot of the named scalar argument.
func (g gen) arg(name string) operand.Mem {
	b, err := g.Ctx.Param(name).Resolve()
	if err != nil {
		panic(err) // the names are abi.Rotate's
	}
	return b.Addr
}

// rotate emits rotate<ISA>(q, qSrc, qHeads, qStride, qHeadStride, k, kSrc,
// kHeads, kStride, kHeadStride, table, idx, sign), the rope kernel
// (abi.Rotate): per token it rotates the first RotaryDim dims of every q
// head and then every k head by the table row idx[t], reading the strided
// heads of qSrc/kSrc and writing those of q/k.
//
// The head body is fully unrolled over the RotaryDim/2 pairs (half) or
// RotaryDim dims (interleaved). The row's cos and sin vectors are loaded into
// registers once per token and reused for every head as far as registers
// allow next to the temporaries (all of them for R ≤ 64 half on AVX2 and
// R ≤ 256 half on AVX-512); beyond that, small calls rotate the heads group
// by group and large ones read the remaining pieces' cos and sin from the
// row as memory operands (see rotateTokens). The sign of sign selects one of two copies of the
// token loop (forward, or inverse with the sin terms negated), so the inner
// loop pays nothing for it; per the ABI sign is +1 or −1, and −1 comes only
// in place (headLoop).
func (g gen) rotate(p Params) {
	c := g.Ctx
	sh := newRopeShape(p)
	g.Begin(sh.kernel, "rotate"+g.ISA.Suffix+" is the "+g.ISA.Name+" rope kernel (kernels.rotate).",
		"It trusts its arguments: the caller has checked every length.")

	g.SetupMasks(sh.span, sh.copyUnits())
	if sh.storage == "bf16" && g.ISA.Lanes == 8 {
		g.bf = g.newBF16Regs()
	}
	r := ropeRegs{
		q:      c.GP64(),
		qs:     c.GP64(),
		k:      c.GP64(),
		table:  c.GP64(),
		idx:    c.GP64(),
		tokens: c.GP64(),
	}
	c.Load(c.Param("q").Base(), r.q)
	c.Load(c.Param("qSrc").Base(), r.qs)
	c.Load(c.Param("k").Base(), r.k)
	c.Load(c.Param("table").Base(), r.table)
	c.Load(c.Param("idx").Base(), r.idx)
	c.Load(c.Param("idx").Len(), r.tokens)
	sign := c.GP32()
	c.MOVL(g.arg("sign"), sign) // the float's bits: only the sign bit is tested

	done := g.NewLabel("rope_done")
	inverse := g.NewLabel("rope_inverse")
	c.TESTQ(r.tokens, r.tokens)
	c.JZ(operand.LabelRef(done))
	c.TESTL(sign, sign)
	c.JS(operand.LabelRef(inverse))
	g.rotateTokens(sh, r, false)
	c.JMP(operand.LabelRef(done))
	c.Label(inverse)
	g.rotateTokens(sh, r, true)
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// holdBudget is how many vector registers may hold table values across the
// head loop: the rest stay free for the four temporaries of a amd64.Piece and for
// the out-of-order overlap of consecutive pieces (10 of 16 on AVX2, 24 of 32
// on AVX-512); the AVX2 bf16 kernel's constants (bf16Regs) take 4 of the 10.
func (g gen) holdBudget() int {
	if g.ISA.Regs == 32 {
		return g.ISA.Regs - 8
	}
	if g.bf != nil {
		return g.ISA.Regs - 6 - bf16Consts
	}
	return g.ISA.Regs - 6
}

// ropeGroupedMaxBytes is the largest call (tokens × (qHeads+kHeads) ×
// HeadDim × 4 bytes) that rotateTokens runs in the grouped order; larger
// ones stream. Measured on AMD EPYC (AVX2, 128 dims × 32 heads): grouped
// raises the cache-resident 16-token case from 0.72× to 0.9× copy
// (interleaved) and 0.91× to 1.01× (half), but at 64 MiB it falls from
// 1.23× to 0.72× and 1.36× to 0.81×: revisiting each token's heads once per
// group defeats the hardware prefetchers.
const ropeGroupedMaxBytes = 512 << 10

// rotateTokens emits the loop over tokens (tokens > 0 on entry). Calls up
// to ropeGroupedMaxBytes take rotateTokensGrouped (or, when the cos and sin
// of every amd64.Piece fit in registers, rotateTokensStreaming without
// prefetch); larger ones rotateTokensStreaming with the next token's heads
// prefetched.
func (g gen) rotateTokens(sh ropeShape, r ropeRegs, inv bool) {
	c := g.Ctx
	pieces := g.Split(sh.span)
	hold := min(len(pieces), g.holdBudget()/2) // pieces whose cos and sin fit in registers
	// The bytes the call rotates: tokens·(qHeads+kHeads)·HeadDim·4.
	bytes, t := c.GP64(), c.GP64()
	c.MOVQ(g.arg("qHeads"), bytes)
	c.ADDQ(g.arg("kHeads"), bytes)
	c.IMUL3Q(operand.U32(uint32(sh.es*sh.headDim)), bytes, bytes)
	c.MOVQ(r.tokens, t)
	c.IMULQ(t, bytes) // ≤ the slices' total bytes: no overflow
	stream, done := g.NewLabel("rope_stream"), g.NewLabel("rope_tokens_done")
	c.CMPQ(bytes, operand.U32(ropeGroupedMaxBytes))
	c.JA(operand.LabelRef(stream))
	if hold == len(pieces) {
		g.rotateTokensStreaming(sh, r, pieces, hold, inv, false)
	} else {
		g.rotateTokensGrouped(sh, r, pieces, hold, inv)
	}
	c.JMP(operand.LabelRef(done))
	c.Label(stream)
	g.rotateTokensStreaming(sh, r, pieces, hold, inv, true)
	c.Label(done)
}

// nextToken emits the advance of every cursor to the next token (each
// tensor's dst and src by its stride in bytes) and the loop back to loop.
func (g gen) nextToken(sh ropeShape, r ropeRegs, inv bool, loop string) {
	c := g.Ctx
	for _, ts := range r.tensors(inv) {
		st := c.GP64()
		c.MOVQ(g.arg(ts.stride), st)
		c.SHLQ(operand.U8(sh.shift()), st)
		c.ADDQ(st, ts.dst)
		if ts.fromSrc {
			c.ADDQ(st, ts.src) // an in-place loop never reads src
		}
	}
	c.ADDQ(operand.U8(4), r.idx)
	c.DECQ(r.tokens)
	c.JNZ(operand.LabelRef(loop))
}

// rotateTokensGrouped emits the loop over tokens (tokens > 0 on entry) in
// groups: the pieces of a head are cut into groups of at most hold pieces,
// whose cos and sin fit in registers next to the temporaries. For each
// group the table values are loaded once per token and the group's pieces
// of every head are rotated, so a amd64.Piece costs one load and one store of x
// and no table load. Each token's heads are revisited once per group, from
// cache; the first group also copies the dims past RotaryDim.
func (g gen) rotateTokensGrouped(sh ropeShape, r ropeRegs, pieces []amd64.Piece, hold int, inv bool) {
	c := g.Ctx
	var groups [][]amd64.Piece
	for i := 0; i < len(pieces); i += hold {
		groups = append(groups, pieces[i:min(i+hold, len(pieces))])
	}
	loop := g.NewLabel("rope_token")
	c.Label(loop)
	row := g.tableRow(sh, r)
	for gi, grp := range groups {
		cs, sn := g.loadCosSin(sh, row, grp)
		for _, ts := range r.tensors(inv) {
			g.headLoop(sh, ts, gi == 0, false, func(pd, ps reg.GPVirtual) {
				for i, pc := range grp {
					g.rotatePiece(sh, pc, pd, ps, cs[i], sn[i], inv)
				}
			})
		}
	}
	g.nextToken(sh, r, inv, loop)
}

// rotateTokensStreaming emits the loop over tokens (tokens > 0 on entry)
// in one pass over each token's heads: pieces[:hold] keep cos and sin in
// registers, the others read them from the table row (an L1 hit) as
// memory operands. One sequential pass suits data streaming from memory;
// with prefetch, every head also prefetches the same head of the next
// token (see headLoop).
func (g gen) rotateTokensStreaming(sh ropeShape, r ropeRegs, pieces []amd64.Piece, hold int, inv, prefetch bool) {
	c := g.Ctx

	loop := g.NewLabel("rope_token")
	c.Label(loop)
	row := g.tableRow(sh, r)
	cs, sn := g.loadCosSin(sh, row, pieces[:hold])

	for _, ts := range r.tensors(inv) {
		g.headLoop(sh, ts, true, prefetch, func(pd, ps reg.GPVirtual) {
			for i, pc := range pieces {
				var cop, sop operand.Op
				if i < hold {
					cop, sop = cs[i], sn[i]
				} else {
					cop = g.OperandFor(pc, amd64.Mem(row, 4*pc.Off))
					sop = g.OperandFor(pc, amd64.Mem(row, 4*(sh.sinOff+pc.Off)))
				}
				g.rotatePiece(sh, pc, pd, ps, cop, sop, inv)
			}
		})
	}
	g.nextToken(sh, r, inv, loop)
}

// tableRow emits the address of the token's table row, table + idx[t]·row
// bytes, into a new register.
func (g gen) tableRow(sh ropeShape, r ropeRegs) reg.GPVirtual {
	c := g.Ctx
	row := c.GP64()
	c.MOVLQSX(amd64.Mem(r.idx, 0), row)
	c.IMUL3Q(operand.U32(uint32(4*sh.rowLen)), row, row)
	c.ADDQ(r.table, row)
	return row
}

// loadCosSin loads the cos and sin values of pcs from the table row into
// new registers: cs[i], sn[i] belong to pcs[i].
func (g gen) loadCosSin(sh ropeShape, row reg.GPVirtual, pcs []amd64.Piece) (cs, sn []reg.Register) {
	cs = make([]reg.Register, len(pcs))
	sn = make([]reg.Register, len(pcs))
	for i, pc := range pcs {
		cs[i], sn[i] = g.RegFor(pc), g.RegFor(pc)
		g.Load(pc, amd64.Mem(row, 4*pc.Off), cs[i])
		g.Load(pc, amd64.Mem(row, 4*(sh.sinOff+pc.Off)), sn[i])
	}
	return cs, sn
}

// headLoop emits a loop over the heads of one tensor of the current token
// (none when its head count is 0), running body with pd and ps at the
// head's first float in the destination and the source; both advance by the
// head stride. The loop comes in place (body gets pd for both, as the
// contiguous Apply always did) and, for a tensor with ts.fromSrc (q,
// forward), also from a separate source, where with pass the dims
// RotaryDim..HeadDim are also copied. The loops no public function reaches
// are not emitted (see ropeRegs.tensors). With prefetch, each head
// first prefetches the cache lines of the same head of the next token, one
// token stride ahead of the source: the hardware prefetchers follow one
// sequential stream well but lose the stream at every gap of a strided
// layout, and a packed QKV row (vLLM's layout) has the values between one
// token's keys and the next token's queries. The hint is PREFETCHT1 (into
// L2, not L1): measured on AMD EPYC (Zen 4), 4096 tokens of 32 + 8 heads
// from memory, one process, interleaved rounds, PREFETCHT0 gave 10–13 GB/s
// for ApplyQK and 10 GB/s for packed QKV in place, PREFETCHT1 17–18 GB/s
// for both (AVX2 and AVX-512); two, four or eight tokens ahead and
// PREFETCHT2 measured the same as one token ahead, PREFETCHNTA worse. Below
// ropeGroupedMaxBytes (data in cache) the extra load-port work made
// ApplyQK 20–30% slower, so small calls do not prefetch, and the last
// token's prefetches (past the tensor: PREFETCH never faults) are harmless.
func (g gen) headLoop(sh ropeShape, ts ropeTensor, pass, prefetch bool, body func(pd, ps reg.GPVirtual)) {
	c := g.Ctx
	h, pd, ps, hs := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	skip := g.NewLabel("rope_heads_done")
	c.MOVQ(g.arg(ts.heads), h)
	c.TESTQ(h, h)
	c.JZ(operand.LabelRef(skip))
	c.MOVQ(g.arg(ts.headStride), hs)
	c.SHLQ(operand.U8(sh.shift()), hs)
	c.MOVQ(ts.dst, pd)
	var next reg.GPVirtual // the token stride in bytes
	lines := (sh.es*sh.headDim + 63) / 64
	ahead := func(p reg.GPVirtual) {
		for j := 0; prefetch && j < lines; j++ {
			c.PREFETCHT1(operand.Mem{Base: p, Index: next, Scale: 1, Disp: 64 * j})
		}
	}
	if prefetch {
		next = c.GP64()
		c.MOVQ(g.arg(ts.stride), next)
		c.SHLQ(operand.U8(sh.shift()), next)
	}
	var separate string
	if ts.fromSrc {
		separate = g.NewLabel("rope_heads_from_src")
		c.CMPQ(ts.dst, ts.src)
		c.JNE(operand.LabelRef(separate))
	}
	inPlace := g.NewLabel("rope_head")
	c.Label(inPlace)
	ahead(pd)
	body(pd, pd)
	c.ADDQ(hs, pd)
	c.DECQ(h)
	c.JNZ(operand.LabelRef(inPlace))
	if !ts.fromSrc {
		c.Label(skip)
		return
	}
	c.JMP(operand.LabelRef(skip))

	c.Label(separate)
	c.MOVQ(ts.src, ps)
	head := g.NewLabel("rope_head")
	c.Label(head)
	ahead(ps)
	body(pd, ps)
	if gap := sh.copyUnits(); pass && gap > 0 {
		// Bits are copied as 4-byte units: 16-bit elements two at a time
		// (HeadDim − RotaryDim is even).
		for _, pc := range g.Split(gap) {
			v := g.RegFor(pc)
			g.Load(pc, amd64.Mem(ps, sh.es*sh.rotaryDim+4*pc.Off), v)
			g.Store(pc, v, amd64.Mem(pd, sh.es*sh.rotaryDim+4*pc.Off))
		}
	}
	c.ADDQ(hs, pd)
	c.ADDQ(hs, ps)
	c.DECQ(h)
	c.JNZ(operand.LabelRef(head))
	c.Label(skip)
}

// rotatePiece rotates amd64.Piece pc of the head read at ps and written at
// pd (the same register in place) in the layout of sh.
func (g gen) rotatePiece(sh ropeShape, pc amd64.Piece, pd, ps reg.Register, cop, sop operand.Op, inv bool) {
	if sh.half {
		g.rotateHalfPiece(sh, pc, pd, ps, cop, sop, inv)
	} else {
		g.rotateInterleavedPiece(sh, pc, pd, ps, cop, sop, inv)
	}
}

// rotateHalfPiece rotates the pairs (x_i, x_{i+n}) for i in the amd64.Piece:
//
//	y_i     = x_i·c_i − x_{i+n}·s_i
//	y_{i+n} = x_{i+n}·c_i + x_i·s_i
//
// (the inverse flips the sign of the s terms). Each output is one VMULPS and
// one fused multiply-add, so it carries two roundings.
func (g gen) rotateHalfPiece(sh ropeShape, pc amd64.Piece, pd, ps reg.Register, cop, sop operand.Op, inv bool) {
	c := g.Ctx
	es, pairOff := sh.es, sh.pairOff
	lo, hi := amd64.Mem(pd, es*pc.Off), amd64.Mem(pd, es*(pc.Off+pairOff))
	x0, x1 := g.RegFor(pc), g.RegFor(pc)
	g.loadX(sh, pc, amd64.Mem(ps, es*pc.Off), x0)
	g.loadX(sh, pc, amd64.Mem(ps, es*(pc.Off+pairOff)), x1)
	t, u := g.RegFor(pc), g.RegFor(pc)
	c.VMULPS(sop, x1, t) // t = x_{i+n}·s
	c.VMULPS(sop, x0, u) // u = x_i·s
	if inv {
		c.VFMADD231PS(cop, x0, t) // t = x_i·c + t
		c.VFMSUB231PS(cop, x1, u) // u = x_{i+n}·c − u
	} else {
		c.VFMSUB231PS(cop, x0, t) // t = x_i·c − t
		c.VFMADD231PS(cop, x1, u) // u = x_{i+n}·c + u
	}
	g.storeX(sh, pc, t, lo)
	g.storeX(sh, pc, u, hi)
}

// rotateInterleavedPiece rotates the pairs (x_{2i}, x_{2i+1}) in the amd64.Piece
// with the duplicated row [c_0 c_0 c_1 c_1 …], [s_0 s_0 …]:
//
//	y = x·c ∓ swap(x)·s
//
// where swap exchanges the lanes of every pair (VPERMILPS $0xB1) and ∓ is −
// on even lanes and + on odd ones: exactly VFMADDSUB231PS (the inverse uses
// VFMSUBADD231PS, + on even and − on odd lanes).
func (g gen) rotateInterleavedPiece(sh ropeShape, pc amd64.Piece, pd, ps reg.Register, cop, sop operand.Op, inv bool) {
	c := g.Ctx
	m := amd64.Mem(pd, sh.es*pc.Off)
	x, t := g.RegFor(pc), g.RegFor(pc)
	g.loadX(sh, pc, amd64.Mem(ps, sh.es*pc.Off), x)
	c.VPERMILPS(operand.U8(0xb1), x, t) // t = [x1 x0 x3 x2 …]
	c.VMULPS(sop, t, t)
	if inv {
		c.VFMSUBADD231PS(cop, x, t)
	} else {
		c.VFMADDSUB231PS(cop, x, t)
	}
	g.storeX(sh, pc, t, m)
}
