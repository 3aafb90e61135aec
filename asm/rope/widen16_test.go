package rope

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// widen16Kernels are the kernels of a 16-bit rope package with the
// attention form: the stand-in kernels struct of the widenRow tests.
var widen16Kernels = []abi.Kernel{abi.Rotate16, abi.FarRows, abi.ScoresKV, abi.ValuesKV, abi.MaxRow, abi.ExpShift, abi.Widen16, abi.ScoresKV16, abi.ValuesKV16, abi.PairOrder16}

// TestWiden16AMD64 runs TestWidenRow (widen16Body) natively on the AVX2 and
// AVX-512 widenRow (widen16.go) over f16 and bf16.
func TestWiden16AMD64(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		pkg := "widen16" + st
		p := shape(8, 8, false)
		p.Storage, p.AttentionHeadDim = st, 8
		files, err := AMD64(pkg, "test/"+pkg+".yaml", true, true, p)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, widen16Case(pkg, st, files, asmtest.NativeVariants(pkg, widen16Kernels...)))
	}
	checkWiden16Coverage(t, asmtest.RunNativeAMD64(t, cs), 2*2)
}

// TestWiden16QEMU runs TestWidenRow on the NEON widenRow under
// qemu-aarch64-static.
func TestWiden16QEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		pkg := "widen16" + st
		p := shape(8, 8, false)
		p.Storage, p.AttentionHeadDim = st, 8
		files, err := NEON(pkg, "test/"+pkg+".yaml", p)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, widen16Case(pkg, st, files, asmtest.QEMUVariants(pkg, widen16Kernels...)))
	}
	checkWiden16Coverage(t, asmtest.RunQEMU(t, cs), 2)
}

// checkWiden16Coverage fails unless out has want coverage lines (one per
// storage type and variant).
func checkWiden16Coverage(t *testing.T, out string, want int) {
	t.Helper()
	ms := regexp.MustCompile(`widen coverage: \w+ \w+: \d+ lengths, \d+ values`).FindAllString(out, -1)
	if len(ms) != want {
		t.Fatalf("want %d coverage lines (storage type × variant), got %d in\n%s", want, len(ms), out)
	}
	for _, m := range ms {
		t.Log(m)
	}
}

// widen16Case is the test package of the widenRow kernel in files (storage
// st) with the stand-in variants.
func widen16Case(pkg, st string, files []emit.File, variants string) asmtest.QEMUCase {
	return asmtest.QEMUCase{Package: pkg, Files: files, Variants: variants,
		Test:  fmt.Sprintf(rope16TestHeader, pkg, 8, 8, false, st) + rope16Helpers + widen16Body,
		Extra: fmt.Sprintf(scale16Extra, pkg, 0)}
}

// widen16Body is TestWidenRow (no format verbs): every 16-bit encoding
// once (NaNs, infinities, subnormals, both zeros), then random encodings in
// rows of every length 0..70 and some longer ones, against the exact
// float32 of each encoding — for f16 NaNs the generic widen's bits: sign,
// all-ones exponent, the 10 payload bits on top of the mantissa, or those
// bits with the quiet bit set — bit for bit; dst past len(src) and the guards stay untouched.
const widen16Body = `
func wantBits(h uint16) uint32 {
	if storage == "bf16" {
		return uint32(h) << 16
	}
	if h&0x7c00 == 0x7c00 {
		return uint32(h&0x8000)<<16 | 0x7f800000 | uint32(h&0x3ff)<<13
	}
	return math.Float32bits(float32(value(h)))
}

func TestWidenRow(t *testing.T) {
	for _, name := range variantNames() {
		t.Run(name, func(t *testing.T) { testWidenRow(t, name, registered[name].widenRow) })
	}
}

func testWidenRow(t *testing.T, name string, widen func(dst []float32, src []uint16)) {
	rng := rand.New(rand.NewPCG(11, uint64(len(storage))))
	lengths := []int{1 << 16}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 127, 128, 129, 255, 257, 1000)
	values := 0
	for _, n := range lengths {
		src, sbuf := guarded16(n)
		for i := range src {
			if n == 1<<16 {
				src[i] = uint16(i)
			} else {
				src[i] = draw(rng)
			}
		}
		const extra, guard = 3, 19
		buf := make([]float32, n+extra+2*guard)
		for i := range buf {
			buf[i] = math.Float32frombits(0x7fa5a5a5)
		}
		dst := buf[guard : guard+n+extra : guard+n+extra]
		s0 := append([]uint16(nil), src...)
		widen(dst, src)
		checkGuards16(t, "src", sbuf)
		for i := range src {
			if src[i] != s0[i] {
				t.Fatalf("%s n=%d: src[%d] changed", name, n, i)
			}
		}
		for i, v := range buf {
			if (i < guard || i >= guard+n) && math.Float32bits(v) != 0x7fa5a5a5 {
				t.Fatalf("%s n=%d: float %d outside dst[:len(src)] written", name, n, i-guard)
			}
		}
		for i, h := range src {
			// A signaling f16 NaN comes out quiet from the conversion instructions
			// (VCVTPH2PS, FCVTL), with its sign and payload: either form is a NaN.
			if got, want := math.Float32bits(dst[i]), wantBits(h); got != want && !(value(h) != value(h) && got == want|0x400000) {
				t.Fatalf("%s n=%d: widen(%#04x) = %#08x, want %#08x", name, n, h, got, want)
			}
			values++
		}
	}
	t.Logf("widen coverage: %s %s: %d lengths, %d values", storage, name, len(lengths), values)
}
`
