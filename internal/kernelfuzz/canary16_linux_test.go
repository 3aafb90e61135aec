//go:build linux

package kernelfuzz

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCanaryStorage16 runs ScaleQ and ApplyMRoPE of every runnable variant
// of the 16-bit packages of FuzzStorage16 with every slice ending at a
// PROT_NONE guard page, and again starting right after one: ScaleQ rows of
// 1…9 heads (grope_temp_f16: 10…90 values, tails of 2, 4+2 and 8+2
// elements in the 16-bit scaleRows kernel), M-RoPE calls of 1…5 tokens. A kernel touching
// memory outside its slices faults; results must equal those on ordinary
// Go memory bit for bit.
func TestCanaryStorage16(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	for _, atEnd := range []bool{true, false} {
		for i, p := range storage16Pkgs {
			s := specOf(t, i)
			hd := s.HeadDim
			for heads := 1; heads <= 9; heads += 2 {
				tokens := 1 + heads%5
				axes := 1
				if p.applyMRoPE != nil {
					axes = 3
				}
				pos := make([]int32, tokens*axes)
				for j := range pos {
					pos[j] = int32(r.IntN(100000)) - 50
				}
				x := make([]uint16, tokens*heads*hd)
				for j := range x {
					x[j] = uint16(r.Uint32()) &^ 0x4000 // keep values small: clear the top exponent bit
				}
				call, name := p.scaleQ, "ScaleQ"
				if p.applyMRoPE != nil {
					call, name = p.applyMRoPE, "ApplyMRoPE"
				}
				p.reg.each(t, func(v string) {
					want := slices.Clone(x)
					call(want, pos, heads)
					g, gp := place(t, x, atEnd), place(t, pos, atEnd)
					faultFree(t, p.name+" "+v+" "+name, func() { call(g, gp, heads) })
					if !slices.Equal(g, want) {
						t.Errorf("%s %s %s heads=%d on guarded memory differs", p.name, v, name, heads)
					}
				})
			}
		}
	}
}
