package attention

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/amd64"
)

// The one-group path of scoresKV and valuesKV. When a block has a single KV
// group (a prefill block: the heads of one KV head for many queries; also
// every block of a multi-query model) all nb·grp rows meet the same key and
// value rows, so the kernels block over rows and keys instead of streaming
// key by key:
//
//   - scoresKV computes a tile of R rows × 4 keys at a time, R·4
//     accumulators, each piece of the four keys and the R query rows loaded
//     once; the sums are reduced by a transposing tree (AVX-512: four
//     shuffle-and-add levels leave row b's four sums in 128-bit block b;
//     AVX2: horizontal adds per row), so a score costs HeadDim/lanes FMAs and
//     about three shuffles or adds instead of a full horizontal sum.
//   - valuesKV keeps one row of the accumulator in registers (as many pieces
//     as fit; AVX2 takes a head of 128 in two passes) while every key of the
//     tile adds p·v to it, instead of loading and storing the row per key.
//
// Rows and keys left over by the blocking take the one-by-one dot product.

// scoreRows is R, the rows of a scoresKV block: 4 on AVX-512 (16
// accumulators, four query and one key register), 2 on AVX2 (8, 2 and 1).
func (g gen) scoreRows() int {
	if g.ISA.Lanes == 16 {
		return 4
	}
	return 2
}

// scoreKeys is the keys of a scoresKV block.
const scoreKeys = 4

// scoresOneGroup emits scoresKV for groups = 1: S[r][j] = q_r·k_j for
// r < n = nb·grp and j < nk, k_j at k + j·kStride (KV head 0 of the rows
// given). kst and sst are the key and score strides in bytes.
func (g gen) scoresOneGroup(d int, kst, sst reg.GPVirtual) {
	c := g.Ctx
	R := g.scoreRows()
	pieces := g.Split(d)
	n, nk := c.GP64(), c.GP64()
	c.MOVQ(g.arg("nb"), n)
	c.IMULQ(g.arg("grp"), n)
	c.MOVQ(g.arg("nk"), nk)
	qr, sr := c.GP64(), c.GP64()
	c.Load(c.Param("q").Base(), qr)
	c.Load(c.Param("s").Base(), sr)
	left := c.GP64() // rows left

	// Blocks of R rows.
	c.MOVQ(n, left)
	rowTop, rowDone := g.NewLabel("s1_rows"), g.NewLabel("s1_rows_done")
	c.Label(rowTop)
	c.CMPQ(left, operand.U32(uint32(R)))
	c.JL(operand.LabelRef(rowDone))
	{
		kj, sj, kleft := c.GP64(), c.GP64(), c.GP64()
		c.Load(c.Param("k").Base(), kj)
		c.MOVQ(sr, sj)
		c.MOVQ(nk, kleft)
		keyTop, keyDone := g.NewLabel("s1_keys"), g.NewLabel("s1_keys_done")
		c.Label(keyTop)
		c.CMPQ(kleft, operand.U8(scoreKeys))
		c.JL(operand.LabelRef(keyDone))
		g.scoreBlock(pieces, R, qr, kj, kst, sj, sst)
		c.LEAQ(operand.Mem{Base: kj, Index: kst, Scale: 4}, kj)
		c.ADDQ(operand.U8(4*scoreKeys), sj)
		c.SUBQ(operand.U8(scoreKeys), kleft)
		c.JMP(operand.LabelRef(keyTop))
		c.Label(keyDone)
		// The keys left over (< 4): each meets the R rows one by one.
		g.loop("s1_key_tail", kleft, func() {
			for b := 0; b < R; b++ {
				g.scoreOne(pieces, qr, 4*d*b, kj, sj, sst, b)
			}
			c.ADDQ(kst, kj)
			c.ADDQ(operand.U8(4), sj)
		})
	}
	c.ADDQ(operand.U32(uint32(4*d*R)), qr)
	for b := 0; b < R; b++ {
		c.ADDQ(sst, sr)
	}
	c.SUBQ(operand.U8(uint8(R)), left)
	c.JMP(operand.LabelRef(rowTop))
	c.Label(rowDone)

	// The rows left over (< R): every key one by one.
	g.loop("s1_row_tail", left, func() {
		kj, sj := c.GP64(), c.GP64()
		c.Load(c.Param("k").Base(), kj)
		c.MOVQ(sr, sj)
		g.loop("s1_row_tail_key", nk, func() {
			g.scoreOne(pieces, qr, 0, kj, sj, sst, 0)
			c.ADDQ(kst, kj)
			c.ADDQ(operand.U8(4), sj)
		})
		c.ADDQ(operand.U32(uint32(4*d)), qr)
		c.ADDQ(sst, sr)
	})
}

// scoreOne emits s[row b of the block][key] = q·k for the query row at
// qr+qoff and the key at kj, stored at sj + b·sst (b < 4).
func (g gen) scoreOne(pieces []amd64.Piece, qr reg.GPVirtual, qoff int, kj, sj, sst reg.GPVirtual, b int) {
	c := g.Ctx
	acc := [2]reg.VecVirtual{g.Vec(), g.Vec()}
	for i, p := range pieces {
		x := g.loadFull(p, amd64.Mem(qr, qoff+4*p.Off))
		y := g.kvOperand(p, amd64.Mem(kj, g.kvBytes()*p.Off))
		if i < 2 {
			c.VMULPS(y, x, acc[i%2])
		} else {
			c.VFMADD231PS(y, x, acc[i%2])
		}
	}
	if len(pieces) > 1 {
		c.VADDPS(acc[1], acc[0], acc[0])
	}
	c.VMOVSS(g.HSum(acc[0]), g.rowMem(sj, sst, b))
}

// scoreBlock emits the R×4 block at query rows qr.., keys kj.. (kst bytes
// apart); the sums go to sj + b·sst, 4 floats for row b.
func (g gen) scoreBlock(pieces []amd64.Piece, R int, qr, kj, kst, sj, sst reg.GPVirtual) {
	c := g.Ctx
	// Key row addresses: kj, kj+kst, kj+2kst, kj+3kst.
	k3 := c.GP64()
	c.LEAQ(operand.Mem{Base: kj, Index: kst, Scale: 2}, k3)
	g.scoreBlockAt(pieces, R, qr, func(j, off int) operand.Mem {
		switch j {
		case 0:
			return amd64.Mem(kj, off)
		case 1:
			return operand.Mem{Base: kj, Index: kst, Scale: 1, Disp: off}
		case 2:
			return amd64.Mem(k3, off)
		}
		return operand.Mem{Base: k3, Index: kst, Scale: 1, Disp: off}
	}, sj, sst)
}

// scoreBlockAt is scoreBlock with the four keys' rows at keyMem(j, byte
// offset).
func (g gen) scoreBlockAt(pieces []amd64.Piece, R int, qr reg.GPVirtual, keyMem func(j, off int) operand.Mem, sj, sst reg.GPVirtual) {
	c := g.Ctx
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	acc := make([][scoreKeys]reg.VecVirtual, R)
	for b := range acc {
		for j := range acc[b] {
			acc[b][j] = g.Vec()
		}
	}
	for i, p := range pieces {
		qv := make([]reg.VecVirtual, R)
		for b := range qv {
			qv[b] = g.loadFull(p, amd64.Mem(qr, 4*d*b+4*p.Off))
		}
		for j := 0; j < scoreKeys; j++ {
			kv := g.loadKV(p, keyMem(j, g.kvBytes()*p.Off))
			for b := 0; b < R; b++ {
				if i == 0 {
					c.VMULPS(kv, qv[b], acc[b][j])
				} else {
					c.VFMADD231PS(kv, qv[b], acc[b][j])
				}
			}
		}
	}
	if g.ISA.Lanes == 16 {
		g.reduce4x4(acc, sj, sst)
	} else {
		for b := range acc {
			g.reduceRow8(acc[b], sj, sst, b)
		}
	}
}

// reduceRow8 (AVX2) adds the lanes of each of a row's four accumulators and
// stores the four sums at sj + b·sst: two rounds of VHADDPS leave, in each
// 128-bit half, the half's sum of each accumulator in order; the halves are
// then added.
func (g gen) reduceRow8(a [scoreKeys]reg.VecVirtual, sj, sst reg.GPVirtual, b int) {
	c := g.Ctx
	h01, h23 := c.YMM(), c.YMM()
	c.VHADDPS(a[1], a[0], h01) // [a0 a0 a1 a1 | a0 a0 a1 a1] pairs
	c.VHADDPS(a[3], a[2], h23)
	c.VHADDPS(h23, h01, h01) // [Σa0 Σa1 Σa2 Σa3] per half
	x := c.XMM()
	c.VEXTRACTF128(operand.U8(1), h01, x)
	c.VADDPS(x, h01.AsX(), x)
	c.VMOVUPS(x, g.rowMem(sj, sst, b))
}

// rowMem is sj + b·sst for b < 4.
func (g gen) rowMem(sj, sst reg.GPVirtual, b int) operand.Mem {
	switch b {
	case 0:
		return operand.Mem{Base: sj}
	case 1:
		return operand.Mem{Base: sj, Index: sst, Scale: 1}
	case 2:
		return operand.Mem{Base: sj, Index: sst, Scale: 2}
	}
	t := g.Ctx.GP64()
	g.Ctx.LEAQ(operand.Mem{Base: sst, Index: sst, Scale: 2}, t)
	return operand.Mem{Base: sj, Index: t, Scale: 1}
}

// reduce4x4 (AVX-512) turns the 16 accumulators a[b][j] into one register
// whose 128-bit block b holds Σa[b][0..3] in order, and stores block b at
// sj + b·sst. Each level adds pairs after a shuffle that puts the halves to
// be added side by side: 512-bit halves by 128-bit blocks (VSHUFF32X4,
// twice), then float pairs within blocks (VUNPCKL/HPS), then float64 pairs
// (VUNPCKL/HPD).
func (g gen) reduce4x4(a [][scoreKeys]reg.VecVirtual, sj, sst reg.GPVirtual) {
	c := g.Ctx
	add := func(x, y reg.VecVirtual) reg.VecVirtual {
		c.VADDPS(y, x, x)
		return x
	}
	// shuf returns lower blocks lo of x and upper blocks hi of y (imm as
	// VSHUFF32X4's: two 2-bit block indices from x, then two from y).
	shuf := func(x, y reg.VecVirtual, imm uint8) reg.VecVirtual {
		t := c.ZMM()
		c.VSHUFF32X4(operand.U8(imm), y, x, t)
		return t
	}
	// Level 1, per key j and row pair (0,1), (2,3): [x0+x2, x1+x3, y0+y2, y1+y3].
	var l1 [scoreKeys][2]reg.VecVirtual
	for j := 0; j < scoreKeys; j++ {
		for p := 0; p < 2; p++ {
			x, y := a[2*p][j], a[2*p+1][j]
			l1[j][p] = add(shuf(x, y, 0x44), shuf(x, y, 0xee))
		}
	}
	// Level 2, per key: blocks [row0, row1, row2, row3], each 4 partial sums.
	var l2 [scoreKeys]reg.VecVirtual
	for j := 0; j < scoreKeys; j++ {
		x, y := l1[j][0], l1[j][1]
		l2[j] = add(shuf(x, y, 0x88), shuf(x, y, 0xdd))
	}
	// Level 3: keys (0,1) and (2,3) interleaved per block: [e0+e2, f0+f2, e1+e3, f1+f3].
	var l3 [2]reg.VecVirtual
	for p := 0; p < 2; p++ {
		e, f := l2[2*p], l2[2*p+1]
		lo, hi := c.ZMM(), c.ZMM()
		c.VUNPCKLPS(f, e, lo)
		c.VUNPCKHPS(f, e, hi)
		l3[p] = add(lo, hi)
	}
	// Level 4: per block [Σkey0, Σkey1, Σkey2, Σkey3].
	lo, hi := c.ZMM(), c.ZMM()
	c.VUNPCKLPD(l3[1], l3[0], lo)
	c.VUNPCKHPD(l3[1], l3[0], hi)
	s := add(lo, hi)
	c.VMOVUPS(s.AsX(), g.rowMem(sj, sst, 0))
	for b := 1; b < len(a); b++ {
		c.VEXTRACTF32X4(operand.U8(uint8(b)), s, g.rowMem(sj, sst, b))
	}
}

// valueChunk is how many pieces of an accumulator row valuesKV holds in
// registers at once: all of a head up to 24 pieces on AVX-512, 12 on AVX2
// (the rest of the file: the broadcast weight and a tail temporary).
func (g gen) valueChunk() int {
	if g.ISA.Lanes == 16 {
		return 24
	}
	return 12
}

// valuesOneGroup emits valuesKV for groups = 1: for each row r < nb·grp and
// each chunk of its accumulator, the chunk is loaded, multiplied by alpha[r]
// and stays in registers while every
// key j with p[r·pStride + j] ≠ +0 adds p·v_j (v_j at v + j·vStride). vst and
// pst are the value and weight strides in bytes.
func (g gen) valuesOneGroup(d int, vst, pst reg.GPVirtual) {
	c := g.Ctx
	pieces := g.Split(d)
	n := c.GP64()
	c.MOVQ(g.arg("nb"), n)
	c.IMULQ(g.arg("grp"), n)
	ar, pr, al := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("acc").Base(), ar)
	c.Load(c.Param("p").Base(), pr)
	c.Load(c.Param("alpha").Base(), al)
	w := c.GP32()
	g.loop("v1_row", n, func() {
		for lo := 0; lo < len(pieces); lo += g.valueChunk() {
			chunk := pieces[lo:min(len(pieces), lo+g.valueChunk())]
			acc := make([]reg.VecVirtual, len(chunk))
			a := g.Vec()
			c.VBROADCASTSS(amd64.Mem(al, 0), a) // the row's rescale factor
			for i, p := range chunk {
				acc[i] = g.loadFull(p, amd64.Mem(ar, 4*p.Off))
				c.VMULPS(a, acc[i], acc[i])
			}
			vj, pj := c.GP64(), c.GP64()
			c.Load(c.Param("v").Base(), vj)
			c.MOVQ(pr, pj)
			g.loop("v1_key", g.arg("nk"), func() {
				skip := g.NewLabel("v1_zero")
				c.MOVL(amd64.Mem(pj, 0), w)
				c.TESTL(w, w)
				c.JZ(operand.LabelRef(skip)) // p = +0: the row does not meet this key
				wv := g.Vec()
				c.VBROADCASTSS(amd64.Mem(pj, 0), wv)
				for i, p := range chunk {
					c.VFMADD231PS(g.kvOperand(p, amd64.Mem(vj, g.kvBytes()*p.Off)), wv, acc[i])
				}
				c.Label(skip)
				c.ADDQ(vst, vj)
				c.ADDQ(operand.U8(4), pj)
			})
			for i, p := range chunk {
				g.storeFull(p, acc[i], amd64.Mem(ar, 4*p.Off))
			}
		}
		c.ADDQ(operand.U32(uint32(4*d)), ar)
		c.ADDQ(pst, pr)
		c.ADDQ(operand.U8(4), al)
	})
}

// The streaming path in blocks of four keys. With several KV groups in a
// block (decode: every head of a few queries) the kernels still walk the keys
// in memory order, but four keys at a time: scoresKV computes, for each
// query and group, R rows × 4 keys with scoreBlock (when grp is a multiple
// of R), and valuesKV loads each row's accumulator once for four keys instead
// of once per key. The keys left over take the key-by-key loop.

// prefetchBlock prefetches, n keys ahead (n = 4 or 8), the d floats at
// base of each of the n key rows base, base+st, …, base+(n−1)·st: the rows
// of the next block.
func (g gen) prefetchBlock(base, st reg.GPVirtual, d, n int) {
	c := g.Ctx
	t := c.GP64()
	for i := 0; i < n; i++ {
		switch i {
		case 0:
			c.MOVQ(base, t)
		default:
			c.ADDQ(st, t)
		}
		for off := 0; off < g.kvBytes()*d; off += 64 {
			c.PREFETCHT1(operand.Mem{Base: t, Index: st, Scale: uint8(n), Disp: off})
		}
	}
}

// scoresKeyBlocks emits, while cnt ≥ 4, the blocks of four keys of
// scoresKV's streaming path, advancing kj, sj and cnt; the caller has
// checked grp mod R = 0. With rope set, the four keys' heads of each group
// are first rotated into rope.buf (HeadDim floats apart) and read there.
func (g gen) scoresKeyBlocks(pieces []amd64.Piece, kj, sj, kst, sst, cnt reg.GPVirtual, rope *ropeKeys) {
	c := g.Ctx
	R := g.scoreRows()
	d := pieces[len(pieces)-1].Off + pieces[len(pieces)-1].N
	top, done := g.NewLabel("kb_keys"), g.NewLabel("kb_keys_done")
	qr, sr, kg, hh := c.GP64(), c.GP64(), c.GP64(), c.GP64()
	c.Label(top)
	c.CMPQ(cnt, operand.U8(scoreKeys))
	c.JL(operand.LabelRef(done))
	c.Load(c.Param("q").Base(), qr)
	c.MOVQ(sj, sr)
	g.loop("kb_query", g.arg("nb"), func() {
		c.MOVQ(kj, kg)
		g.loop("kb_group", g.arg("groups"), func() {
			g.prefetchBlock(kg, kst, d, scoreKeys)
			if rope != nil {
				for t := 0; t < scoreKeys; t++ {
					g.rotateHead(pieces, rope, kg, kst, t, t, false)
				}
			}
			// R rows at a time: grp is a multiple of R.
			rows := g.NewLabel("kb_rows")
			c.MOVQ(g.arg("grp"), hh)
			c.Label(rows)
			if rope != nil {
				// rope.buf holds float32 whatever the keys' storage.
				gen{Gen: g.Gen}.scoreBlockAt(pieces, R, qr, func(j, off int) operand.Mem { return amd64.Mem(rope.buf, 4*d*j+off) }, sr, sst)
			} else {
				g.scoreBlock(pieces, R, qr, kg, kst, sr, sst)
			}
			c.ADDQ(operand.U32(uint32(4*d*R)), qr)
			for b := 0; b < R; b++ {
				c.ADDQ(sst, sr)
			}
			c.SUBQ(operand.U8(uint8(R)), hh)
			c.JNZ(operand.LabelRef(rows))
			c.ADDQ(operand.U32(uint32(g.kvBytes()*d)), kg)
		})
	})
	c.LEAQ(operand.Mem{Base: kj, Index: kst, Scale: 4}, kj)
	c.ADDQ(operand.U8(4*scoreKeys), sj)
	if rope != nil {
		c.ADDQ(operand.U8(4*scoreKeys), rope.ip)
	}
	c.SUBQ(operand.U8(scoreKeys), cnt)
	c.JMP(operand.LabelRef(top))
	c.Label(done)
}
