package rope

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
)

// qemu16Shapes are the head shapes TestKernels16QEMU runs for f16 and
// bf16: every step kind (4-vector blocks, 1..3 vectors, two pairs, one
// pair) in both layouts, resident and streamed rows, the block loop, and
// copies of dims RotaryDim..HeadDim of 4, 8, 12, 16, 32, 68, 96 and 192
// bytes (every copy width of copyBytes).
var qemu16Shapes = []struct {
	h, r        int
	interleaved bool
}{
	{128, 128, false}, {128, 128, true}, {80, 78, false}, {72, 38, true},
	{6, 6, true}, {6, 4, false}, {10, 2, false}, {200, 196, false},
	{256, 160, true}, {32, 30, true}, {40, 34, false}, {64, 48, true},
	{64, 16, false}, {34, 32, true},
}

// TestKernels16QEMU runs the NEON rotate over 16-bit storage (abi.Rotate16)
// of every qemu16Shapes shape, f16 and bf16, under qemu-aarch64-static
// against a reference written in the test: values decoded in float64, the
// rotation the float32 kernel performs (a float32 product, then one fused
// multiply-add, rounded once) computed exactly, and the nearest 16-bit
// value, ties to even, found by float64 arithmetic. Outputs must equal it
// bit for bit (a NaN must be a NaN).
func TestKernels16QEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		for _, s := range qemu16Shapes {
			layout := "half"
			if s.interleaved {
				layout = "interleaved"
			}
			pkg := fmt.Sprintf("rope%s%s%d_%d", st, layout[:4], s.h, s.r)
			p := shape(s.h, s.r, s.interleaved)
			p.Storage = st
			files, err := NEON(pkg, "test/"+pkg+".yaml", p)
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			cs = append(cs, asmtest.QEMUCase{Package: pkg, Files: files,
				Variants: asmtest.QEMUVariants(pkg, abi.Rotate16, abi.FarRows),
				Test:     fmt.Sprintf(rope16TestHeader, pkg, s.h, s.r, s.interleaved, st) + rope16TestBody})
		}
	}
	out := asmtest.RunQEMU(t, cs)
	// The inputs must reach every case of the narrowing for each storage
	// type: exact ties, finite float32 results that overflow to an
	// infinity, subnormal results and NaNs.
	sums := map[string]*[4]int{"f16": {}, "bf16": {}}
	re := regexp.MustCompile(`coverage: (\w+) \S+ interleaved=\w+: (\d+) ties, (\d+) finite overflows, (\d+) subnormal results, (\d+) NaNs`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		for i := range 4 {
			n, _ := strconv.Atoi(m[2+i])
			sums[m[1]][i] += n
		}
	}
	for st, c := range sums {
		t.Logf("%s over %d shapes: %d ties, %d finite overflows, %d subnormal results, %d NaNs", st, len(qemu16Shapes), c[0], c[1], c[2], c[3])
		if c[0] == 0 || c[1] == 0 || c[2] == 0 || c[3] == 0 {
			t.Errorf("%s: the inputs missed a case of the narrowing", st)
		}
	}
}

const rope16TestHeader = `package %s

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

const headDim, rotaryDim, interleaved, storage = %d, %d, %v, %q
`

// rope16TestBody is the rest of the test file (no format verbs): the
// helpers shared with the scaleRows test (qemu_scalerows16_test.go), then
// TestRotate16.
const rope16TestBody = rope16Helpers + rope16RotateTest

// rope16Helpers decode, round and draw 16-bit values (no format verbs).
const rope16Helpers = `
func rowLen() int {
	if interleaved {
		return 2 * rotaryDim
	}
	return rotaryDim
}

// The storage format: significand bits below the leading one, the
// exponent of the smallest normal, the largest finite value.
var mant, emin, maxFinite = func() (int, int, float64) {
	if storage == "f16" {
		return 10, -14, 65504
	}
	return 7, -126, math.Ldexp(255, 120)
}()
` + asmtest.Value16 + `

// fma32 returns p + u·v rounded once to float32 (FMLA; FMLS is fma32(p,
// −u, v)). u·v is exact in float64; the sum is computed in float64 when
// that is exact (TwoSum), else in big.Float.
func fma32(p, u, v float32) float32 {
	prod := float64(u) * float64(v)
	pf := float64(p)
	sum := pf + prod
	if math.IsInf(sum, 0) || math.IsNaN(sum) {
		return float32(sum)
	}
	bv := sum - pf
	if (pf-(sum-bv))+(prod-bv) == 0 {
		return float32(sum)
	}
	z := new(big.Float).SetPrec(1000).SetFloat64(pf)
	z.Add(z, new(big.Float).SetPrec(1000).SetFloat64(prod))
	f, _ := z.Float32()
	return f
}

// nearest returns the 16-bit value nearest to v, ties to even (an infinity
// past the largest finite value and half an ulp), and whether v was a tie.
func nearest(v float32) (float64, bool) {
	f := float64(v)
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return f, false
	}
	_, e := math.Frexp(f)
	q := math.Ldexp(1, max(e-1, emin)-mant) // the ulp at |f|
	n := f / q
	r := math.RoundToEven(n) * q
	tie := math.Abs(n-math.Trunc(n)) == 0.5
	if math.Abs(r) > maxFinite {
		return math.Copysign(math.Inf(1), f), tie
	}
	return math.Copysign(r, f), tie
}

// draw returns a random 16-bit encoding: mostly moderate normal values,
// some of any normal exponent, subnormals, zeros, values near the largest
// finite one, infinities and NaNs.
func draw(rng *rand.Rand) uint16 {
	sign := uint16(rng.IntN(2)) << 15
	ebits, fbits := 5, 10
	if storage == "bf16" {
		ebits, fbits = 8, 7
	}
	emax := 1<<ebits - 1
	bias := 1<<(ebits-1) - 1
	frac := uint16(rng.IntN(1 << fbits))
	var e int
	switch k := rng.IntN(100); {
	case k < 55:
		e = bias - 5 + rng.IntN(11)
	case k < 72:
		e = 1 + rng.IntN(emax-1)
	case k < 82:
		e = 0 // subnormal (or zero)
	case k < 84:
		e, frac = 0, 0
	case k < 95:
		e = emax - 1 // near the largest finite value, a quarter of them it
		if rng.IntN(4) == 0 {
			frac = 1<<fbits - 1
		}
	case k < 97:
		e, frac = emax, 0
	default:
		e = emax
		if frac == 0 {
			frac = 1
		}
	}
	return sign | uint16(e)<<fbits | frac
}

const guard16 = 9
const sentinel16 = 0x7e5a

func guarded16(n int) (inner, buf []uint16) {
	buf = make([]uint16, n+2*guard16)
	for i := range buf {
		buf[i] = sentinel16
	}
	return buf[guard16 : guard16+n : guard16+n], buf
}

func checkGuards16(t *testing.T, what string, buf []uint16) {
	t.Helper()
	n := len(buf) - 2*guard16
	for i := 0; i < guard16; i++ {
		if buf[i] != sentinel16 || buf[guard16+n+i] != sentinel16 {
			t.Fatalf("%s: guard element overwritten", what)
		}
	}
}
`

// rope16RotateTest is TestRotate16 (no format verbs).
const rope16RotateTest = `
func TestRotate16(t *testing.T) {
	rot := registered["neon"].rotate
	rng := rand.New(rand.NewPCG(3, uint64(headDim*1000+rotaryDim)))
	const rows = 12
	n := rotaryDim / 2
	table := make([]float32, rows*rowLen())
	for r := 0; r < rows; r++ {
		row := table[r*rowLen() : (r+1)*rowLen()]
		for i := 0; i < n; i++ {
			var c, s float32
			switch r {
			case 0: // identity
				c, s = 1, 0
			case 1: // swap
				c, s = 0, 1
			case 2, 3: // x ± 2^−k·x': exact float32 sums, ties of the narrowing
				c, s = 1, float32(math.Ldexp(1, -1-rng.IntN(14)))
			case 4:
				c, s = 1.5, float32(math.Ldexp(3, -2-rng.IntN(12)))
			case 5: // small: subnormal results
				c, s = float32(math.Ldexp(1, -12)), float32(math.Ldexp(-1, -13))
			case 6: // the largest finite values overflow in the narrowing only
				c, s = 1+0x1p-8, 0
			default:
				ang, a := rng.Float64()*2*math.Pi, 0.5+rng.Float64()
				c, s = float32(a*math.Cos(ang)), float32(a*math.Sin(ang))
			}
			if interleaved {
				row[2*i], row[2*i+1], row[rotaryDim+2*i], row[rotaryDim+2*i+1] = c, c, s, s
			} else {
				row[i], row[n+i] = c, s
			}
		}
	}
	tableCopy := append([]float32(nil), table...)
	var ties, overflows, subnormals, nans int
	for _, tokens := range []int{0, 1, 3, 17, 33} {
		for _, hh := range [][2]int{{1, 0}, {3, 2}, {0, 2}, {2, 5}} {
			for _, sign := range []float32{1, -1} {
				for mode := 0; mode < 3; mode++ {
					// 0: in place, contiguous; 1: from a source to a
					// separate destination, heads HeadDim+3 elements apart
					// and tokens 5 more than their heads apart; 2: in
					// place with those strides.
					strided, separate := mode > 0, mode == 1
					if separate && sign < 0 {
						continue // the inverse is only called in place (abi.Rotate)
					}
					// k is rotated in place only, and the inverse has no k
					// (abi.Rotate).
					hh := hh
					if sign < 0 {
						hh[1] = 0
					}
					lay := func(heads int) (ts, hs int) {
						if !strided {
							return heads * headDim, headDim
						}
						return heads*(headDim+3) + 5, headDim + 3
					}
					qts, qhs := lay(hh[0])
					kts, khs := lay(hh[1])
					idx := make([]int32, tokens)
					for i := range idx {
						idx[i] = int32(rng.IntN(rows))
					}
					q, qbuf := guarded16(tokens * qts)
					k, kbuf := guarded16(tokens * kts)
					for _, x := range [][]uint16{q, k} {
						for i := range x {
							x[i] = draw(rng)
						}
					}
					q0, k0 := append([]uint16(nil), q...), append([]uint16(nil), k...)
					qd, qdbuf, kd, kdbuf := q, qbuf, k, kbuf
					if separate {
						qd, qdbuf = guarded16(len(q))
						for _, x := range [][]uint16{qd} {
							for i := range x {
								x[i] = uint16(rng.Uint32())
							}
						}
					}
					qd0, kd0 := append([]uint16(nil), qd...), append([]uint16(nil), kd...)
					rot(qd, q, hh[0], qts, qhs, kd, k, hh[1], kts, khs, table, idx, sign)
					for _, g := range []struct {
						what string
						buf  []uint16
					}{{"q", qbuf}, {"k", kbuf}, {"q dst", qdbuf}, {"k dst", kdbuf}} {
						checkGuards16(t, g.what, g.buf)
					}
					if separate {
						for i := range q {
							if q[i] != q0[i] {
								t.Fatalf("q source changed at %d", i)
							}
						}
					}
					for _, c := range []struct {
						got, in, d0   []uint16
						heads, ts, hs int
					}{{qd, q0, qd0, hh[0], qts, qhs}, {kd, k0, kd0, hh[1], kts, khs}} {
						covered := make([]bool, len(c.got))
						for tk := 0; tk < tokens; tk++ {
							row := table[int(idx[tk])*rowLen():]
							for h := 0; h < c.heads; h++ {
								off := tk*c.ts + h*c.hs
								for i := off; i < off+headDim; i++ {
									covered[i] = true
								}
								x, y := c.in[off:off+headDim], c.got[off:off+headDim]
								for i := 0; i < n; i++ {
									i0, i1, cs, sn := i, i+n, row[i], row[n+i]
									if interleaved {
										i0, i1, cs, sn = 2*i, 2*i+1, row[2*i], row[rotaryDim+2*i]
									}
									sn *= sign
									x0, x1 := float32(value(x[i0])), float32(value(x[i1]))
									// FMUL, then FMLS / FMLA: y0 = x0·c − x1·s, y1 = x1·c + x0·s.
									w0 := fma32(float32(x0*cs), -x1, sn)
									w1 := fma32(float32(x1*cs), x0, sn)
									for j, w := range []struct {
										got uint16
										y   float32
									}{{y[i0], w0}, {y[i1], w1}} {
										want, tie := nearest(w.y)
										got := value(w.got)
										if tie {
											ties++
										}
										if math.IsInf(want, 0) && !math.IsInf(float64(w.y), 0) {
											overflows++
										}
										if want != 0 && math.Abs(want) < math.Ldexp(1, emin) {
											subnormals++
										}
										if math.IsNaN(want) {
											nans++
										}
										if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && (got != want || math.Signbit(got) != math.Signbit(want)) {
											t.Fatalf("tokens %d heads %v sign %v mode %d t %d h %d pair %d (%d of 2): inputs %#04x %#04x, c %g s %g: got %#04x (%g), want %g from float32 %g",
												tokens, hh, sign, mode, tk, h, i, j, x[i0], x[i1], cs, sn, w.got, got, want, w.y)
										}
									}
								}
								for i := rotaryDim; i < headDim; i++ {
									if y[i] != x[i] {
										t.Fatalf("tokens %d mode %d dim %d >= RotaryDim: %#04x, not the source's %#04x", tokens, mode, i, y[i], x[i])
									}
								}
							}
						}
						for i, cv := range covered {
							if !cv && c.got[i] != c.d0[i] {
								t.Fatalf("tokens %d mode %d: element %d between heads written", tokens, mode, i)
							}
						}
					}
				}
			}
		}
	}
	for i := range table {
		if math.Float32bits(table[i]) != math.Float32bits(tableCopy[i]) {
			t.Fatal("table modified")
		}
	}
	// TestKernels16QEMU sums these over the shapes of a storage type.
	t.Logf("coverage: %s %d/%d interleaved=%v: %d ties, %d finite overflows, %d subnormal results, %d NaNs", storage, headDim, rotaryDim, interleaved, ties, overflows, subnormals, nans)
}
`
