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
