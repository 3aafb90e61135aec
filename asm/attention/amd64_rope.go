package attention

import (
	"strconv"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// AMD64Rope returns scoresKVRope for HeadDim d and RotaryDim rot, rope's
// half layout: a rope package's Attention uses it for decode blocks, where
// rotating each key tile into scratch first and reading it back cost as
// much as the scores. rot/2 must be a multiple of 16 (whole vectors of
// either ISA on both halves).
func AMD64Rope(d, rot int) []amd64.Kernel {
	return []amd64.Kernel{{ABI: abi.ScoresKVRope, Emit: func(g *amd64.Gen) { gen{Gen: g}.scoresKVRope(d, rot) }}}
}

// AMD64Rope16 returns scoresKVRope16 (abi.ScoresKVRope16) for keys stored
// as storage ("f16" or "bf16"): AMD64Rope's kernel with each key piece
// widened as it is loaded and each rotated value rounded to the storage type
// (amd64.Gen.Round16), as Apply rounds it, before the dot products.
func AMD64Rope16(d, rot int, storage string) []amd64.Kernel {
	return []amd64.Kernel{{ABI: abi.ScoresKVRope16, Emit: func(g *amd64.Gen) { gen{Gen: g, st: storage}.scoresKVRope(d, rot) }}}
}

// FusedRope reports whether AMD64Rope serves RotaryDim rot.
func FusedRope(rot int) bool { return rot > 0 && rot/2%16 == 0 }

// scoresKVRope emits scoresKVRope<ISA>: scoresKV's streaming path (blocks of
// four keys, then key by key) with each key's head rotated on its way into
// registers: from k in memory through rot (L1) instead of a tile of scratch.
func (g gen) scoresKVRope(d, rot int) {
	c := g.Ctx
	k, what := abi.ScoresKVRope, ""
	if g.st != "" {
		k, what = abi.ScoresKVRope16, ", keys stored as "+g.st+" (widened, rotated, rounded to "+g.st+")"
	}
	name := k.Field + g.ISA.Suffix
	g.Begin(k, name+" is the "+g.ISA.Name+" kernels."+k.Field+" for HeadDim "+strconv.Itoa(d)+", RotaryDim "+strconv.Itoa(rot)+what+".",
		"It trusts its arguments: every row it reads or writes lies in its slice, every idx a row of table.")
	g.SetupMasks(d)
	pieces := g.Split(d)
	held := g.hold(len(pieces))
	kj, sj, kst, sst := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("k").Base(), kj)
	c.Load(c.Param("s").Base(), sj)
	c.MOVQ(g.arg("kStride"), kst)
	c.SHLQ(operand.U8(g.kvShift()), kst)
	c.MOVQ(g.arg("sStride"), sst)
	c.SHLQ(operand.U8(2), sst)
	rope := &ropeKeys{ip: c.GP64(), buf: c.GP64(), rot: rot}
	c.Load(c.Param("idx").Base(), rope.ip)
	c.Load(c.Param("rot").Base(), rope.buf)
	cnt := c.GP64()
	c.MOVQ(g.arg("nk"), cnt)
	g.scoresStream(pieces, held, kj, sj, kst, sst, cnt, rope)
	c.VZEROUPPER()
	c.RET()
}

// rotateHead rotates the head at src + t·kStride (t < 4: the t-th key of a
// block; its table row is idx[t] from rope.ip) into rope.buf at slot
// (HeadDim floats each): with c, s the row's A·cos and A·sin of frequency
// i, dims i and i + rot/2 become x_i·c − x_{i+rot/2}·s and
// x_{i+rot/2}·c + x_i·s (one product and one fused multiply-add each, as
// the rotate kernels), dims from rot on are copied. Over 16-bit keys each
// piece is widened as it is loaded and each rotated value rounded to the
// storage type (Apply's rounding); rope.buf holds float32. With keep set
// the rotated pieces are not stored but returned, in piece order, in
// registers (the caller's: every piece must fit the register file).
func (g gen) rotateHead(pieces []amd64.Piece, rope *ropeKeys, src, kst reg.GPVirtual, t, slot int, keep bool) []reg.VecVirtual {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	nf, L := rope.rot/2, g.ISA.Lanes
	// The key's row of the table: table + idx[t]·rot floats.
	tr := c.GP64()
	c.MOVLQSX(amd64.Mem(rope.ip, 4*t), tr)
	c.IMUL3Q(operand.U32(uint32(4*rope.rot)), tr, tr)
	tb, err := c.Param("table").Base().Resolve()
	if err != nil {
		panic(err)
	}
	c.ADDQ(tb.Addr, tr)
	from := src
	if t > 0 {
		from = c.GP64()
		c.LEAQ(operand.Mem{Base: src, Index: kst, Scale: uint8(min(t, 2))}, from)
		if t == 3 {
			c.ADDQ(kst, from)
		}
	}
	out, kvb := 4*d*slot, g.kvBytes()
	rc := g.Round16Consts(g.st)
	var kept []reg.VecVirtual
	if keep {
		kept = make([]reg.VecVirtual, len(pieces))
	}
	put := func(off int, v reg.VecVirtual, p amd64.Piece) {
		if keep {
			kept[off/L] = v
			return
		}
		g.storeFull(p, v, amd64.Mem(rope.buf, out+4*off))
	}
	for p := 0; p < nf; p += L {
		ka := g.loadKV(amd64.Piece{Off: p, N: L}, amd64.Mem(from, kvb*p))
		kb := g.loadKV(amd64.Piece{Off: p + nf, N: L}, amd64.Mem(from, kvb*(p+nf)))
		cs, sn := amd64.Mem(tr, 4*p), amd64.Mem(tr, 4*(nf+p))
		ra, rb := g.Vec(), g.Vec()
		c.VMULPS(cs, ka, ra)
		c.VFNMADD231PS(sn, kb, ra) // x_i·c − x_{i+nf}·s
		c.VMULPS(cs, kb, rb)
		c.VFMADD231PS(sn, ka, rb) // x_{i+nf}·c + x_i·s
		if g.st != "" {
			g.Round16(g.st, ra, rc)
			g.Round16(g.st, rb, rc)
		}
		put(p, ra, amd64.Piece{Off: p, N: L})
		put(p+nf, rb, amd64.Piece{Off: p + nf, N: L})
	}
	for _, p := range pieces {
		if p.Off < rope.rot {
			continue
		}
		put(p.Off, g.loadKV(p, amd64.Mem(from, kvb*p.Off)), p)
	}
	return kept
}
