package verify

import "math"

// The 16-bit storage types of a spec's dtype (f16, bf16), written here from
// their definitions and sharing nothing with the generator:
//
//   - f16 is IEEE 754-2008 binary16: 1 sign bit, 5 exponent bits (bias 15),
//     10 fraction bits; 11 significant bits, normal magnitudes
//     [2^−14, 65504], subnormals spaced 2^−24.
//   - bf16 (bfloat16) is the upper half of an IEEE binary32: 1 sign bit, 8
//     exponent bits (bias 127), 7 fraction bits; 8 significant bits, the
//     exponent range of float32 (normal from 2^−126, subnormals spaced
//     2^−133).
//
// Both round to nearest, ties to even (IEEE 754's default rounding; for
// bf16 the round_to_nearest_even rule of e.g. PyTorch's c10::BFloat16). A
// value at or beyond the largest finite magnitude plus half an ulp becomes
// an infinity.

// Storage is the element type a kernel stores: "f32", "f16" or "bf16" (a
// spec's dtype).
type Storage string

// The storage types.
const (
	StorageF32  Storage = "f32"
	StorageF16  Storage = "f16"
	StorageBF16 Storage = "bf16"
)

// format returns the significant bits p (the implicit one included), the
// smallest normal exponent emin (2^emin is the least normal magnitude) and
// the largest exponent emax of the storage type.
func (st Storage) format() (p, emin, emax int) {
	switch st {
	case StorageF16:
		return 11, -14, 15
	case StorageBF16:
		return 8, -126, 127
	}
	return 24, -126, 127
}

// Round returns v rounded to the nearest value of the storage type, ties to
// even, as a float64: ±Inf when |v| reaches the largest finite value plus
// half an ulp, NaN for NaN, the sign of v kept on a zero result.
func (st Storage) Round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	p, emin, emax := st.format()
	b := math.Float64bits(v)
	if e := int(b>>52&0x7ff) - 1023; e >= emin && e < emax {
		// A normal magnitude below the top binade: round the 53-bit float64
		// significand to p bits on the bits, ties to even (a carry out of the
		// significand steps into the next binade, which is still finite). The
		// harness rounds millions of values; roundDef below is the same
		// rounding from the definition, which the other cases take.
		drop := uint(53 - p)
		r := b + (uint64(1)<<(drop-1) - 1) + (b>>drop)&1
		return math.Float64frombits(r &^ (uint64(1)<<drop - 1))
	}
	return st.roundDef(v)
}

// roundDef is Round from the definition: v/ulp rounded to an integer, ties
// to even, times the ulp, ±Inf beyond the largest finite value; for any
// finite nonzero v.
func (st Storage) roundDef(v float64) float64 {
	p, _, emax := st.format()
	q := st.ULP(v)
	r := math.RoundToEven(v/q) * q // v/q and the product are exact powers-of-two scalings
	if max := math.Ldexp(2-math.Ldexp(1, 1-p), emax); math.Abs(r) > max {
		return math.Copysign(math.Inf(1), v)
	}
	if r == 0 {
		return math.Copysign(0, v)
	}
	return r
}

// ULP returns the spacing of the storage type's values at the magnitude of
// v: 2^(e−p+1) for |v| in [2^e, 2^(e+1)) with e ≥ emin, the subnormal
// spacing 2^(emin−p+1) below 2^emin, and the spacing of the top binade
// beyond the largest finite value.
func (st Storage) ULP(v float64) float64 {
	p, emin, emax := st.format()
	// The binade of |v| from its float64 exponent field: −1023 for 0 and the
	// float64 subnormals (all below every type's emin), 1024 for Inf and NaN.
	e := int(math.Float64bits(v)>>52&0x7ff) - 1023
	switch {
	case v != v, e < emin: // NaN, zero and magnitudes below the normal range
		e = emin
	case e > emax: // Inf and beyond the largest finite value
		e = emax
	}
	return math.Float64frombits(uint64(e-p+1+1023) << 52) // 2^(e−p+1), a normal float64
}

// Bits returns the storage encoding of v, which must already be a value of
// the type (Round's result): the 16 bits of an f16 or bf16. NaN becomes the
// quiet NaN 0x7E00 (f16) or 0x7FC0 (bf16).
func (st Storage) Bits(v float64) uint16 {
	if st == StorageBF16 {
		if math.IsNaN(v) {
			return 0x7fc0
		}
		return uint16(math.Float32bits(float32(v)) >> 16) // bf16 values are float32 values
	}
	var sign uint16
	if math.Signbit(v) {
		sign = 0x8000
	}
	if e := int(math.Float64bits(v)>>52&0x7ff) - 1023; e >= -14 && e <= 15 {
		// A normal f16 value: the exponent field and the top 10 fraction bits.
		return sign | uint16(e+15)<<10 | uint16(math.Float64bits(v)>>42&0x3ff)
	}
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return 0x7e00
	case math.IsInf(a, 0):
		return sign | 0x7c00
	case a < 0x1p-14: // subnormal (or zero): a = f·2^−24, f < 1024
		return sign | uint16(a*0x1p24)
	}
	_, e := math.Frexp(a)
	e-- // a in [2^e, 2^(e+1))
	frac := uint16((a/math.Ldexp(1, e) - 1) * 1024)
	return sign | uint16(e+15)<<10 | frac
}

// Value returns the value the 16 storage bits b encode (f16 or bf16).
func (st Storage) Value(b uint16) float64 {
	if st == StorageBF16 {
		return float64(math.Float32frombits(uint32(b) << 16))
	}
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(b>>10&0x1f), float64(b&0x3ff)
	switch exp {
	case 0:
		return sign * frac * 0x1p-24
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	// A normal f16: 2^(exp−15), a normal float64, built from its bits.
	return sign * (1 + frac/1024) * math.Float64frombits(uint64(exp-15+1023)<<52)
}
