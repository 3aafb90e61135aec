package cuda

import "testing"

// TestAttnDecode checks which attention forms get the decode kernel: the
// plain terms with rows of whole 128-bit pieces whose shared memory fits.
func TestAttnDecode(t *testing.T) {
	for _, c := range []struct {
		family string
		hd     int
		dtype  string
		want   bool
	}{
		{"rope", 128, "f32", true}, {"rope", 128, "bf16", true}, {"alibi", 24, "f32", true}, {"rpe_bias", 64, "f32", true},
		{"rope", 256, "f16", true}, {"rope", 96, "f32", true},
		{"rpe_bias", 13, "f32", false},                           // not whole 128-bit pieces
		{"rope", 12, "bf16", false},                              // 12 is not a multiple of 8 bf16
		{"rpe_full", 64, "f32", false}, {"xl", 64, "f32", false}, // per-row work and aV: the main kernel only
		{"rope", 1024, "f32", false}, // shared memory
	} {
		if got := attnDecode(c.family, c.hd, c.dtype); got != c.want {
			t.Errorf("attnDecode(%s, %d, %s) = %v, want %v", c.family, c.hd, c.dtype, got, c.want)
		}
	}
}

// TestAttnMMA checks which attention forms get the tensor-core kernel:
// bf16 storage, a plain term, head dims that are multiples of 16 up to 128.
func TestAttnMMA(t *testing.T) {
	for _, c := range []struct {
		family string
		hd     int
		dtype  string
		want   bool
	}{
		{"rope", 128, "bf16", true}, {"alibi", 16, "bf16", true}, {"rpe_bias", 64, "bf16", true}, {"rope", 96, "bf16", true},
		{"rope", 128, "f32", false}, {"rope", 128, "f16", false}, // f32: FMA; f16: p's range
		{"rope", 136, "bf16", false}, {"rope", 256, "bf16", false}, // tiles past 42 KiB
		{"alibi", 24, "bf16", false},                               // not a multiple of the mma's k
		{"rpe_full", 64, "bf16", false}, {"xl", 64, "bf16", false}, // their terms are not plain
	} {
		if got := attnMMA(c.family, c.hd, c.dtype); got != c.want {
			t.Errorf("attnMMA(%s, %d, %s) = %v, want %v", c.family, c.hd, c.dtype, got, c.want)
		}
	}
}
