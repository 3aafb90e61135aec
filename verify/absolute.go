package verify

import (
	"math"
	"math/bits"

	"github.com/posenc/posenc/spec"
)

// MixtureBase is the base of the sinusoidal half of the mixture encoding:
// the mixture's sinusoidal half is Vaswani et al.'s with their base 10000,
// whatever the spec's base (a mixture spec has none).
const MixtureBase = 10000

// SinusoidalEncoding returns the sinusoidal encoding of Vaswani et al.
// 2017 (§3.5) for position pos: PE(p, 2i) = sin(p/base^(2i/d)),
// PE(p, 2i+1) = cos(p/base^(2i/d)), d = dModel, computed in float64.
func SinusoidalEncoding(dModel int, base float64, pos int) []float64 {
	pe := make([]float64, dModel)
	for k := 0; k < dModel; k += 2 {
		s, c := math.Sincos(float64(pos) / math.Pow(base, float64(k)/float64(dModel)))
		pe[k] = s
		if k+1 < dModel {
			pe[k+1] = c
		}
	}
	return pe
}

// BinaryBits is the number of dims the binary encoding sets: min(d_model,
// bit length of max_len), the bits needed to write every position below
// max_len.
func BinaryBits(s *spec.Spec) int {
	return min(s.DModel, bits.Len(uint(s.MaxLen)))
}

// AbsoluteEncoding returns PE(pos), DModel values, for the encodings defined
// by a formula:
//   - sinusoidal: SinusoidalEncoding(DModel, Base, pos);
//   - algebraic: PE(p, i) = p / (max_len−1)^(i/(d−1)) (exponent 0
//     when d = 1);
//   - binary: PE(p, i) = bit i of p for i < BinaryBits(s), else 0;
//     a negative p contributes the bits of its two's-complement int32;
//   - mixture: its sinusoidal half, SinusoidalEncoding(DModel, MixtureBase, pos).
//
// It panics for other encodings (learned has no formula).
func AbsoluteEncoding(s *spec.Spec, pos int) []float64 {
	d := s.DModel
	switch s.Encoding {
	case spec.Sinusoidal:
		base := s.Base
		if base == 0 {
			base = 10000
		}
		return SinusoidalEncoding(d, base, pos)
	case spec.Mixture:
		return SinusoidalEncoding(d, MixtureBase, pos)
	case spec.Algebraic:
		pe := make([]float64, d)
		for i := range pe {
			e := 0.0
			if d > 1 {
				e = float64(i) / float64(d-1)
			}
			pe[i] = float64(pos) / math.Pow(float64(s.MaxLen-1), e)
		}
		return pe
	case spec.Binary:
		pe := make([]float64, d)
		u := uint32(int32(pos))
		for i := range BinaryBits(s) {
			pe[i] = float64((u >> i) & 1)
		}
		return pe
	}
	panic("verify: AbsoluteEncoding: no formula for encoding " + s.Encoding)
}

// AbsoluteAdd returns x ([token][DModel]) plus AbsoluteEncoding(s, pos[t])
// on every token t, in float64: the generated Add of sinusoidal, algebraic
// and binary packages.
func AbsoluteAdd(s *spec.Spec, x []float32, pos []int32) []float64 {
	d := s.DModel
	if len(x) != len(pos)*d {
		panic("verify: AbsoluteAdd: len(x) does not match tokens·DModel")
	}
	y := make([]float64, len(x))
	for t, p := range pos {
		pe := AbsoluteEncoding(s, int(p))
		for i := range d {
			y[t*d+i] = float64(x[t*d+i]) + pe[i]
		}
	}
	return y
}

// LearnedAdd returns x[t] + table[pos[t]] for every token t, in float64
// (table is [rows][DModel]): the generated Add of a learned package.
func LearnedAdd(s *spec.Spec, x, table []float32, pos []int32) []float64 {
	return tableAdd(s, x, table, pos, 0, false)
}

// MixtureAdd returns x[t] + α·PE_sin(pos[t]) + (1−α)·table[pos[t]] for every
// token t, in float64, where PE_sin is SinusoidalEncoding(DModel,
// MixtureBase, ·) and table is [rows][DModel]:
// PE_mixture = α·PE_absolute + (1−α)·PE_learned, with the learned
// embedding indexed by absolute position, as the generated mixture Add
// defines it.
func MixtureAdd(s *spec.Spec, x, table []float32, pos []int32, alpha float32) []float64 {
	return tableAdd(s, x, table, pos, alpha, true)
}

// tableAdd adds table rows to x, mixed with the sinusoidal encoding when
// withPE (mixture) or with weight 1 (learned).
func tableAdd(s *spec.Spec, x, table []float32, pos []int32, alpha float32, withPE bool) []float64 {
	d := s.DModel
	if len(x) != len(pos)*d {
		panic("verify: len(x) does not match tokens·DModel")
	}
	a := float64(alpha)
	y := make([]float64, len(x))
	for t, p := range pos {
		if p < 0 || (int(p)+1)*d > len(table) {
			panic("verify: position outside the table")
		}
		row := table[int(p)*d : (int(p)+1)*d]
		var pe []float64
		if withPE {
			pe = SinusoidalEncoding(d, MixtureBase, int(p))
		}
		for i := range d {
			v := float64(x[t*d+i])
			if withPE {
				v += a*pe[i] + (1-a)*float64(row[i])
			} else {
				v += float64(row[i])
			}
			y[t*d+i] = v
		}
	}
	return y
}
