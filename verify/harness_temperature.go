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
// mismatch that must panic before writing. Inputs are values of the
// storage type st, outputs checked with st.near; 16-bit storage also gets
// temperatureExactNarrowing.
func temperatureCases(rep *Report, s *spec.Spec, k RoPEKernels, st Storage) {
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
		temperatureCase(rep, s, st, fmt.Sprintf("ScaleQ tokens=%d heads=%d", n, heads), pos, heads, r, k)
	}
	// Every special position, one token each, in one call.
	pos := make([]int32, 0, len(special))
	for _, p := range special {
		if p >= math.MinInt32 && p <= math.MaxInt32 {
			pos = append(pos, int32(p))
		}
	}
	temperatureCase(rep, s, st, fmt.Sprintf("ScaleQ special positions %v heads=7", pos), pos, 7, r, k)
	temperatureCase(rep, s, st, "ScaleQ no tokens", nil, 3, r, k)

	if st != StorageF32 {
		temperatureExactNarrowing(rep, s, st, special, k)
	}
	g := guard(st.vector(r, 3*2*s.HeadDim-1))
	rep.expectPanic("ScaleQ with q one element short", func() { k.ScaleQ(g.s, []int32{0, 5, 9}, 2) }, g)
	g2 := guard(st.vector(r, 3*2*s.HeadDim))
	rep.expectPanic("ScaleQ with heads 0", func() { k.ScaleQ(g2.s, []int32{0, 5, 9}, 0) }, g2)
}

// temperatureCase runs ScaleQ on random values at pos and checks every
// value against the reference, the guard bands and pos.
func temperatureCase(rep *Report, s *spec.Spec, st Storage, name string, pos []int32, heads int, r *rand.Rand, k RoPEKernels) {
	c := rep.begin(name)
	x := st.vector(r, len(pos)*heads*s.HeadDim)
	g := guard(x)
	pcopy := append([]int32(nil), pos...)
	if !c.call(func() { k.ScaleQ(g.s, pcopy, heads) }) {
		return
	}
	intsUnchanged(c, "pos", pcopy, pos)
	g.intact(c, "q")
	want := TemperatureApply(s, x, pos, heads)
	for i, w := range want {
		st.near(c, "q", i, float64(g.s[i]), w, tempTol*math.Abs(w)+1e-45)
	}
	if len(want) == 0 {
		c.r.ratio(0, c.name)
	}
}

// temperatureExactNarrowing checks the 16-bit narrowing of ScaleQ bit for
// bit: the kernel's float32 result is float32(x·f) with f the factor
// rounded to float32 (the product of a 16-bit value and a float32 is exact
// in float64, so float32(x·f) is the one rounding of the float32 multiply),
// and every output must be its nearest-even rounding to st (a NaN any NaN).
// Each token holds every encoding of st (subnormals, ±0, ±Inf, NaN), so
// that round-to-nearest ties and the overflow to infinity occur. A position
// whose float64 factor lies within 2^−40 (relative) of a float32 midpoint
// is left out: there an evaluation of the factor that differs in the last
// float64 bit could round it the other way.
func temperatureExactNarrowing(rep *Report, s *spec.Spec, st Storage, special []int64, k RoPEKernels) {
	hd := s.HeadDim
	heads := (1<<16 + hd - 1) / hd
	var pos []int32
	var fs []float64
	for _, p := range special {
		if p < math.MinInt32 || p > math.MaxInt32 {
			continue
		}
		v := TemperatureScale(s.AttnTemperature, p)
		f := float64(float32(v))
		lo, hi := float64(math.Nextafter32(float32(f), float32(math.Inf(-1)))), float64(math.Nextafter32(float32(f), float32(math.Inf(1))))
		if math.Abs(v-(f+lo)/2) < 0x1p-40*v || math.Abs(v-(f+hi)/2) < 0x1p-40*v {
			continue
		}
		pos, fs = append(pos, int32(p)), append(fs, f)
	}
	c := rep.begin(fmt.Sprintf("ScaleQ of every %s encoding at %d positions: round to nearest even", st, len(pos)))
	row := heads * hd
	x := make([]float32, len(pos)*row)
	for i := range x {
		x[i] = float32(st.Value(uint16(i % row)))
	}
	g := guard(x)
	if !c.call(func() { k.ScaleQ(g.s, append([]int32(nil), pos...), heads) }) {
		return
	}
	g.intact(c, "q")
	for t, f := range fs {
		for j := range row {
			i := t*row + j
			y := float64(float32(float64(x[i]) * f))
			got, want := float64(g.s[i]), st.Round(y)
			if math.IsNaN(got) && math.IsNaN(want) {
				continue
			}
			if st.Bits(got) != st.Bits(want) || math.IsNaN(got) != math.IsNaN(want) {
				c.fail("q[%d] = %v (%#04x), want %v (%#04x): %v·%v (position %d) rounded", i, got, st.Bits(got), want, st.Bits(want), x[i], f, pos[t])
			}
		}
	}
	if c.fails == 0 {
		rep.ratio(0, c.name)
	}
}
