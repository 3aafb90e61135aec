package kernelfuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/generated/bloom_7b1"
	"github.com/posenc/posenc/generated/gemma3_4b_local"
	"github.com/posenc/posenc/generated/llama2_7b"
	"github.com/posenc/posenc/generated/phi35_mini"
	"github.com/posenc/posenc/generated/qwen25_vl_7b"
	"github.com/posenc/posenc/generated/shaw2018_base"
	"github.com/posenc/posenc/generated/t5_base"
	"github.com/posenc/posenc/generated/transformer_xl_base"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// attnPkg adapts a generated package's attention form: its options convert
// from verify's (the same fields), table is nil unless rpe_bias or rpe_full, and rotated
// and apply are nil unless rope.
type attnPkg struct {
	name            string
	headDim, qHeads int // qHeads: the spec's Heads for bias families, 0 for rope (any)
	table           bool
	tableLen        int  // rpe_bias: Heads·Buckets; rpe_full: 2·Buckets·HeadDim
	xl              bool // table is u, v ([QHeads][HeadDim]) and 1 to lk+40 rows of rel, sized per call
	// mrope (M-RoPE packages, whose forms take ids; attention and rotated are nil):
	// qids and kids are fuzzed apart from the positions, which only mask.
	mrope     func(out, q, k, v []float32, qids, kids, qpos, kpos []int32, o verify.AttentionOptions)
	attention func(out, q, k, v, table []float32, qpos, kpos []int32, o verify.AttentionOptions)
	rotated   func(out, q, k, v []float32, qpos, kpos []int32, o verify.AttentionOptions)
	apply     func(x []float32, pos []int32, heads int)
	reg       registry
}

// attnPkgs: rope (half, and sliding-window Gemma 3 with its own base, and
// LongRoPE, whose frequencies switch with the call's positions), alibi and
// rpe_bias (T5 buckets).
var attnPkgs = []attnPkg{
	{name: "llama2_7b", headDim: llama2_7b.HeadDim,
		attention: func(out, q, k, v, _ []float32, qp, kp []int32, o verify.AttentionOptions) {
			llama2_7b.Attention(out, q, k, v, qp, kp, llama2_7b.AttentionOptions(o))
		},
		rotated: func(out, q, k, v []float32, qp, kp []int32, o verify.AttentionOptions) {
			llama2_7b.AttentionRotated(out, q, k, v, qp, kp, llama2_7b.AttentionOptions(o))
		},
		apply: llama2_7b.Apply,
		reg:   registry{llama2_7b.Variants, llama2_7b.VariantAvailable, llama2_7b.UseVariant, llama2_7b.ActiveVariant}},
	{name: "gemma3_4b_local", headDim: gemma3_4b_local.HeadDim,
		attention: func(out, q, k, v, _ []float32, qp, kp []int32, o verify.AttentionOptions) {
			gemma3_4b_local.Attention(out, q, k, v, qp, kp, gemma3_4b_local.AttentionOptions(o))
		},
		rotated: func(out, q, k, v []float32, qp, kp []int32, o verify.AttentionOptions) {
			gemma3_4b_local.AttentionRotated(out, q, k, v, qp, kp, gemma3_4b_local.AttentionOptions(o))
		},
		apply: gemma3_4b_local.Apply,
		reg:   registry{gemma3_4b_local.Variants, gemma3_4b_local.VariantAvailable, gemma3_4b_local.UseVariant, gemma3_4b_local.ActiveVariant}},
	{name: "phi35_mini", headDim: phi35_mini.HeadDim,
		attention: func(out, q, k, v, _ []float32, qp, kp []int32, o verify.AttentionOptions) {
			phi35_mini.Attention(out, q, k, v, qp, kp, phi35_mini.AttentionOptions(o))
		},
		rotated: func(out, q, k, v []float32, qp, kp []int32, o verify.AttentionOptions) {
			phi35_mini.AttentionRotated(out, q, k, v, qp, kp, phi35_mini.AttentionOptions(o))
		},
		apply: phi35_mini.Apply,
		reg:   registry{phi35_mini.Variants, phi35_mini.VariantAvailable, phi35_mini.UseVariant, phi35_mini.ActiveVariant}},
	{name: "bloom_7b1", headDim: bloom_7b1.HeadDim, qHeads: bloom_7b1.Heads,
		attention: func(out, q, k, v, _ []float32, qp, kp []int32, o verify.AttentionOptions) {
			bloom_7b1.Attention(out, q, k, v, qp, kp, bloom_7b1.AttentionOptions(o))
		},
		reg: registry{bloom_7b1.Variants, bloom_7b1.VariantAvailable, bloom_7b1.UseVariant, bloom_7b1.ActiveVariant}},
	{name: "t5_base", headDim: t5_base.HeadDim, qHeads: t5_base.Heads, table: true, tableLen: t5_base.Heads * t5_base.Buckets,
		attention: func(out, q, k, v, table []float32, qp, kp []int32, o verify.AttentionOptions) {
			t5_base.Attention(out, q, k, v, table, qp, kp, t5_base.AttentionOptions(o))
		},
		reg: registry{t5_base.Variants, t5_base.VariantAvailable, t5_base.UseVariant, t5_base.ActiveVariant}},
	// rpe_full: table is Shaw et al.'s aK then aV (as verify packs them).
	{name: "shaw2018_base", headDim: shaw2018_base.HeadDim, table: true, tableLen: 2 * shaw2018_base.Buckets * shaw2018_base.HeadDim,
		attention: func(out, q, k, v, table []float32, qp, kp []int32, o verify.AttentionOptions) {
			n := len(table) / 2
			shaw2018_base.Attention(out, q, k, v, table[:n], table[n:], qp, kp, shaw2018_base.AttentionOptions(o))
		},
		reg: registry{shaw2018_base.Variants, shaw2018_base.VariantAvailable, shaw2018_base.UseVariant, shaw2018_base.ActiveVariant}},
	// M-RoPE (Qwen2.5-VL's three axes): rotated at fuzzed ids, masked by position.
	{name: "qwen25_vl_7b", headDim: qwen25_vl_7b.HeadDim,
		mrope: func(out, q, k, v []float32, qids, kids, qp, kp []int32, o verify.AttentionOptions) {
			qwen25_vl_7b.Attention(out, q, k, v, qids, kids, qp, kp, qwen25_vl_7b.AttentionOptions(o))
		},
		reg: registry{qwen25_vl_7b.Variants, qwen25_vl_7b.VariantAvailable, qwen25_vl_7b.UseVariant, qwen25_vl_7b.ActiveVariant}},
	// xl: table is Transformer-XL's u, v and rel (as verify packs them).
	{name: "transformer_xl_base", headDim: transformer_xl_base.HeadDim, xl: true,
		attention: func(out, q, k, v, table []float32, qp, kp []int32, o verify.AttentionOptions) {
			n := o.QHeads * transformer_xl_base.HeadDim
			transformer_xl_base.Attention(out, q, k, v, table[2*n:], table[:n], table[n:2*n], qp, kp, transformer_xl_base.AttentionOptions(o))
		},
		reg: registry{transformer_xl_base.Variants, transformer_xl_base.VariantAvailable, transformer_xl_base.UseVariant, transformer_xl_base.ActiveVariant}},
}

// attnElems caps lq·lk·QHeads·HeadDim of a fuzz call (the reference's work).
const attnElems = 1 << 19

// FuzzAttention runs the attention form of a rope (three rules), M-RoPE,
// alibi, rpe_bias, rpe_full and xl package on fuzzed shapes, head groupings, masks and positions
// (from 0, decode, scattered, padded, near 2^31−1, far after the keys) and
// input scales (up to logits of ±1000), on every variant the CPU runs, and
// checks every output element against verify.AttentionRef within its bound
// (a fully masked row must be exactly 0); for rope also AttentionRotated over
// keys rotated by the package's Apply.
func FuzzAttention(f *testing.F) {
	f.Add(uint8(0), uint16(1), uint16(70), uint8(4), uint8(1), uint8(1), uint8(0), uint8(0), uint64(1))
	f.Add(uint8(1), uint16(9), uint16(9), uint8(1), uint8(0), uint8(3), uint8(2), uint8(1), uint64(2))
	f.Add(uint8(2), uint16(2), uint16(200), uint8(8), uint8(2), uint8(4), uint8(5), uint8(2), uint64(3))
	f.Add(uint8(3), uint16(3), uint16(37), uint8(0), uint8(3), uint8(5), uint8(1), uint8(3), uint64(4))
	f.Add(uint8(4), uint16(5), uint16(130), uint8(0), uint8(4), uint8(2), uint8(4), uint8(0), uint64(5))
	// M-RoPE (index 6): a causal prefill and a decode near 2^31−1.
	f.Add(uint8(6), uint16(12), uint16(80), uint8(7), uint8(1), uint8(0), uint8(1), uint8(0), uint64(8))
	f.Add(uint8(6), uint16(1), uint16(150), uint8(3), uint8(0), uint8(3), uint8(0), uint8(2), uint64(9))
	// xl (index 7): a prefill with rows clamped, and a decode over far keys.
	f.Add(uint8(7), uint16(7), uint16(90), uint8(7), uint8(1), uint8(0), uint8(1), uint8(1), uint64(6))
	f.Add(uint8(7), uint16(1), uint16(250), uint8(3), uint8(0), uint8(5), uint8(0), uint8(3), uint64(7))
	specs := make(map[string]*spec.Spec)
	for _, p := range attnPkgs {
		specs[p.name] = zooSpec(f, p.name)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, ulq, ulk uint16, qh, group, mode, mask, mag uint8, seed uint64) {
		p := attnPkgs[int(pkg)%len(attnPkgs)]
		sp := specs[p.name]
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		// Heads: rope any QHeads in [1, 9] over a divisor; bias families Heads over a divisor.
		qHeads := p.qHeads
		if qHeads == 0 {
			qHeads = int(qh)%9 + 1
		}
		var divs []int
		for d := 1; d <= qHeads; d++ {
			if qHeads%d == 0 {
				divs = append(divs, d)
			}
		}
		kvHeads := divs[int(group)%len(divs)]
		lq, lk := int(ulq)%33+1, int(ulk)%300+1
		lq = max(1, min(lq, attnElems/(lk*qHeads*p.headDim)))
		qpos, kpos := attnFuzzPositions(r, mode, lq, lk)
		o := verify.AttentionOptions{QHeads: qHeads, KVHeads: kvHeads, Scale: float32(1 / math.Sqrt(float64(p.headDim)))}
		switch mask % 6 {
		case 1:
			o.Causal = true
		case 2:
			o.Causal, o.Window = true, 1+r.IntN(40)
		case 3:
			o.Window = 1 + r.IntN(300)
		case 4:
			o.Causal, o.Window = true, 1<<30+r.IntN(1<<30)
		}
		amp := []float64{1, 4, 0.01, 30}[mag%4] // 30: logits of about ±1000
		q := uniform(r, lq*qHeads*p.headDim, amp)
		k := uniform(r, lk*kvHeads*p.headDim, amp)
		v := uniform(r, lk*kvHeads*p.headDim, 2)
		var table []float32
		switch {
		case p.table:
			table = uniform(r, p.tableLen, 3)
		case p.xl:
			// Rows for distances 0 … nRel−1: some calls have a row for every distance
			// they meet, others clamp the far ones (and every near-2^31 distance).
			nrel := 1 + r.IntN(lk+40)
			table = uniform(r, 2*qHeads*p.headDim+nrel*kvHeads*p.headDim, 3)
		}
		what := fmt.Sprintf("%s lq=%d lk=%d QHeads=%d KVHeads=%d causal=%v window=%d mode=%d amp=%g",
			p.name, lq, lk, qHeads, kvHeads, o.Causal, o.Window, mode%6, amp)
		if p.mrope != nil {
			// Each token's ids: its position plus per-axis offsets, anywhere in int32
			// for a sixth of the tokens (vision ids far from the text's).
			axes := verify.MRoPEAxes(sp)
			ids := func(pos []int32) []int32 {
				out := make([]int32, 0, len(pos)*axes)
				for _, p := range pos {
					for range axes {
						d := int64(r.IntN(129) - 64)
						if r.IntN(6) == 0 {
							d = int64(r.Int32()) - int64(p)
						}
						out = append(out, int32(min(max(int64(p)+d, math.MinInt32), math.MaxInt32)))
					}
				}
				return out
			}
			qids, kids := ids(qpos), ids(kpos)
			want, bound := verify.AttentionRefMRoPE(sp, p.headDim, q, k, v, qids, kids, qpos, kpos, o, false)
			p.reg.each(t, func(variant string) {
				out := make([]float32, len(q))
				p.mrope(out, q, k, v, qids, kids, qpos, kpos, o)
				attnCheck(t, variant+" Attention "+what, out, want, bound)
			})
			return
		}
		want, bound := verify.AttentionRef(sp, p.headDim, q, k, v, table, qpos, kpos, o, false)
		var kRot []float32
		var wantRot, boundRot []float64
		if p.rotated != nil {
			// Keys rotated once, as a cache written through Apply holds them; the
			// frequencies of a call are those of all its positions (LongRoPE), so
			// Apply gets them all, the queries' positions as padding rows.
			kRot = append([]float32(nil), k...)
			all := append(append([]int32(nil), kpos...), qpos...)
			buf := append(kRot, make([]float32, lq*kvHeads*p.headDim)...)
			p.apply(buf, all, kvHeads)
			kRot = buf[:len(k)]
			wantRot, boundRot = verify.AttentionRef(sp, p.headDim, q, kRot, v, table, qpos, kpos, o, true)
		}
		p.reg.each(t, func(variant string) {
			out := make([]float32, len(q))
			p.attention(out, q, k, v, table, qpos, kpos, o)
			attnCheck(t, variant+" Attention "+what, out, want, bound)
			if p.rotated != nil {
				out = make([]float32, len(q))
				p.rotated(out, q, kRot, v, qpos, kpos, o)
				attnCheck(t, variant+" AttentionRotated "+what, out, wantRot, boundRot)
			}
		})
	})
}

// attnFuzzPositions returns query and key positions of one of six schemes:
// prefill from 0, decode (one run of keys, the queries at its end),
// scattered keys with padding, keys near 2^31−1, queries 2^31 after their
// keys, and every key padding.
func attnFuzzPositions(r *rand.Rand, mode uint8, lq, lk int) (qpos, kpos []int32) {
	qpos, kpos = make([]int32, lq), make([]int32, lk)
	switch mode % 6 {
	case 0:
		for j := range kpos {
			kpos[j] = int32(j)
		}
		for i := range qpos {
			qpos[i] = int32(i * lk / lq)
		}
	case 1:
		base := int32(r.IntN(1 << 20))
		for j := range kpos {
			kpos[j] = base + int32(j)
		}
		for i := range qpos {
			qpos[i] = base + int32(lk-lq+i)
		}
	case 2:
		for j := range kpos {
			kpos[j] = int32(r.IntN(5000))
			if r.IntN(5) == 0 {
				kpos[j] = -1 - int32(r.IntN(3))
			}
		}
		for i := range qpos {
			qpos[i] = int32(r.IntN(5000))
		}
	case 3:
		for j := range kpos {
			kpos[j] = math.MaxInt32 - int32(r.IntN(4*lk))
		}
		for i := range qpos {
			qpos[i] = math.MaxInt32 - int32(r.IntN(2*lk))
		}
	case 4:
		for j := range kpos {
			kpos[j] = int32(j)
		}
		for i := range qpos {
			qpos[i] = math.MaxInt32 - int32(i)
		}
	default:
		for j := range kpos {
			kpos[j] = -1
		}
		for i := range qpos {
			qpos[i] = int32(i)
		}
	}
	return qpos, kpos
}

// attnCheck fails t at the first element of got outside its bound around
// want (a bound of 0, a fully masked row, asks for exactly 0).
func attnCheck(t *testing.T, what string, got []float32, want, bound []float64) {
	t.Helper()
	for i, g := range got {
		if e := math.Abs(float64(g) - want[i]); !(e <= bound[i]) {
			t.Fatalf("%s: out[%d] = %g, want %g (|err| %g > bound %g)", what, i, g, want[i], e, bound[i])
		}
	}
}
