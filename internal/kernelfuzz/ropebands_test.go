package kernelfuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/posenc/posenc/generated/phi35_mini"
	"github.com/posenc/posenc/verify"
)

// bandPkgs are the packages of TestRoPEErrorBands: ropePkgs and phi35_mini,
// whose LongRoPE calls switch to the long factors (a second frequency set)
// once max(pos)+1 exceeds original_max_position.
var bandPkgs = append(ropePkgs[:len(ropePkgs):len(ropePkgs)], ropePkg{
	name: "phi35_mini", headDim: phi35_mini.HeadDim, maxPosition: phi35_mini.MaxPosition,
	attention: phi35_mini.AttentionFactor, applyQK: phi35_mini.ApplyQK,
	reg: registry{phi35_mini.Variants, phi35_mini.VariantAvailable, phi35_mini.UseVariant, phi35_mini.ActiveVariant},
})

// ropeBand is a range of positions [lo, hi) of TestRoPEErrorBands.
type ropeBand struct {
	name   string
	lo, hi int64
}

// ropeBands are the position bands of TestRoPEErrorBands: the table, the
// exact path up to the 1e-6 bound's end (2^20) and beyond it, and negative
// positions; maxPos is the package's MaxPosition.
func ropeBands(maxPos int64) []ropeBand {
	return []ropeBand{
		{"[0,max)", 0, maxPos},
		{"[max,2^20]", maxPos, 1<<20 + 1},
		{"(2^20,2^24)", 1<<20 + 1, 1 << 24},
		{"[2^24,2^31)", 1 << 24, math.MaxInt32 + 1},
		{"[-2^20,0)", -(1 << 20), 0},
		{"[-2^31,-2^20)", math.MinInt32, -(1 << 20)},
	}
}

// bandPositions returns the positions of one band: a decode stream of 40
// consecutive positions that crosses a multiple of 256 where the band allows
// (a carry into the exact path's second digit), two interleaved streams
// 1024 apart (the row caches' slots are direct-mapped by position), the
// band's ends and uniform draws.
func bandPositions(r *rand.Rand, b ropeBand) []int32 {
	var pos []int64
	span := b.hi - b.lo
	start := b.lo + r.Int64N(span)
	if span > 600 {
		start = max(b.lo, min(b.hi-300, (start&^255)-20))
	}
	for t := range int64(40) {
		pos = append(pos, start+t%span)
	}
	if span > 4096 {
		a := b.lo + r.Int64N(span-2048)
		for t := range int64(16) {
			pos = append(pos, a+t, a+1024+t)
		}
	}
	pos = append(pos, b.lo, b.hi-1)
	for range 40 {
		pos = append(pos, b.lo+r.Int64N(span))
	}
	out := make([]int32, len(pos))
	for i, p := range pos {
		out[i] = int32(p)
	}
	return out
}

// TestRoPEErrorBands measures, per position band, the largest error of
// ApplyQK against verify.RoPEApply in units of the bound (docs/design: 1e-6
// up to |p| = 2^20, 1e-5 beyond), one token per call, three calls per
// position (decode: the layers of a step), and all of a band's tokens in one
// call (prefill), for every runnable variant of the
// rope packages, and fails when it exceeds 1. The table it logs (go test -v)
// is the error-versus-position evidence of docs/performance.md.
func TestRoPEErrorBands(t *testing.T) {
	const qHeads, kHeads = 4, 2
	var table strings.Builder
	fmt.Fprintf(&table, "%-16s %-7s %-14s %9s %9s\n", "package", "variant", "band", "decode", "prefill")
	for _, pk := range bandPkgs {
		s := zooSpec(t, pk.name)
		r := rand.New(rand.NewPCG(14, 4))
		bands := ropeBands(int64(pk.maxPosition))
		inputs := make([][]int32, len(bands))
		for i, b := range bands {
			inputs[i] = bandPositions(r, b)
		}
		pk.reg.each(t, func(v string) {
			for i, b := range bands {
				pos := inputs[i]
				worst := [2]float64{}
				for mode := range 2 {
					tokens := [][]int32{pos}
					if mode == 0 {
						tokens = nil
						// Three calls per position, as three layers of a decode step: the
						// exact path computes the row, then caches it, then reuses it.
						for j := range pos {
							tokens = append(tokens, pos[j:j+1], pos[j:j+1], pos[j:j+1])
						}
					}
					for _, call := range tokens {
						n := len(call)
						q := randomRoPEInput(r, n*qHeads*pk.headDim)
						k := randomRoPEInput(r, n*kHeads*pk.headDim)
						gq, gk := append([]float32(nil), q...), append([]float32(nil), k...)
						pk.applyQK(gq, gk, call, qHeads, kHeads)
						wq := verify.RoPEApply(s, q, call, qHeads, false)
						wk := verify.RoPEApply(s, k, call, kHeads, false)
						for j, p := range call {
							bound := verify.RoPEBound(int64(p))
							for _, o := range []struct {
								x, y  []float32
								ref   []float64
								heads int
							}{{q, gq, wq, qHeads}, {k, gk, wk, kHeads}} {
								m := o.heads * pk.headDim
								e := verify.RoPERelativeError(s, o.x[j*m:(j+1)*m], o.y[j*m:(j+1)*m], o.ref[j*m:(j+1)*m], call[j:j+1], o.heads) / bound
								if e > worst[mode] {
									worst[mode] = e
								}
								if e > 1 {
									t.Errorf("%s/%s: position %d (band %s): error %.3g × the bound", pk.name, v, p, b.name, e)
								}
							}
						}
					}
				}
				fmt.Fprintf(&table, "%-16s %-7s %-14s %9.3f %9.3f\n", pk.name, v, b.name, worst[0], worst[1])
			}
		})
	}
	t.Log("largest |error| / bound per band (≤ 1 passes):\n" + table.String())
}

// randomRoPEInput returns n values uniform in [−1, 1).
func randomRoPEInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2*r.Float64() - 1)
	}
	return x
}
