package cudahost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/verify"
)

// storageMRoPETemperature adds the storage-rounded cases of the M-RoPE
// launchers (apply_mrope, apply_qk_mrope, inverse_mrope; driver ops 16–18)
// of a spec with mrope_section and of scale_q (op 25) of a spec with
// attn_temperature: 16-bit inputs, the float64 references verify.MRoPEApply
// and verify.TemperatureApply on them, and the bound of storageCheck.check
// with the float32 bound of each form (RoPE: 1e-5·(|x_a|+|x_b|)·A at any
// position; ScaleQ: 3·2^−24·|ref|, verify's tempTol).
func (l *Lib) storageMRoPETemperature(ck *storageCheck, r *rand.Rand) {
	s := l.spec
	k := l.RoPE()
	hd := s.HeadDim
	if s.IsMRoPE() {
		a := verify.RoPEAttentionFactor(s)
		pa, pb := verify.RoPEPairs(s)
		partner := make([]int, hd) // pair partner of every dim, −1 for untouched ones
		for i := range partner {
			partner[i] = -1
		}
		for i := range pa {
			partner[pa[i]], partner[pb[i]] = pb[i], pa[i]
		}
		bound := func(x []float32) func(i int) float64 {
			return func(i int) float64 {
				d := i % hd
				if partner[d] < 0 {
					return 0
				}
				return 1e-5 * (math.Abs(float64(x[i])) + math.Abs(float64(x[i-d+partner[d]]))) * a
			}
		}
		n := verify.MRoPEAxes(s)
		// Axis positions: a text token (equal axes), table rows, the
		// exact path at large and negative positions, the int32 limit.
		mpos := func(tokens int) []int32 {
			pos := make([]int32, 0, n*tokens)
			for t := range tokens {
				for ax := range n {
					pos = append(pos, storagePositions[(t*(ax+1)+ax)%len(storagePositions)])
				}
			}
			return pos
		}
		for _, heads := range []int{1, 3} {
			for _, tokens := range []int{1, 7, 10} {
				pos := mpos(tokens)
				for _, inv := range []bool{false, true} {
					x := l.randStorage(r, tokens*heads*hd)
					want := verify.MRoPEApply(s, x, pos, heads, inv)
					got := append([]float32(nil), x...)
					name := "ApplyMRoPE"
					if inv {
						name = "InverseMRoPE"
						k.InverseMRoPE(got, pos, heads)
					} else {
						k.ApplyMRoPE(got, pos, heads)
					}
					ck.check(fmt.Sprintf("%s tokens=%d heads=%d", name, tokens, heads), got, want, bound(x))
				}
			}
		}
		pos := mpos(10)
		q, kk := l.randStorage(r, 10*4*hd), l.randStorage(r, 10*2*hd)
		wq, wk := verify.MRoPEApply(s, q, pos, 4, false), verify.MRoPEApply(s, kk, pos, 2, false)
		gq, gk := append([]float32(nil), q...), append([]float32(nil), kk...)
		k.ApplyQKMRoPE(gq, gk, pos, 4, 2)
		ck.check("ApplyQKMRoPE tokens=10 qHeads=4 kHeads=2 q", gq, wq, bound(q))
		ck.check("ApplyQKMRoPE tokens=10 qHeads=4 kHeads=2 k", gk, wk, bound(kk))
	}
	if s.AttnTemperature != nil {
		f := int32(min(s.AttnTemperature.FloorScale, math.MaxInt32/4))
		pos := append([]int32{f - 2, f - 1, 2*f - 1, 4 * f}, storagePositions...)
		for _, heads := range []int{1, 3, 5} {
			x := l.randStorage(r, len(pos)*heads*hd)
			want := verify.TemperatureApply(s, x, pos, heads)
			got := append([]float32(nil), x...)
			k.ScaleQ(got, pos, heads)
			ck.check(fmt.Sprintf("ScaleQ tokens=%d heads=%d", len(pos), heads), got, want,
				func(i int) float64 { return 3 * 0x1p-24 * math.Abs(want[i]) })
		}
	}
}
