package verify

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStorageEveryValue walks all 2^16 encodings of f16 and bf16: Value and
// Bits are inverse, every value rounds to itself, and between two
// consecutive finite values the midpoint rounds to the one with the even
// encoding while the floats next to it round to the nearer one.
func TestStorageEveryValue(t *testing.T) {
	for _, st := range []Storage{StorageF16, StorageBF16} {
		for b := range 1 << 16 {
			v := st.Value(uint16(b))
			if math.IsNaN(v) {
				continue
			}
			if got := st.Bits(v); got != uint16(b) {
				t.Fatalf("%s: Bits(Value(%#04x) = %v) = %#04x", st, b, v, got)
			}
			if r := st.Round(v); r != v || math.Signbit(r) != math.Signbit(v) {
				t.Fatalf("%s: Round(%v) = %v", st, v, r)
			}
			if b&0x7fff == 0x7fff || b == 0x7fff || b&0x8000 != 0 {
				continue
			}
			w := st.Value(uint16(b + 1)) // the next larger positive value
			if math.IsNaN(w) || math.IsInf(w, 0) || math.IsInf(v, 0) {
				continue
			}
			mid := (v + w) / 2
			even := v
			if b&1 == 1 {
				even = w
			}
			if r := st.Round(mid); r != even {
				t.Fatalf("%s: Round(midpoint %v of %v, %v) = %v, want %v", st, mid, v, w, r, even)
			}
			if r := st.Round(math.Nextafter(mid, 0)); r != v {
				t.Fatalf("%s: Round(just below %v) = %v, want %v", st, mid, r, v)
			}
			if r := st.Round(math.Nextafter(mid, 1e300)); r != w {
				t.Fatalf("%s: Round(just above %v) = %v, want %v", st, mid, r, w)
			}
			if u := st.ULP(v); u != w-v && v != 0 {
				t.Fatalf("%s: ULP(%v) = %v, want %v", st, v, u, w-v)
			}
		}
	}
}

// TestStorageAnchors checks values fixed by the formats' definitions.
func TestStorageAnchors(t *testing.T) {
	cases := []struct {
		st   Storage
		v    float64
		bits uint16
	}{
		{StorageF16, 1, 0x3c00},
		{StorageF16, 1 + 0x1p-10, 0x3c01},
		{StorageF16, 65504, 0x7bff},
		{StorageF16, 0x1p-14, 0x0400},
		{StorageF16, 0x1p-24, 0x0001},
		{StorageF16, -2, 0xc000},
		{StorageF16, 65519.99, 0x7bff},
		{StorageF16, 65520, 0x7c00},   // max + half an ulp: to infinity
		{StorageF16, 0x1p-25, 0x0000}, // half the least subnormal: tie to even zero
		{StorageF16, 0x1p-25 * 1.0001, 0x0001},
		{StorageBF16, 1, 0x3f80},
		{StorageBF16, 1 + 0x1p-7, 0x3f81},
		{StorageBF16, 1 + 0x1p-8, 0x3f80},          // tie to even
		{StorageBF16, 1 + 0x1p-7 + 0x1p-8, 0x3f82}, // tie to even, upwards
		{StorageBF16, math.MaxFloat32, 0x7f80},     // beyond the largest bf16 plus half an ulp
		{StorageBF16, 0x1p-133, 0x0001},
		{StorageBF16, -3.140625, 0xc049},
	}
	for _, c := range cases {
		if got := c.st.Bits(c.st.Round(c.v)); got != c.bits {
			t.Errorf("%s: %v rounds to bits %#04x, want %#04x", c.st, c.v, got, c.bits)
		}
	}
}

// TestStorageBF16Rule compares Round for bf16 with round to nearest even on
// the float32 bit pattern (add 0x7FFF plus the lowest kept bit, drop the
// low 16 bits) for random finite float32 values.
func TestStorageBF16Rule(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	for range 1 << 18 {
		u := r.Uint32()
		x := math.Float32frombits(u)
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			continue
		}
		want := uint16((u + 0x7fff + (u>>16)&1) >> 16)
		if got := StorageBF16.Bits(StorageBF16.Round(float64(x))); got != want {
			t.Fatalf("bf16 of %v (%#08x): %#04x, want %#04x", x, u, got, want)
		}
	}
}

// TestStorageFastPaths checks Round, ULP and Bits, which take their float64
// bits apart, against the same operations written from the definition
// (Frexp, Ldexp, RoundToEven) on random magnitudes across and beyond each
// type's range, ties and near-ties included.
func TestStorageFastPaths(t *testing.T) {
	ulpDef := func(st Storage, v float64) float64 {
		p, emin, emax := st.format()
		_, e := math.Frexp(math.Abs(v))
		e--
		if v == 0 || math.IsNaN(v) || e < emin {
			e = emin
		}
		if math.IsInf(v, 0) || e > emax {
			e = emax
		}
		return math.Ldexp(1, e-p+1)
	}
	bitsDef := func(v float64) uint16 { // f16 from the definition
		var sign uint16
		if math.Signbit(v) {
			sign = 0x8000
		}
		a := math.Abs(v)
		switch {
		case math.IsNaN(v):
			return 0x7e00
		case math.IsInf(a, 0):
			return sign | 0x7c00
		case a < 0x1p-14:
			return sign | uint16(a*0x1p24)
		}
		_, e := math.Frexp(a)
		e--
		return sign | uint16(e+15)<<10 | uint16((a/math.Ldexp(1, e)-1)*1024)
	}
	r := rand.New(rand.NewPCG(16, 16))
	for _, st := range []Storage{StorageF16, StorageBF16, StorageF32} {
		p, emin, emax := st.format()
		for i := range 400000 {
			e := emin - 30 + r.IntN(emax-emin+40)
			v := math.Ldexp(1+r.Float64(), e)
			switch i % 4 {
			case 1: // a tie: halfway between two values of the type
				v = math.Ldexp(float64(r.Int64N(1<<uint(p))|1<<uint(p-1))+0.5, e-p+1)
			case 2: // one float64 ulp off a tie
				v = math.Nextafter(math.Ldexp(float64(r.Int64N(1<<uint(p))|1<<uint(p-1))+0.5, e-p+1), math.Inf(2*r.IntN(2)-1))
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			if got, want := st.Round(v), st.roundDef(v); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%s: Round(%v) = %v, from the definition %v", st, v, got, want)
			}
			if got, want := st.ULP(v), ulpDef(st, v); got != want {
				t.Fatalf("%s: ULP(%v) = %v, from the definition %v", st, v, got, want)
			}
			if st == StorageF16 {
				if w := st.Round(v); st.Bits(w) != bitsDef(w) {
					t.Fatalf("f16: Bits(%v) = %#x, from the definition %#x", w, st.Bits(w), bitsDef(w))
				}
			}
		}
		for _, v := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, -math.MaxFloat64} {
			if got, want := st.ULP(v), ulpDef(st, v); got != want {
				t.Fatalf("%s: ULP(%v) = %v, from the definition %v", st, v, got, want)
			}
		}
	}
}
