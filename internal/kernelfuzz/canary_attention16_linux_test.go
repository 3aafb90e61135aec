//go:build linux

package kernelfuzz

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/posenc/posenc/internal/goldens/grope_bf16_il"
	"github.com/posenc/posenc/internal/goldens/grope_temp_f16"
)

// attn16Pkg is the 16-bit attention form of a golden package: Attention or
// AttentionRotated with its own options type converted.
type attn16Pkg struct {
	name    string
	headDim int
	call    func(rotated bool, out, q, k, v []uint16, qpos, kpos []int32, qh, kvh int)
	reg     registry
}

// attn16Pkgs: f16 with a head of 10 (AVX-512 tail of 10, AVX2 8+2) and
// bf16 with 72 (AVX-512 4·16+8).
var attn16Pkgs = []attn16Pkg{
	{name: "grope_temp_f16", headDim: grope_temp_f16.HeadDim,
		call: func(rotated bool, out, q, k, v []uint16, qp, kp []int32, qh, kvh int) {
			o := grope_temp_f16.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.3, Causal: true}
			if rotated {
				grope_temp_f16.AttentionRotated(out, q, k, v, qp, kp, o)
			} else {
				grope_temp_f16.Attention(out, q, k, v, qp, kp, o)
			}
		},
		reg: registry{grope_temp_f16.Variants, grope_temp_f16.VariantAvailable, grope_temp_f16.UseVariant, grope_temp_f16.ActiveVariant}},
	{name: "grope_bf16_il", headDim: grope_bf16_il.HeadDim,
		call: func(rotated bool, out, q, k, v []uint16, qp, kp []int32, qh, kvh int) {
			o := grope_bf16_il.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.1, Causal: true}
			if rotated {
				grope_bf16_il.AttentionRotated(out, q, k, v, qp, kp, o)
			} else {
				grope_bf16_il.Attention(out, q, k, v, qp, kp, o)
			}
		},
		reg: registry{grope_bf16_il.Variants, grope_bf16_il.VariantAvailable, grope_bf16_il.UseVariant, grope_bf16_il.ActiveVariant}},
}

// TestCanaryAttention16 runs the 16-bit attention form of every runnable
// variant on decode steps (one query; the blocks whose keys and values
// scoresKV16 and valuesKV16 read in place, 4-key blocks and the keys left
// over) and a short prefill, with q, k, v and out each ending at a PROT_NONE
// guard page, and again starting right after one. A kernel touching memory
// outside its slices faults; results must equal those on ordinary Go
// memory bit for bit.
func TestCanaryAttention16(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	for _, atEnd := range []bool{true, false} {
		for _, p := range attn16Pkgs {
			for _, sh := range [][4]int{{1, 1, 1, 5}, {1, 3, 3, 6}, {1, 4, 2, 9}, {1, 8, 2, 66}, {2, 6, 3, 19}, {5, 2, 1, 7}} {
				lq, qh, kvh, lk := sh[0], sh[1], sh[2], sh[3]
				hd := p.headDim
				enc := func(n int) []uint16 {
					x := make([]uint16, n)
					for j := range x {
						x[j] = uint16(r.Uint32())&0x3fff | uint16(r.IntN(2))<<15 // |x| < 2: finite, no overflow
					}
					return x
				}
				q, k, v := enc(lq*qh*hd), enc(lk*kvh*hd), enc(lk*kvh*hd)
				kpos := make([]int32, lk)
				for j := range kpos {
					kpos[j] = int32(1000 + j)
				}
				qpos := kpos[lk-lq:]
				for _, rotated := range []bool{false, true} {
					p.reg.each(t, func(vn string) {
						want := make([]uint16, len(q))
						p.call(rotated, want, q, k, v, qpos, kpos, qh, kvh)
						gq, gk, gv, gout := place(t, q, atEnd), place(t, k, atEnd), place(t, v, atEnd), guarded[uint16](t, len(q), atEnd)
						gqp, gkp := place(t, qpos, atEnd), place(t, kpos, atEnd)
						faultFree(t, p.name+" "+vn, func() { p.call(rotated, gout, gq, gk, gv, gqp, gkp, qh, kvh) })
						if !slices.Equal(gout, want) {
							t.Errorf("%s %s rotated=%v lq=%d heads %d/%d lk=%d: output on guarded memory differs", p.name, vn, rotated, lq, qh, kvh, lk)
						}
					})
				}
			}
		}
	}
}
