package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// cancelTokens are the token counts of the cancellation cases.
var cancelTokens = []int{1, 5, 33}

// cancelling returns x with x[t·d+i] = float32(−float32(pe_t[i]) + ε),
// ε uniform in ±2^−11: x + PE is then small, so the bound
// 2e-6·max(1, |x + PE|) is absolute, and an Add that rounds PE to float32
// before adding it (an error of up to half an ulp of PE, 3.8e-6 from
// |PE| ≥ 32) fails it wherever that rounding exceeds 2e-6.
func cancelling(r *rand.Rand, d int, pes [][]float64) []float32 {
	x := make([]float32, len(pes)*d)
	for t, pe := range pes {
		for i, v := range pe {
			x[t*d+i] = float32(-float64(float32(v)) + (r.Float64()-0.5)/1024)
		}
	}
	return x
}

// absCancelCases runs the cancellation cases of a formula encoding's Add
// (sinusoidal, algebraic, binary): x ≈ −PE(pos) at positions inside the
// table and at large and negative ones (the exact path).
func absCancelCases(rep *Report, r *rand.Rand, s *spec.Spec, add func(x []float32, pos []int32)) {
	ml := int64(s.MaxLen)
	const big = math.MaxInt32
	schemes := []posScheme{
		{"cancel pos<max_len", func(r *rand.Rand, n int) []int32 { return fill(r, n, []int64{ml - 1}, uniform(0, ml)) }},
		{"cancel pos large", func(r *rand.Rand, n int) []int32 {
			return fill(r, n, []int64{big, 1 << 20, ml, -big, -(1 << 20) - 3}, uniform(-big, big))
		}},
	}
	for _, sch := range schemes {
		for _, n := range cancelTokens {
			pos := sch.gen(r, n)
			pes := make([][]float64, n)
			for t, p := range pos {
				pes[t] = AbsoluteEncoding(s, int(p))
			}
			x := cancelling(r, s.DModel, pes)
			absCase(rep, fmt.Sprintf("Add tokens=%d %s", n, sch.name), x, pos, nil, func(xg *guarded, _ []float32, p []int32) {
				add(xg.s, p)
			}, func() []float64 { return AbsoluteAdd(s, x, pos) })
		}
	}
}

// tableCancelCase runs one learned or mixture Add with x ≈ −(the added
// value), α·PE_sin + (1−α)·table[pos] (learned: the table row), on the
// guarded table tg.
func tableCancelCase(rep *Report, r *rand.Rand, s *spec.Spec, tg *guarded, alpha float32, mixture bool,
	add func(x, table []float32, pos []int32, alpha float32)) {
	d, n := s.DModel, cancelTokens[len(cancelTokens)-1]
	table := tg.s
	pos := fill(r, n, []int64{int64(s.MaxLen) - 1, 0}, uniform(0, int64(s.MaxLen)))
	zero := make([]float32, n*d)
	var added []float64
	if mixture {
		added = MixtureAdd(s, zero, table, pos, alpha)
	} else {
		added = LearnedAdd(s, zero, table, pos)
	}
	pes := make([][]float64, n)
	for t := range pes {
		pes[t] = added[t*d : (t+1)*d]
	}
	x := cancelling(r, d, pes)
	name := fmt.Sprintf("Add tokens=%d cancel", n)
	if mixture {
		name += fmt.Sprintf(" alpha=%g", alpha)
	}
	absCase(rep, name, x, pos, tg, func(xg *guarded, tb []float32, p []int32) {
		add(xg.s, tb, p, alpha)
	}, func() []float64 {
		if mixture {
			return MixtureAdd(s, x, table, pos, alpha)
		}
		return LearnedAdd(s, x, table, pos)
	})
}
