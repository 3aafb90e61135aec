package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// AttentionKernels are the fused attention functions of a generated rope,
// alibi or rpe_bias package (docs/design/attention.md), as dispatched to the
// variant under test. q and out are [len(qpos)][QHeads][HeadDim], k and v
// [len(kpos)][KVHeads][HeadDim].
type AttentionKernels struct {
	// HeadDim is the head dimension of the package's attention form (a rope
	// spec's head_dim; the optional head_dim of alibi and rpe_bias).
	HeadDim int
	// Attention: table is nil except for rpe_bias ([Heads][Buckets]).
	// For rope, q and k are unrotated.
	Attention func(out, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions)
	// AttentionRotated (rope only, nil otherwise; required for rope): k is
	// already rotated at kpos, q is rotated inside.
	AttentionRotated func(out, q, k, v []float32, qpos, kpos []int32, o AttentionOptions)
	// AttentionPaged is the paged form (nil: not checked): sequence t has
	// queries qStart[t]…qStart[t+1] and keys kStart[t]…kStart[t+1], key j
	// being row slots[j] of kCache and vCache ([nSlots][KVHeads][HeadDim]).
	AttentionPaged func(out, q, kCache, vCache, table []float32, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions)
	// PagedKRotated (rope): the paged form's cache holds rotated k (as
	// written by ApplyToSlots); false: unrotated k, as Attention.
	PagedKRotated bool
	// AttentionMRoPE, AttentionRotatedMRoPE and AttentionPagedMRoPE are the
	// forms of an M-RoPE spec, which has them instead of Attention,
	// AttentionRotated and AttentionPaged: qids and kids hold MRoPEAxes(s)
	// ids per query and key, the rotation's; qpos and kpos only mask. The
	// harness gives each token ids derived from its position
	// (attnMRoPEIDs: text tokens and vision patches).
	AttentionMRoPE        func(out, q, k, v []float32, qids, kids, qpos, kpos []int32, o AttentionOptions)
	AttentionRotatedMRoPE func(out, q, k, v []float32, qids, qpos, kpos []int32, o AttentionOptions)
	AttentionPagedMRoPE   func(out, q, kCache, vCache []float32, qids, kids, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions)
}

// attnCase is one attention call of RunAttention.
type attnCase struct {
	name       string
	qpos, kpos []int32
	o          AttentionOptions
	qs, ks     float64 // standard deviations of q and k
	spread     bool    // keys of magnitudes over 3.5 decades
	st         Storage // q, k, v rounded to this type first (f32: not)
	poison     bool    // q of query 1 (lq > 1), head 3 (or the last), one value of key 2 and one of key 5 (lk > 5) are NaN
}

// attnShapes are the (lq, lk) of the main cases: lengths off every vector
// and tile width (8, 16, 64), square prefills and decode rows.
var attnShapes = [][2]int{
	{1, 1}, {2, 5}, {3, 63}, {7, 64}, {17, 65}, {65, 130}, {2, 257},
	{3, 1000}, {1, 1000}, {17, 17}, {65, 65}, {1, 130},
}

// attnSchemes name the position layouts of attnPositions.
var attnSchemes = []string{"prefill", "decode", "random", "random+pad", "near 2^31−1", "far after keys"}

// attnOpts are the mask options the main cases cycle through (scale set
// per case).
var attnOpts = []AttentionOptions{
	{Causal: true}, {}, {Causal: true, Window: 1}, {Causal: true, Window: 7},
	{Causal: true, Window: 100}, {Window: 7}, {Window: 100},
}

// attnHeads returns the (QHeads, KVHeads) pairs of the spec: for rope 8/8,
// 8/2, 8/1, 3/3 and 6/2; for the bias families QHeads = Heads with KVHeads
// = Heads, Heads/4, Heads/8 (when they divide it), 2 and 1.
func attnHeads(s *spec.Spec) [][2]int {
	if s.Encoding == spec.RoPE || s.Encoding == spec.RPEFull || s.Encoding == spec.XL {
		return [][2]int{{8, 8}, {8, 2}, {8, 1}, {3, 3}, {6, 2}}
	}
	h := s.Heads
	hs := [][2]int{{h, h}}
	for _, d := range []int{4, 8, h / 2, h} {
		if d > 1 && h%d == 0 && h/d != h && (len(hs) == 0 || hs[len(hs)-1][1] != h/d) {
			hs = append(hs, [2]int{h, h / d})
		}
	}
	return hs
}

// attnBudget caps lq·lk·QHeads·HeadDim of one case (the reference's and a
// naive kernel's multiply-adds): a case over it keeps fewer queries, so
// RunAttention stays well under a second natively for the largest specs.
const attnBudget = 1 << 18

// attnDecodeBudget caps the long decode case the same way.
const attnDecodeBudget = 1 << 22

// RunAttention checks the attention form of a rope, alibi or rpe_bias
// variant against AttentionRef, every output element within its bound
// (docs/design/attention.md) and rows with no unmasked key exactly 0:
// shapes with lq, lk off the 8/16/64 widths, one decode row over 4100
// keys, GQA ratios 1 to 8 and odd head counts, causal and not, windows 1,
// 7 and 100, scattered padding keys and fully masked rows, positions from
// 0, decode, near 2^31−1 and ≈ 2^31 away from the keys, logits of ±200
// (overflowing a naive exp) and wide logit spreads, and inputs rounded
// through f16 and bf16. For rope it runs AttentionRotated on keys rotated
// by the reference, and when set AttentionPaged on seven sequences in a
// permuted cache whose unused slots hold NaN. Every buffer sits inside
// sentinels; inputs must stay unchanged; each misuse (a wrong length, bad
// head counts, bad sequence bounds, a slot out of range) must panic, naming
// the argument, before anything is written.
func RunAttention(s *spec.Spec, k AttentionKernels) *Report {
	return runAttention(s, k, StorageF32)
}

// runAttention is RunAttention for kernels that store st: with f16 or bf16
// every case's inputs are values of st and the bounds add its roundings
// (attentionRef); k is then the float32 face of 16-bit kernels
// (RunAttention16).
func runAttention(s *spec.Spec, k AttentionKernels, st Storage) *Report {
	rep := &Report{Spec: s.Name}
	rope := s.Encoding == spec.RoPE
	mrope := rope && MRoPEAxes(s) > 0
	if mrope {
		if k.Attention != nil || k.AttentionRotated != nil || k.AttentionPaged != nil {
			rep.begin("kernels").fail("AttentionKernels of an M-RoPE spec set Attention, AttentionRotated or AttentionPaged (the M-RoPE forms take ids)")
			return rep
		}
		k = k.mropeForms(s)
	}
	switch {
	case s.Encoding != spec.RoPE && s.Encoding != spec.ALiBi && s.Encoding != spec.RPEBias && s.Encoding != spec.RPEFull && s.Encoding != spec.XL:
		rep.begin("kernels").fail("RunAttention: encoding %q has no attention form", s.Encoding)
		return rep
	case k.Attention == nil || (rope && k.AttentionRotated == nil):
		rep.begin("kernels").fail("AttentionKernels lacks Attention (or, for rope, AttentionRotated)")
		return rep
	case k.HeadDim < 1 || ((rope || s.Encoding == spec.RPEFull || s.Encoding == spec.XL) && k.HeadDim != s.HeadDim):
		rep.begin("kernels").fail("AttentionKernels.HeadDim = %d is not the spec's head dim", k.HeadDim)
		return rep
	}
	hd := k.HeadDim
	r := rand.New(rand.NewPCG(0xa77e, 5))
	var table []float32
	switch s.Encoding {
	case spec.RPEBias:
		table = make([]float32, s.Heads*s.NumBuckets())
		for i := range table {
			table[i] = float32(2 * r.NormFloat64())
		}
	case spec.RPEFull:
		// Shaw et al.'s aK then aV, [Buckets][HeadDim] each.
		table = make([]float32, 2*(2*s.RMax-1)*hd)
		for i := range table {
			table[i] = float32(r.NormFloat64())
		}
	}
	if st != StorageF32 {
		// A 16-bit kernel stores rpe_bias's table as the tensors: the
		// reference sees the values it holds.
		for i, x := range table {
			table[i] = float32(st.Round(float64(x)))
		}
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	heads := attnHeads(s)
	var cases []attnCase
	for si, sh := range attnShapes {
		for v := range 2 {
			x := 2*si + v
			hk := heads[x%len(heads)]
			lq, lk := sh[0], sh[1]
			lq = max(1, min(lq, attnBudget/(lk*hk[0]*hd)))
			scheme := attnSchemes[x%len(attnSchemes)]
			o := attnOpts[x%len(attnOpts)]
			o.QHeads, o.KVHeads, o.Scale = hk[0], hk[1], scale
			qpos, kpos := attnPositions(r, scheme, lq, lk)
			cases = append(cases, attnCase{qpos: qpos, kpos: kpos, o: o, qs: 1, ks: 1, st: StorageF32,
				name: fmt.Sprintf("lq=%d lk=%d %s", lq, lk, scheme)})
		}
	}
	full := heads[0]
	gqa := heads[len(heads)-1]
	opt := func(hk [2]int, causal bool, window int, sc float32) AttentionOptions {
		return AttentionOptions{QHeads: hk[0], KVHeads: hk[1], Scale: sc, Causal: causal, Window: window}
	}
	special := func(name string, qpos, kpos []int32, o AttentionOptions, qs, ks float64, spread bool, st Storage) {
		cases = append(cases, attnCase{name, qpos, kpos, o, qs, ks, spread, st, false})
	}
	// Fully masked rows among others: query 0 sees no key (causal), query 1
	// only padding before it, query 2 one key, query 3 two.
	special("fully masked rows", []int32{0, 1, 9, 10}, []int32{5, -1, 9, 12, -4, 10, 3, 30}, opt(full, true, 2, scale), 1, 1, false, StorageF32)
	special("every key padding", []int32{4, 0}, []int32{-1, -1, math.MinInt32}, opt(gqa, false, 0, scale), 1, 1, false, StorageF32)
	// Queries at negative positions, which the contract allows (a key's is
	// padding), with keys up to 2^31−1 after them, unmasked: distances over
	// 2^31, where a 32-bit difference wraps (T5's far-future bucket read as
	// the far past's). The bias families only: rope rotates at the position.
	if s.Encoding == spec.ALiBi || s.Encoding == spec.RPEBias {
		special("negative query positions lq=2 lk=7", []int32{-2, -1000}, []int32{0, 1, 5, 300, math.MaxInt32, -1, 2147483000},
			opt(full, false, 0, scale), 1, 1, false, StorageF32)
	}
	// Logits of ±200: a naive exp overflows float32 (e^89 > MaxFloat32).
	q, kp := attnPositions(r, "random", 5, 67)
	special("logits ±200 lq=5 lk=67 random", q, kp, opt(gqa, false, 0, scale), 14, 14, false, StorageF32)
	q, kp = attnPositions(r, "prefill", 9, 40)
	special("logits ±200 lq=9 lk=40 prefill", q, kp, opt(full, true, 0, scale), 14, 14, false, StorageF32)
	// Keys ≈ 2^31 before the queries and a few near them, no window: ALiBi's
	// bias is taken relative to the nearest key (the far ones' would cost
	// every bit of the near scores).
	q, kp = attnPositions(r, "far and near keys", 2, 300)
	special("far and near keys lq=2 lk=300", q, kp, opt(full, true, 0, scale), 1, 1, false, StorageF32)
	q, kp = attnPositions(r, "far keys, near last", 2, 300)
	special("far keys, near last lq=2 lk=300", q, kp, opt(full, true, 0, scale), 1, 1, false, StorageF32)
	// Wide spreads: keys scaled by 10^U(−2, 1.5), scale 1.
	q, kp = attnPositions(r, "random+pad", 4, 129)
	special("wide logit spread lq=4 lk=129 random+pad", q, kp, opt(gqa, false, 0, 1), 1, 1, true, StorageF32)
	// Many queries per head group with few keys: prefill engines block the
	// queries of one KV group at a time (and gather, rotate in scratch), where
	// a decode step blocks every head of a few queries.
	mq := 320/full[0] + 3
	q, kp = attnPositions(r, "prefill", mq, 29)
	special(fmt.Sprintf("many queries lq=%d lk=29 prefill", mq), q, kp, opt(gqa, true, 0, scale), 1, 1, false, StorageF32)
	q, kp = attnPositions(r, "random+pad", mq, 23)
	special(fmt.Sprintf("many queries lq=%d lk=23 random+pad", mq), q, kp, opt(full, false, 0, scale), 1, 1, false, StorageF32)
	// A window's edge inside one tile of keys: the oldest key is exactly
	// Window positions before the query (masked), every other key is seen.
	special("window edge lq=1 lk=41", []int32{1000}, attnRun(960, 41), opt(full, true, 40, scale), 1, 1, false, StorageF32)
	// Queries about 2^31 after their keys, no window: every distance is beyond
	// every table and ALiBi's raw bias near −2^31·slope, whose float32 rounding
	// (±64) would swamp the differences between keys without a per-row shift.
	q, kp = attnPositions(r, "far after keys", 3, 37)
	special("far after keys lq=3 lk=37 causal", q, kp, opt(full, true, 0, scale), 1, 1, false, StorageF32)
	q, kp = attnPositions(r, "far after keys", 1, 70)
	special("far after keys lq=1 lk=70", q, kp, opt(gqa, false, 0, scale), 1, 1, false, StorageF32)
	// Keys long after the queries, no mask (an encoder): whole tiles 128 and more
	// positions ahead, where bucketed biases are one constant per tile.
	special("keys long after the queries lq=2 lk=260", []int32{0, 5}, attnRun(0, 260), opt(full, false, 0, scale), 1, 1, false, StorageF32)
	// Inputs of 16-bit models.
	q, kp = attnPositions(r, "prefill", 16, 48)
	special("f16 inputs lq=16 lk=48 prefill", q, kp, opt(gqa, true, 0, scale), 1, 1, false, StorageF16)
	q, kp = attnPositions(r, "decode", 1, 300)
	special("bf16 inputs lq=1 lk=300 decode", q, kp, opt(full, true, 100, scale), 1, 1, false, StorageBF16)
	// NaN inputs: a query head whose q is NaN gets NaN (not zeros, not a number
	// made of the other keys), a NaN value (key 2, dim 7; key 5, dim 4) reaches
	// the rows that weigh its key and no other; the rest is as without them. Fewer keys than a vector: the
	// lanes past them must not hide the NaN scores from the row's maximum.
	q, kp = attnPositions(r, "prefill", 3, 11)
	cases = append(cases, attnCase{"NaN inputs lq=3 lk=11 prefill", q, kp, opt(full, true, 0, scale), 1, 1, false, StorageF32, true})
	// The same from position 0: queries 0 and 1 precede the NaN value's key
	// 2, and a kernel that multiplies every row's p by a tile's v (0·NaN)
	// must keep them out of it.
	q, kp = attnPositions(r, "prefill", 11, 11)
	cases = append(cases, attnCase{"NaN inputs lq=11 lk=11 prefill", q, kp, opt(full, true, 0, scale), 1, 1, false, StorageF32, true})
	// One query (a decode step's tile of one row), at position 1, before
	// the NaN values' keys 2 and 5: a kernel that adds p·v of a key its row
	// does not see, trusting p = 0, must have left that key's v unread.
	cases = append(cases, attnCase{"NaN values after the query lq=1 lk=11 decode", []int32{1}, attnRun(0, 11), opt(full, true, 0, scale),
		1, 1, false, StorageF32, true})
	// The one long decode row: 4100 keys, fewer (down to 1000) where
	// QHeads·HeadDim would make it cost over 2^24 multiply-adds.
	dl := min(4100, max(1000, attnDecodeBudget/(gqa[0]*hd)))
	if dl%64 == 0 {
		dl += 3 // off every tile width
	}
	q, kp = attnPositions(r, "decode", 1, dl)
	for j := range kp {
		if r.IntN(50) == 0 {
			kp[j] = -1
		}
	}
	special(fmt.Sprintf("decode lq=1 lk=%d with padding", len(kp)), q, kp, opt(heads[min(1, len(heads)-1)], true, 0, scale), 1, 1, false, StorageF32)
	// More query rows per KV head than a decode tile holds, ≈ 2^31 after
	// their keys: ALiBi's shifts from the main and tensor-core kernels. Keys
	// 0 … 39 (a run: the nearest is its last key), then the same with keys
	// 35, 37 and 39 moved next to the queries (no longer a run; the nearest
	// keys are in the odd lanes of 8 or 2 lanes sharing a row).
	q, kp = attnPositions(r, "far after a run", 20, 40)
	special("far after a run lq=20 lk=40 causal", q, kp, opt(full, true, 0, scale), 1, 1, false, StorageF32)
	q, kp = attnPositions(r, "far keys, near odd", 20, 40)
	special("far keys, near odd lq=20 lk=40", q, kp, opt(full, false, 0, scale), 1, 1, false, StorageF32)

	if st != StorageF32 {
		for i := range cases {
			cases[i].st = st
		}
	}
	// tableFor is the table of a case: xl's depends on the heads and the
	// distances (attnXLTable), every other family's is the one above.
	tableFor := func(o AttentionOptions, qpos, kpos []int32, x int) []float32 {
		if s.Encoding == spec.XL {
			return attnXLTable(r, hd, o, qpos, kpos, x)
		}
		return table
	}
	for x, ac := range cases {
		in := attnInputs(r, ac, hd)
		name := fmt.Sprintf("Attention %s QHeads=%d KVHeads=%d causal=%v window=%d", ac.name, ac.o.QHeads, ac.o.KVHeads, ac.o.Causal, ac.o.Window)
		attnCall(rep, s, hd, name, ac, in[0], in[1], in[2], tableFor(ac.o, ac.qpos, ac.kpos, x), false, st, k.Attention)
	}
	if rope {
		rot := k.AttentionRotated
		// cases[6] has QHeads 8 over 2 KV heads in a decode block: the score
		// kernels' four-key blocks of R rows (grp a multiple of R) over a cache
		// read as given.
		for ci, ac := range []attnCase{cases[5], cases[10], cases[9], cases[6], cases[len(cases)-4]} {
			in := attnInputs(r, ac, hd)
			seqLen := attentionSeqLen(ac.qpos, ac.kpos)
			kr := ropeRotateAt(s, in[1], ac.kpos, ac.o.KVHeads, seqLen)
			if mrope {
				kr = MRoPEApply(s, in[1], attnMRoPEIDs(s, ac.kpos), ac.o.KVHeads, false)
			}
			krot := st.narrow(kr)
			name := fmt.Sprintf("AttentionRotated %s QHeads=%d KVHeads=%d causal=%v window=%d (%d)", ac.name, ac.o.QHeads, ac.o.KVHeads, ac.o.Causal, ac.o.Window, ci)
			attnCall(rep, s, hd, name, ac, in[0], krot, in[2], nil, true, st, func(out, q, kk, v, _ []float32, qpos, kpos []int32, o AttentionOptions) {
				rot(out, q, kk, v, qpos, kpos, o)
			})
		}
	}
	if k.AttentionPaged != nil {
		// xl: rows for distances up to 700 (the paged sequences' longest is 300
		// keys; the one near 2^31−1 clamps) .
		paged := func(o AttentionOptions) []float32 { return tableFor(o, []int32{700}, []int32{0}, 0) }
		attnPaged(rep, s, k, r, paged(opt(gqa, true, 0, scale)), opt(gqa, true, 0, scale), "causal", st)
		attnPaged(rep, s, k, r, paged(opt(full, false, 40, scale)), opt(full, false, 40, scale), "window=40", st)
		// A long prefill chunk (and a decode row beside it): more rows per
		// sequence than a tile of any kernel, which GPU launchers meet with
		// the keys turned once ahead (rope inside).
		attnPaged(rep, s, k, r, paged(opt(gqa, true, 0, scale)), opt(gqa, true, 0, scale), "long prefill", st, attnLongPaged...)
	}
	attnPanics(rep, s, k, r, table)
	return rep
}

// narrow rounds x to float32.
func narrow(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// narrow rounds x to the storage type (float32 for f32), as float32 values.
func (st Storage) narrow(x []float64) []float32 {
	y := narrow(x)
	if st != StorageF32 {
		for i, v := range x {
			y[i] = float32(st.Round(v))
		}
	}
	return y
}

// attnFunc is the common signature of Attention and AttentionRotated (the
// latter ignores the table).
type attnFunc func(out, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions)

// attnCall runs one call on guarded copies and checks it against
// AttentionRef (kRotated: k is given rotated).
func attnCall(rep *Report, s *spec.Spec, hd int, name string, ac attnCase, q, k, v, table []float32, kRotated bool, st Storage, run attnFunc) {
	c := rep.begin(name)
	out := guardUnset(len(ac.qpos) * ac.o.QHeads * hd)
	ins := []*guarded{guard(q), guard(k), guard(v), guard(table)}
	prints := make([]fingerprint, len(ins))
	for i, g := range ins {
		prints[i] = g.fingerprint()
	}
	qp, kp := append([]int32(nil), ac.qpos...), append([]int32(nil), ac.kpos...)
	if !c.call(func() { run(out.s, ins[0].s, ins[1].s, ins[2].s, ins[3].s, qp, kp, ac.o) }) {
		return
	}
	out.intact(c, "out")
	for i, what := range []string{"q", "k", "v", "table"} {
		ins[i].unchanged(c, what, prints[i])
	}
	intsUnchanged(c, "qpos", qp, ac.qpos)
	intsUnchanged(c, "kpos", kp, ac.kpos)
	want, bound := attentionRef(s, hd, q, k, v, table, ac.qpos, ac.kpos, ac.o, kRotated, st, attnIDs(s, ac.qpos, ac.kpos))
	checkAttnOut(c, out.s, want, bound)
}

// checkAttnOut compares outputs with the reference: within the bound, and
// exactly 0 where the bound is 0 (a query with no unmasked key).
func checkAttnOut(c *check, got []float32, want, bound []float64) {
	for i, w := range want {
		if math.IsNaN(w) {
			if !math.IsNaN(float64(got[i])) {
				c.fail("out[%d] = %v, want NaN (a NaN input reaches it)", i, got[i])
			} else {
				c.r.ratio(0, c.name)
			}
			continue
		}
		if bound[i] == 0 {
			if got[i] != 0 {
				c.fail("out[%d] = %v, want 0 (no unmasked key)", i, got[i])
			} else {
				c.r.ratio(0, c.name)
			}
			continue
		}
		c.near("out", i, float64(got[i]), w, bound[i])
	}
}
