package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// tempTol is the relative bound of ScaleQ: the factor rounded once to
// float32 (2^−24) and the product rounded once (2^−24), with a margin for
// the float64 log1p: 3·2^−24 ≈ 1.8e−7, below RoPE's 1e−6. A kernel that
// evaluated the factor in float32 from a float32 position (as transformers
// does) would still pass below 2^24; one that drops the floor, the +1 or a
// token fails.
const tempTol = 3.0 / (1 << 24)

// temperatureCases checks ScaleQ of a spec with attn_temperature against
// TemperatureApply: random token and head counts (odd ones included), the
// positions where the floor steps (0, floor_scale−2, floor_scale−1,
// multiples of floor_scale), 2^20, 2^31−1 and negative ones, and a length
// mismatch that must panic before writing.
func temperatureCases(rep *Report, s *spec.Spec, k RoPEKernels) {
	if k.ScaleQ == nil {
		rep.begin("ScaleQ").fail("a spec with attn_temperature needs ScaleQ")
		return
	}
	a := s.AttnTemperature
	f := int64(a.FloorScale)
	special := []int64{0, 1, f - 2, f - 1, f, 2*f - 1, 2 * f, 1 << 20, 1<<20 - 1, 1<<24 + 1, math.MaxInt32, math.MaxInt32 - 1, -1, -2, -f, math.MinInt32}
	r := rand.New(rand.NewPCG(0x7465, 0x6d70))
	gen := func(n int) []int32 {
		pos := make([]int32, n)
		for i := range pos {
			switch u := r.IntN(4); u {
			case 0:
				pos[i] = int32(max(special[r.IntN(len(special))], math.MinInt32))
			case 1:
				pos[i] = int32(r.Int64N(4 * f))
			case 2:
				pos[i] = int32(r.Int64N(math.MaxInt32))
			default:
				pos[i] = int32(r.Int64N(1 << 20))
			}
		}
		return pos
	}
	for i, n := range tokenCounts {
		heads := []int{1, 3, 5, 8, 40}[i%5]
		pos := gen(n)
		if i == 0 {
			pos = []int32{0}
		}
		temperatureCase(rep, s, fmt.Sprintf("ScaleQ tokens=%d heads=%d", n, heads), pos, heads, r, k)
	}
	// Every special position, one token each, in one call.
	pos := make([]int32, 0, len(special))
	for _, p := range special {
		if p >= math.MinInt32 && p <= math.MaxInt32 {
			pos = append(pos, int32(p))
		}
	}
	temperatureCase(rep, s, fmt.Sprintf("ScaleQ special positions %v heads=7", pos), pos, 7, r, k)
	temperatureCase(rep, s, "ScaleQ no tokens", nil, 3, r, k)

	g := guard(randomVector(r, 3*2*s.HeadDim-1))
	rep.expectPanic("ScaleQ with q one element short", func() { k.ScaleQ(g.s, []int32{0, 5, 9}, 2) }, g)
	g2 := guard(randomVector(r, 3*2*s.HeadDim))
	rep.expectPanic("ScaleQ with heads 0", func() { k.ScaleQ(g2.s, []int32{0, 5, 9}, 0) }, g2)
}

// temperatureCase runs ScaleQ on random values at pos and checks every
// value against the reference, the guard bands and pos.
func temperatureCase(rep *Report, s *spec.Spec, name string, pos []int32, heads int, r *rand.Rand, k RoPEKernels) {
	c := rep.begin(name)
	x := randomVector(r, len(pos)*heads*s.HeadDim)
	g := guard(x)
	pcopy := append([]int32(nil), pos...)
	if !c.call(func() { k.ScaleQ(g.s, pcopy, heads) }) {
		return
	}
	intsUnchanged(c, "pos", pcopy, pos)
	g.intact(c, "q")
	want := TemperatureApply(s, x, pos, heads)
	for i, w := range want {
		c.near("q", i, float64(g.s[i]), w, tempTol*math.Abs(w)+1e-45)
	}
	if len(want) == 0 {
		c.r.ratio(0, c.name)
	}
}
