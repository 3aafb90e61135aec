// Package attention generates the kernels of the attention form
// (gen/attention) that read keys and values in place: scoresKV and valuesKV
// (asm/abi), maxRow, and for rope packages scoresKVRope, for AVX2+FMA and
// AVX-512 (avo, asm/amd64) and NEON (asm/arm64), specialized to a
// compile-time HeadDim. A decode block (several KV groups) walks the keys in
// memory order, each key's KV heads one after another, so that a decode step
// streams the KV cache once from memory; a prefill block (one group) blocks
// over rows and keys (amd64_blocked.go).
package attention

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// AMD64 returns scoresKV and valuesKV for HeadDim d, and maxRow.
func AMD64(d int) []amd64.Kernel {
	return []amd64.Kernel{
		{ABI: abi.ScoresKV, Emit: func(g *amd64.Gen) { gen{Gen: g}.scoresKV(d) }},
		{ABI: abi.ValuesKV, Emit: func(g *amd64.Gen) { gen{Gen: g}.valuesKV(d) }},
		{ABI: abi.MaxRow, Emit: func(g *amd64.Gen) { gen{Gen: g}.maxRow() }},
	}
}

// AMD64Storage16 returns scoresKV16 and valuesKV16 (abi.ScoresKV16,
// abi.ValuesKV16) for HeadDim d over keys and values stored as storage
// ("f16" or "bf16"): the kernels of AMD64 with every key and value piece
// widened in registers as it is loaded (amd64.Gen.LoadWiden16), so a decode
// step reads the 16-bit cache once, where it is. The F16C these need for
// f16 on AVX2 is required by the package's rotate kernel.
//
// Over bf16 the AVX-512 kernels read q and keep acc in the pair order of
// abi.PairOrder16 (pairedLoad), and the AVX-512 variant registers
// pairOrder16 (amd64_pairorder.go) to say so.
func AMD64Storage16(d int, storage string) []amd64.Kernel {
	ks := []amd64.Kernel{
		{ABI: abi.ScoresKV16, Emit: func(g *amd64.Gen) { newGen16(g, storage, d).scoresKV(d) }},
		{ABI: abi.ValuesKV16, Emit: func(g *amd64.Gen) { newGen16(g, storage, d).valuesKV(d) }},
	}
	if storage == "bf16" {
		ks = append(ks, amd64.Kernel{ABI: abi.PairOrder16, Emit: func(g *amd64.Gen) { gen{Gen: g}.pairOrder(d) }, Only: pairs})
	}
	return ks
}

// pairs reports whether the bf16 kernels of is read in pair order
// (abi.PairOrder16): AVX-512, whose shifts and masked loads take a memory
// operand of 64 bytes.
func pairs(is amd64.ISA) bool { return is.Lanes == 16 }

// newGen16 is the gen of scoresKV16 and valuesKV16 over storage for
// HeadDim d, in pair order over bf16 on AVX-512.
func newGen16(g *amd64.Gen, storage string, d int) gen {
	return gen{Gen: g, st: storage, paired: storage == "bf16" && pairs(g.ISA), dim: d}
}

// gen emits the kernels of one AVX variant.
type gen struct {
	*amd64.Gen
	// st is the storage of the keys and values scoresKV and valuesKV read:
	// "" for float32, "f16" or "bf16" for the 16-bit kernels.
	st string
	// paired: the kernel reads bf16 pieces of heads of dim elements in pair
	// order (pairedLoad); odd is the opmask of the odd words (setupPairs).
	paired bool
	dim    int
	odd    reg.OpmaskVirtual
}

// setupPairs loads, for a paired kernel, the opmask of the odd 16-bit
// words of a 64-byte vector (0xAAAAAAAA), at the top of the function.
func (g *gen) setupPairs() {
	if !g.paired {
		return
	}
	c := g.Ctx
	t := c.GP32()
	c.MOVL(operand.U32(0xaaaaaaaa), t)
	g.odd = c.K()
	c.KMOVD(t, g.odd)
}

// pairedLoad reports whether piece p of a head (g.dim elements) is read in
// pair order (abi.PairOrder16) and, if so, loads it: the 32 bf16 values of
// its block of 32 (which must be whole) in one 64-byte memory operand, the
// even ones widened by VPSLLD $16 (an even piece: the block's first 16
// floats in pair order), the odd ones by a load of the odd words alone
// (VMOVDQU16 zeroing the even words). m addresses piece p's first element,
// 2·(p.Off mod 32) bytes into the block.
func (g gen) pairedLoad(p amd64.Piece, m operand.Mem) (reg.VecVirtual, bool) {
	if !g.paired || p.N != 16 || p.Off-p.Off%32+32 > g.dim {
		return nil, false
	}
	c := g.Ctx
	v := g.Vec()
	blk := m
	blk.Disp -= 2 * (p.Off % 32)
	if p.Off%32 == 0 {
		c.VPSLLD(operand.U8(16), blk, v)
	} else {
		c.VMOVDQU16_Z(blk, g.odd, v)
	}
	return v, true
}

// kvBytes is the size of a key or value element: 4, or 2 for 16-bit
// storage.
func (g gen) kvBytes() int {
	if g.st != "" {
		return 2
	}
	return 4
}

// kvShift is log2(kvBytes): the shift from an element stride to bytes.
func (g gen) kvShift() uint8 {
	if g.st != "" {
		return 1
	}
	return 2
}

// loadKV loads piece p of a key or value row at m into a full-width
// register as float32 (loadFull; 16-bit storage widened on the way).
func (g gen) loadKV(p amd64.Piece, m operand.Mem) reg.VecVirtual {
	if g.st == "" {
		return g.loadFull(p, m)
	}
	if v, ok := g.pairedLoad(p, m); ok {
		return v
	}
	v := g.Vec()
	if g.ISA.Lanes == 8 && p.N < 8 {
		g.LoadWiden16(g.st, p, m, v.AsX())
	} else {
		g.LoadWiden16(g.st, p, m, v)
	}
	return v
}

// kvOperand is piece p of a key or value row at m as an FMA source: the
// memory operand itself for a full float32 piece, else loaded (loadKV).
func (g gen) kvOperand(p amd64.Piece, m operand.Mem) operand.Op {
	if g.st == "" && g.Full(p) {
		return m
	}
	return g.loadKV(p, m)
}

// prefetchKeys is how many keys ahead each head's row is prefetched (with
// PREFETCHT1, into L2), the same head a key stride further. Measured on this
// development machine (AMD EPYC, AVX-512, 32768 keys of 8 KV heads × 128,
// 128 MiB per kernel, one process, alternating runs): scoresKV took
// 0.78× copy()'s time of the same bytes without prefetch, 0.62–0.64× with 3
// or 4 keys ahead, 0.67× with 6; PREFETCHT0 two keys ahead 0.72×.
const prefetchKeys = 4

// prefetch emits PREFETCHT1 of the d floats at base+ahead (ahead a register
// holding a byte offset), one per 64-byte line. A prefetch never faults, so
// reading ahead past the last key is harmless.
func (g gen) prefetch(base, ahead reg.GPVirtual, d int) {
	for off := 0; off < g.kvBytes()*d; off += 64 {
		g.Ctx.PREFETCHT1(operand.Mem{Base: base, Index: ahead, Scale: 1, Disp: off})
	}
}

// hold is how many pieces of the key (value) row stay in registers for the
// rows of its head: the rest are memory operands. The rest of the register
// file holds the accumulators and temporaries (6 on AVX2, 8 on AVX-512).
func (g gen) hold(pieces int) int {
	if g.ISA.Regs == 32 {
		return min(pieces, g.ISA.Regs-8)
	}
	return min(pieces, g.ISA.Regs-6)
}

// loadFull loads piece p from m into a full-width register, lanes past p.N
// zero (an AVX2 tail goes through its XMM half: VEX loads zero the rest).
func (g gen) loadFull(p amd64.Piece, m operand.Mem) reg.VecVirtual {
	v := g.Vec()
	if g.ISA.Lanes == 8 && p.N < 8 {
		g.Load(p, m, v.AsX())
	} else {
		g.Load(p, m, v)
	}
	return v
}

// storeFull stores piece p of v (a register loadFull filled) at m: an
// AVX2 tail through its XMM half, as it was loaded.
func (g gen) storeFull(p amd64.Piece, v reg.VecVirtual, m operand.Mem) {
	if g.ISA.Lanes == 8 && p.N < 8 {
		g.Store(p, v.AsX(), m)
	} else {
		g.Store(p, v, m)
	}
}

// loop emits a counted loop: cnt = n (an argument), body, cnt−1 until 0;
// nothing when n is 0.
func (g gen) loop(stem string, n operand.Op, body func()) {
	c := g.Ctx
	cnt := c.GP64()
	top, done := g.NewLabel(stem), g.NewLabel(stem+"_done")
	c.MOVQ(n, cnt)
	c.TESTQ(cnt, cnt)
	c.JZ(operand.LabelRef(done))
	c.Label(top)
	body()
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(top))
	c.Label(done)
}

// oneGroupBranch emits: if groups = 1, body and return (the blocked path of
// amd64_blocked.go); else fall through to the key-streaming path.
func (g gen) oneGroupBranch(body func()) {
	c := g.Ctx
	general := g.NewLabel("kv_groups")
	c.CMPQ(g.arg("groups"), operand.U8(1))
	c.JNE(operand.LabelRef(general))
	body()
	c.VZEROUPPER()
	c.RET()
	c.Label(general)
}

// rescaleRows emits acc[r] *= alpha[r] for every row r < nb·groups·grp of
// the block (the streaming path of valuesKV, before its keys).
func (g gen) rescaleRows(pieces []amd64.Piece) {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	n, ar, al := c.GP64(), c.GP64(), c.GP64()
	c.MOVQ(g.arg("nb"), n)
	c.IMULQ(g.arg("groups"), n)
	c.IMULQ(g.arg("grp"), n)
	c.Load(c.Param("acc").Base(), ar)
	c.Load(c.Param("alpha").Base(), al)
	g.loop("kv_rescale", n, func() {
		a := g.Vec()
		c.VBROADCASTSS(amd64.Mem(al, 0), a)
		for _, p := range pieces {
			x := g.loadFull(p, amd64.Mem(ar, 4*p.Off))
			c.VMULPS(a, x, x)
			g.storeFull(p, x, amd64.Mem(ar, 4*p.Off))
		}
		c.ADDQ(operand.U32(uint32(4*d)), ar)
		c.ADDQ(operand.U8(4), al)
	})
}

// arg is the frame slot of a scalar argument.
func (g gen) arg(name string) operand.Mem {
	b, err := g.Ctx.Param(name).Resolve()
	if err != nil {
		panic(err) // the names are the ABI's
	}
	return b.Addr
}

// scoresKV emits scoresKV<ISA>(s, q, k, nk, nb, groups, grp, kStride,
// sStride): for each key j, each query b of the block and each KV group gi,
// the head's row of k is loaded once (as far as registers allow) and dotted
// with the grp query rows of that group; the sums go to s[r·sStride + j].
// Two accumulators per row (pieces alternate) are added, then the lanes.
func (g gen) scoresKV(d int) {
	c := g.Ctx
	k, what := abi.ScoresKV, ""
	if g.st != "" {
		k, what = abi.ScoresKV16, ", keys stored as "+g.st+" (widened in registers)"
	}
	name := k.Field + g.ISA.Suffix
	g.Begin(k, name+" is the "+g.ISA.Name+" kernels."+k.Field+" for HeadDim "+strconv.Itoa(d)+what+".",
		"It trusts its arguments: every row it reads or writes lies in its slice.")
	g.SetupMasks(d)
	g.setupPairs()
	pieces := g.Split(d)
	held := g.hold(len(pieces))

	kj, sj, kst, sst := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("k").Base(), kj)
	c.Load(c.Param("s").Base(), sj)
	c.MOVQ(g.arg("kStride"), kst)
	c.SHLQ(operand.U8(g.kvShift()), kst)
	c.MOVQ(g.arg("sStride"), sst)
	c.SHLQ(operand.U8(2), sst)
	g.oneGroupBranch(func() { g.scoresOneGroup(d, kst, sst) })
	cnt := c.GP64()
	c.MOVQ(g.arg("nk"), cnt)
	g.scoresStream(pieces, held, kj, sj, kst, sst, cnt, nil)
	c.VZEROUPPER()
	c.RET()
}

// ropeKeys are the operands of scoresKVRope's rotation: ip walks idx, buf
// is the rot scratch (4·HeadDim floats), rot is RotaryDim.
type ropeKeys struct {
	ip, buf reg.GPVirtual
	rot     int
}

// scoresStream emits scoresKV's path for several KV groups per block, keys
// in memory order: blocks of four keys (scoresKeyBlocks) when the R-row
// block divides each group's rows, then key by key: for each query and
// group, the head's row of k is loaded once (as far as registers allow) and
// dotted with the group's grp query rows. With rope set, each key's head is
// first rotated into rope.buf and read from there.
func (g gen) scoresStream(pieces []amd64.Piece, held int, kj, sj, kst, sst, cnt reg.GPVirtual, rope *ropeKeys) {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	keyByKey := g.NewLabel("kv_by_key")
	t := c.GP64()
	c.MOVQ(g.arg("grp"), t)
	c.TESTQ(operand.U32(uint32(g.scoreRows()-1)), t)
	c.JNZ(operand.LabelRef(keyByKey))
	g.scoresKeyBlocks(pieces, kj, sj, kst, sst, cnt, rope)
	c.Label(keyByKey)
	qr, sr, kg := c.GP64(), c.GP64(), c.GP64()
	pf := c.GP64()
	c.IMUL3Q(operand.U32(prefetchKeys), kst, pf)

	g.loop("kv_key", cnt, func() {
		c.Load(c.Param("q").Base(), qr)
		c.MOVQ(sj, sr)
		g.loop("kv_query", g.arg("nb"), func() {
			c.MOVQ(kj, kg)
			g.loop("kv_group", g.arg("groups"), func() {
				g.prefetch(kg, pf, d)
				// rg reads the row: the key in its storage, or rope.buf's float32.
				// A rotated head whose pieces all fit the held registers stays in
				// them (no store to rope.buf and load back).
				row, rg := kg, g
				var kv []reg.VecVirtual
				switch {
				case rope != nil && held == len(pieces):
					kv = g.rotateHead(pieces, rope, kg, kst, 0, 0, true)
				case rope != nil:
					g.rotateHead(pieces, rope, kg, kst, 0, 0, false)
					row, rg = rope.buf, gen{Gen: g.Gen}
				}
				kb := rg.kvBytes()
				if kv == nil {
					kv = make([]reg.VecVirtual, held)
					for i := range kv {
						kv[i] = rg.loadKV(pieces[i], amd64.Mem(row, kb*pieces[i].Off))
					}
				}
				g.loop("kv_head", g.arg("grp"), func() {
					acc := [2]reg.VecVirtual{g.Vec(), g.Vec()}
					for i, p := range pieces {
						a := acc[i%2]
						var x, y operand.Op
						if i < held {
							x, y = amd64.Mem(qr, 4*p.Off), kv[i]
							if !g.Full(p) {
								x = g.loadFull(p, amd64.Mem(qr, 4*p.Off))
							}
						} else {
							x, y = rg.kvOperand(p, amd64.Mem(row, kb*p.Off)), g.loadFull(p, amd64.Mem(qr, 4*p.Off))
						}
						if i < 2 {
							c.VMULPS(x, y, a)
						} else {
							c.VFMADD231PS(x, y, a)
						}
					}
					if len(pieces) > 1 {
						c.VADDPS(acc[1], acc[0], acc[0])
					}
					c.VMOVSS(g.HSum(acc[0]), amd64.Mem(sr, 0))
					c.ADDQ(operand.U32(uint32(4*d)), qr)
					c.ADDQ(sst, sr)
				})
				c.ADDQ(operand.U32(uint32(g.kvBytes()*d)), kg)
			})
		})
		c.ADDQ(kst, kj)
		c.ADDQ(operand.U8(4), sj)
		if rope != nil {
			c.ADDQ(operand.U8(4), rope.ip)
		}
	})
}

// valuesKV emits valuesKV<ISA>(acc, p, v, nk, nb, groups, grp, vStride,
// pStride): for each key j, query b and KV group gi the head's row of v is
// loaded once (as far as registers allow) and, for each of the grp rows
// whose weight w = p[r·pStride + j] is not +0, acc[r] += w·v.
func (g gen) valuesKV(d int) {
	c := g.Ctx
	k, what := abi.ValuesKV, ""
	if g.st != "" {
		k, what = abi.ValuesKV16, ", values stored as "+g.st+" (widened in registers)"
	}
	name := k.Field + g.ISA.Suffix
	g.Begin(k, name+" is the "+g.ISA.Name+" kernels."+k.Field+" for HeadDim "+strconv.Itoa(d)+what+".",
		"It trusts its arguments: every row it reads or writes lies in its slice.")
	g.SetupMasks(d)
	g.setupPairs()
	pieces := g.Split(d)
	held := g.hold(len(pieces))

	vj, pj, vst, pst := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("v").Base(), vj)
	c.Load(c.Param("p").Base(), pj)
	c.MOVQ(g.arg("vStride"), vst)
	c.SHLQ(operand.U8(g.kvShift()), vst)
	c.MOVQ(g.arg("pStride"), pst)
	c.SHLQ(operand.U8(2), pst)
	g.oneGroupBranch(func() { g.valuesOneGroup(d, vst, pst) })
	g.rescaleRows(pieces)
	cnt := c.GP64()
	c.MOVQ(g.arg("nk"), cnt)
	g.valuesKeyBlocks(pieces, vj, pj, vst, pst, cnt)
	ar, pr, vg := c.GP64(), c.GP64(), c.GP64()
	w := c.GP32()
	pf := c.GP64()
	c.IMUL3Q(operand.U32(prefetchKeys), vst, pf)

	g.loop("kv_key", cnt, func() {
		c.Load(c.Param("acc").Base(), ar)
		c.MOVQ(pj, pr)
		g.loop("kv_query", g.arg("nb"), func() {
			c.MOVQ(vj, vg)
			g.loop("kv_group", g.arg("groups"), func() {
				g.prefetch(vg, pf, d)
				vv := make([]reg.VecVirtual, held)
				for i := range vv {
					vv[i] = g.loadKV(pieces[i], amd64.Mem(vg, g.kvBytes()*pieces[i].Off))
				}
				g.loop("kv_head", g.arg("grp"), func() {
					skip := g.NewLabel("kv_zero")
					c.MOVL(amd64.Mem(pr, 0), w)
					c.TESTL(w, w)
					c.JZ(operand.LabelRef(skip)) // p = +0: the row does not meet this key
					wv := g.Vec()
					c.VBROADCASTSS(amd64.Mem(pr, 0), wv)
					for i, p := range pieces {
						a := g.loadFull(p, amd64.Mem(ar, 4*p.Off))
						var x operand.Op
						if i < held {
							x = vv[i]
						} else {
							x = g.kvOperand(p, amd64.Mem(vg, g.kvBytes()*p.Off))
						}
						c.VFMADD231PS(x, wv, a)
						g.storeFull(p, a, amd64.Mem(ar, 4*p.Off))
					}
					c.Label(skip)
					c.ADDQ(operand.U32(uint32(4*d)), ar)
					c.ADDQ(pst, pr)
				})
				c.ADDQ(operand.U32(uint32(g.kvBytes()*d)), vg)
			})
		})
		c.ADDQ(vst, vj)
		c.ADDQ(operand.U8(4), pj)
	})
	c.VZEROUPPER()
	c.RET()
}
