package rope

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// TestScaleRows16QEMU runs the NEON scaleRows over 16-bit storage
// (abi.ScaleRows16, neon_scalerows16.go) for f16 and bf16 under
// qemu-aarch64-static against a reference written in the test: the value
// decoded in float64, the product with the factor exact in float64 and
// rounded once to float32, then the nearest 16-bit value, ties to even
// (rope16Helpers). NaN results must have the bits of the generic kernel's
// narrow on arm64: the NaN operand made quiet (the value when both are
// NaN, either one accepted; the default NaN 0x7FC00000 for 0·∞), its sign
// and top payload bits kept. Row lengths cover every loop of the kernel
// (16-, 4- and 1-value steps) and their tails; factors include ±0,
// negatives, infinities, NaNs with payload in the low half, factors that
// overflow finite products in the narrowing and give subnormal results.
func TestScaleRows16QEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		pkg := "scale16" + st
		p := shape(8, 8, false)
		p.Storage, p.ScaleRows = st, true
		files, err := NEON(pkg, "test/"+pkg+".yaml", p)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, scale16Case(pkg, st, files, asmtest.QEMUVariants(pkg, abi.Rotate16, abi.FarRows, abi.ScaleRows16), 0x7fc00000))
	}
	checkScale16Coverage(t, asmtest.RunQEMU(t, cs), 2)
}

// checkScale16Coverage fails unless out has want coverage lines of
// TestScaleRows16 (one per storage type and variant) and each counted
// every kind of input.
func checkScale16Coverage(t *testing.T, out string, want int) {
	t.Helper()
	re := regexp.MustCompile(`scale coverage: (\w+ \w+): (\d+) ties, (\d+) finite overflows, (\d+) subnormal results, (\d+) NaN values, (\d+) NaN factors, (\d+) NaN factors with low payload, (\d+) zero times infinity`)
	ms := re.FindAllStringSubmatch(out, -1)
	if len(ms) != want {
		t.Fatalf("want %d coverage lines (storage type × variant), got %d in\n%s", want, len(ms), out)
	}
	for _, m := range ms {
		t.Log(m[0])
		for i := 2; i < len(m); i++ {
			if n, _ := strconv.Atoi(m[i]); n == 0 {
				t.Errorf("%s: the inputs missed a case: %s", m[1], m[0])
			}
		}
	}
}

// scale16Case is the test package of the scaleRows16 kernels in files
// (storage st), with the variants stand-in variants: TestScaleRows16 runs
// every registered variant, a NaN result of 0·∞ being defaultNaN (the
// architecture's default NaN, 0x7FC00000 on arm64, 0xFFC00000 on x86).
func scale16Case(pkg, st string, files []emit.File, variants string, defaultNaN uint32) asmtest.QEMUCase {
	return asmtest.QEMUCase{Package: pkg, Files: files, Variants: variants,
		Test:  fmt.Sprintf(rope16TestHeader, pkg, 8, 8, false, st) + rope16Helpers + scale16TestBody,
		Extra: fmt.Sprintf(scale16Extra, pkg, defaultNaN)}
}

// scale16Extra holds the architecture's default NaN and the sorted variant
// names (package name, default NaN bits).
const scale16Extra = `package %s

import "sort"

const defaultNaN = %#x

// variantNames lists the registered variants, sorted.
func variantNames() []string {
	names := make([]string, 0, len(registered))
	for name := range registered {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
`

// scale16TestBody is TestScaleRows16 (no format verbs).
const scale16TestBody = `
// bits32 returns the float32 bits the 16-bit element h widens to (the
// generic kernel's widen: a binary16 NaN keeps its payload, signaling or
// not).
func bits32(h uint16) uint32 {
	if storage == "bf16" {
		return uint32(h) << 16
	}
	if h&0x7c00 == 0x7c00 {
		return uint32(h&0x8000)<<16 | 0x7f800000 | uint32(h&0x3ff)<<13
	}
	return math.Float32bits(float32(value(h)))
}

// narrowNaN is the generic narrow of a float32 NaN with bits b: quiet, sign
// and top payload bits kept.
func narrowNaN(b uint32) uint16 {
	if storage == "bf16" {
		return uint16(b>>16) | 0x40
	}
	return uint16(b>>16)&0x8000 | 0x7e00 | uint16(b>>13)&0x1ff
}

func TestScaleRows16(t *testing.T) {
	for _, name := range variantNames() {
		t.Run(name, func(t *testing.T) { testScaleRows16(t, name, registered[name].scaleRows) })
	}
}

func testScaleRows16(t *testing.T, name string, scale func(x []uint16, scales []float32, rowLen int)) {
	rng := rand.New(rand.NewPCG(5, uint64(len(storage))))
	nanBits := []uint32{0x7fc00000, 0x7fc1ffff, 0x7fffffff, 0xffff8000, 0x7f800001, 0xffa00000, 0x7fc08000, 0x7fc18000}
	pool := []float32{1, -1, 0, float32(math.Copysign(0, -1)), 0.5, 1.5, -3, 1 + 0x1p-8, 1 + 0x1p-10, 0x1p20, -0x1p20, 0x1p100,
		0x1p-12, 0x1p-126, 0x1p-140, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, b := range nanBits {
		pool = append(pool, math.Float32frombits(b))
	}
	var ties, overflows, subnormals, nanValues, nanFactors, nanLow, zeroInf int
	for _, rowLen := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 130} {
		for _, tokens := range []int{0, 1, 2, 5, 9} {
			scales := make([]float32, tokens)
			for i := range scales {
				if rng.IntN(10) < 7 {
					scales[i] = pool[rng.IntN(len(pool))]
				} else {
					scales[i] = float32(0.25 + 3*rng.Float64())
				}
			}
			const extra = 5 // len(x) may exceed len(scales)·rowLen; the rest is not touched
			x, buf := guarded16(tokens*rowLen + extra)
			for i := range x {
				x[i] = draw(rng)
			}
			x0 := append([]uint16(nil), x...)
			s0 := append([]float32(nil), scales...)
			scale(x, scales, rowLen)
			checkGuards16(t, "x", buf)
			for i := range scales {
				if math.Float32bits(scales[i]) != math.Float32bits(s0[i]) {
					t.Fatalf("rowLen %d tokens %d: scales[%d] changed", rowLen, tokens, i)
				}
			}
			for i := tokens * rowLen; i < len(x); i++ {
				if x[i] != x0[i] {
					t.Fatalf("rowLen %d tokens %d: x[%d] past the rows written", rowLen, tokens, i)
				}
			}
			for tk := 0; tk < tokens; tk++ {
				s := scales[tk]
				sb := math.Float32bits(s)
				for j := 0; j < rowLen; j++ {
					i := tk*rowLen + j
					in, got := x0[i], x[i]
					xv := value(in)
					fail := func(format string, args ...any) {
						t.Fatalf("rowLen %d tokens %d t %d j %d: %#04x · %g (%#08x): got %#04x (%g), want "+format,
							append([]any{rowLen, tokens, tk, j, in, s, sb, got, value(got)}, args...)...)
					}
					xNaN, sNaN := math.IsNaN(xv), s != s
					if xNaN || sNaN || math.IsInf(xv, 0) && s == 0 || xv == 0 && math.IsInf(float64(s), 0) {
						// A NaN result: the quiet NaN operand (FMUL's rules).
						var want []uint16
						switch {
						case xNaN && sNaN:
							want = []uint16{narrowNaN(bits32(in) | 0x400000), narrowNaN(sb | 0x400000)}
						case xNaN:
							nanValues++
							want = []uint16{narrowNaN(bits32(in) | 0x400000)}
						case sNaN:
							nanFactors++
							if sb&0xffff != 0 {
								nanLow++
							}
							want = []uint16{narrowNaN(sb | 0x400000)}
						default:
							zeroInf++
							want = []uint16{narrowNaN(defaultNaN)}
						}
						if got != want[0] && (len(want) == 1 || got != want[1]) {
							fail("the NaN %#04x", want)
						}
						continue
					}
					p := float32(xv * float64(s)) // exact in float64, rounded once
					want, tie := nearest(p)
					if tie {
						ties++
					}
					if math.IsInf(want, 0) && !math.IsInf(float64(p), 0) {
						overflows++
					}
					if want != 0 && math.Abs(want) < math.Ldexp(1, emin) {
						subnormals++
					}
					if g := value(got); g != want || math.Signbit(g) != math.Signbit(want) {
						fail("%g from float32 %g", want, p)
					}
				}
			}
		}
	}
	t.Logf("scale coverage: %s %s: %d ties, %d finite overflows, %d subnormal results, %d NaN values, %d NaN factors, %d NaN factors with low payload, %d zero times infinity",
		name, storage, ties, overflows, subnormals, nanValues, nanFactors, nanLow, zeroInf)
}
`
