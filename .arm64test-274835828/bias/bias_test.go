package bias

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

const (
	expLo, expHi = -88, 88 // the input range of the vector expf
	expMaxULP    = 0.9
	expStride    = 997
)

func TestAddRow(t *testing.T) {
	add := registered["neon"].addRow
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range lengths {
		d, dbuf := guarded(n)
		s, sbuf := guarded(n)
		for i := range d {
			d[i], s[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*10)
		}
		d0 := append([]float32(nil), d...)
		add(d, s)
		checkGuards(t, "dst", dbuf)
		checkGuards(t, "src", sbuf)
		for i := range d {
			if d[i] != d0[i]+s[i] {
				t.Fatalf("len %d [%d]: got %g want %g", n, i, d[i], d0[i]+s[i])
			}
		}
	}
}

func TestSoftmaxRow(t *testing.T) {
	sm := registered["neon"].softmaxRow
	rng := rand.New(rand.NewPCG(5, 6))
	worst := 0.0
	for _, n := range append(lengths[1:], 16, 64, 79, 4099) {
		for _, scale := range []float32{1, 0.125, 3} {
			for _, neginf := range []bool{false, true} {
				r, rbuf := guarded(n)
				b, bbuf := guarded(n)
				for i := range r {
					r[i], b[i] = float32(rng.NormFloat64()*4), float32(-rng.Float64()*20)
				}
				if neginf && n > 1 {
					r[rng.IntN(n)] = float32(math.Inf(-1))
				}
				v := make([]float64, n)
				m := math.Inf(-1)
				for i := range v {
					// The kernel forms scale·row+bias with one fused float32 rounding.
					v[i] = float64(float32(math.FMA(float64(r[i]), float64(scale), float64(b[i]))))
					m = math.Max(m, v[i])
				}
				sum := 0.0
				for i := range v {
					v[i] = math.Exp(v[i] - m)
					sum += v[i]
				}
				sm(r, b, scale)
				checkGuards(t, "row", rbuf)
				checkGuards(t, "bias", bbuf)
				for i := range v {
					e := math.Abs(float64(r[i]) - v[i]/sum)
					worst = math.Max(worst, e)
					if !(e <= 1e-6) {
						t.Fatalf("len %d scale %g [%d]: got %g want %g", n, scale, i, r[i], v[i]/sum)
					}
				}
			}
		}
	}
	t.Logf("softmax max abs error %.3g", worst)
}

// TestAddRamp checks addRamp against a float64 loop, bit for bit:
// dst[j] + float32(nslope·|t0 − j|), the product in float64; t0 before,
// inside and after the row, at 2^20 and near 2^31; both loops (4, 1 lanes).
func TestAddRamp(t *testing.T) {
	add := registered["neon"].addRamp
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range append(lengths, 2, 4, 5, 4099) {
		for _, t0 := range []int{0, n - 1, n / 2, n + 3, -5, 1 << 20, 1<<31 - 2} {
			for _, ns := range []float64{-0.5, -1.0 / 256, -math.Pow(2, -8.0/3)} {
				d, dbuf := guarded(n)
				for i := range d {
					d[i] = float32(rng.NormFloat64() * 10)
				}
				want := make([]float32, n)
				for j := range want {
					want[j] = d[j] + float32(ns*math.Abs(float64(t0)-float64(j)))
				}
				add(d, ns, float64(t0))
				checkGuards(t, "dst", dbuf)
				for j := range want {
					if math.Float32bits(d[j]) != math.Float32bits(want[j]) {
						t.Fatalf("len %d t0 %d nslope %v [%d]: got %v want %v", n, t0, ns, j, d[j], want[j])
					}
				}
			}
		}
	}
}

// TestSoftmaxRamp checks softmaxRamp (the in-register ALiBi bias) against
// the float64 softmax of its float32 logits: bias_j = float32(nslope·|t0−j|)
// (one rounding, as the kernel), v_j = scale·row[j] + bias_j unrounded
// (the kernel's exponent (bias_j − max) + scale·row[j] is exact but for one rounding); t0 before,
// inside and after the row and up to 2^24−1; every loop (16, 4, 1 lanes).
func TestSoftmaxRamp(t *testing.T) {
	sm := registered["neon"].softmaxRamp
	rng := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for _, n := range append(lengths[1:], 16, 64, 79, 4099) {
		for _, t0 := range []int{0, n - 1, n / 2, n + 3, 1 << 20, 1<<24 - 1} {
			for _, nslope := range []float32{-0.5, -1.0 / 256, -0.0234375} {
				scale := float32(0.125)
				r, rbuf := guarded(n)
				for i := range r {
					r[i] = float32(rng.NormFloat64() * 4)
				}
				v := make([]float64, n)
				m := math.Inf(-1)
				for j := range v {
					b := float32(float64(nslope) * math.Abs(float64(t0-j)))
					v[j] = float64(scale)*float64(r[j]) + float64(b) // the precise exponent: (b − max) + scale·row, fused
					m = math.Max(m, v[j])
				}
				sum := 0.0
				for j := range v {
					v[j] = math.Exp(v[j] - m)
					sum += v[j]
				}
				sm(r, scale, nslope, float32(t0))
				checkGuards(t, "row", rbuf)
				for j := range v {
					e := math.Abs(float64(r[j]) - v[j]/sum)
					worst = math.Max(worst, e)
					if !(e <= 1e-6) {
						t.Fatalf("len %d t0 %d nslope %g [%d]: got %g want %g", n, t0, nslope, j, r[j], v[j]/sum)
					}
				}
			}
		}
	}
	t.Logf("softmaxRamp max abs error %.3g", worst)
}

// TestSoftmaxLongSum checks the sum of a long row: one key at 0 and n−1 at
// −0.1. Summed one float32 add at a time, the n−1 equal terms would lose
// ~1e−3 of the sum (each add rounds to the spacing of the running sum); the
// kernel sums blocks of 16 in float32 (exact here: c+c, 2c+2c) and the
// blocks in float64, so every output is within a few ulps of the exact one.
func TestSoftmaxLongSum(t *testing.T) {
	const n = 1<<20 + 7
	r, rbuf := guarded(n)
	b, bbuf := guarded(n)
	for i := range b {
		r[i], b[i] = 0, -0.1
	}
	b[0] = 0
	registered["neon"].softmaxRow(r, b, 1)
	checkGuards(t, "row", rbuf)
	checkGuards(t, "bias", bbuf)
	c := math.Exp(float64(float32(-0.1)))
	sum := 1 + float64(n-1)*c
	worst := 0.0
	for i, want := range []float64{1 / sum, c / sum} {
		got := float64(r[i])
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	for i := 2; i < n; i++ {
		if r[i] != r[1] {
			t.Fatalf("[%d] = %g differs from [1] = %g", i, r[i], r[1])
		}
	}
	t.Logf("long row: max relative error %.3g (%.2f·2^-24)", worst, worst*0x1p24)
	if worst > 4*0x1p-24 {
		t.Errorf("long row: relative error %.3g > 4·2^-24", worst)
	}
}

func TestSoftmaxNaN(t *testing.T) {
	r := []float32{1, float32(math.NaN()), 2, 3, 4, 5}
	registered["neon"].softmaxRow(r, make([]float32, len(r)), 1)
	for i := range r {
		if !math.IsNaN(float64(r[i])) {
			t.Fatalf("[%d] = %g, want NaN", i, r[i])
		}
	}
	// Long rows (the 16-lane loop and its exp skip) whose other keys are far
	// below the maximum: a NaN of either sign still makes every output NaN.
	for _, bits := range []uint32{0x7fc00000, 0xffc00000, 0xff800001} {
		for _, at := range []int{0, 17, 40, 69} {
			r, b := make([]float32, 70), make([]float32, 70)
			for j := range b {
				b[j] = -1000
			}
			b[0] = 0
			r[at] = math.Float32frombits(bits)
			registered["neon"].softmaxRow(r, b, 1)
			for i := range r {
				if !math.IsNaN(float64(r[i])) {
					t.Fatalf("NaN %#x at %d: [%d] = %g, want NaN", bits, at, i, r[i])
				}
			}
		}
	}
}

// TestSoftmaxExpSkip checks the exp skip of the 16-lane loop: blocks whose
// every exponent is at or below −88 are zeroed, and a block with one lane
// above it is not (that lane's tiny probability must survive), with the
// lane anywhere in the block; against a float64 softmax, relative 1e-5 for
// the tiny lanes and 1e-6 absolute elsewhere.
func TestSoftmaxExpSkip(t *testing.T) {
	sm := registered["neon"].softmaxRow
	for _, n := range []int{64, 67, 80} {
		for lane := 0; lane < 16; lane++ {
			for _, live := range []float32{-80, -60, -87.5, -88, -88.001} {
				r, rbuf := guarded(n)
				b, bbuf := guarded(n)
				for j := range b {
					r[j] = 0
					b[j] = -1000 // dead: far below the clamp
				}
				for j := 0; j < 16; j++ {
					b[j] = -88 // dead: exactly at the clamp
				}
				for j := 32; j < 48; j++ {
					b[j] = -300
				}
				b[32+lane] = live
				b[48+lane%3] = 0.5 // the maximum, in the fourth block
				want := make([]float64, n)
				sum := 0.0
				for j := range want {
					want[j] = math.Exp(float64(b[j]) - 0.5)
					sum += want[j]
				}
				sm(r, b, 1)
				checkGuards(t, "row", rbuf)
				checkGuards(t, "bias", bbuf)
				for j := range want {
					w := want[j] / sum
					switch {
					case w > 1e-37 && w < 1e-6:
						if math.Abs(float64(r[j])-w) > 1e-5*w {
							t.Fatalf("n %d lane %d live %v: [%d] = %g, want %g (a live lane of a skipped block?)", n, lane, live, j, r[j], w)
						}
					case w <= 1e-37:
						if r[j] != 0 {
							t.Fatalf("n %d lane %d live %v: [%d] = %g, want 0", n, lane, live, j, r[j])
						}
					default:
						if math.Abs(float64(r[j])-w) > 1e-6 {
							t.Fatalf("n %d lane %d live %v: [%d] = %g, want %g", n, lane, live, j, r[j], w)
						}
					}
				}
			}
		}
	}
}

// ulpError is |got − exp(x)| in float32 ulps of exp(x) (the spacing of
// float32 numbers at exp(x), 2^-149 for subnormal results), or 0 when got is
// the correctly rounded result; +Inf for a wrong infinity or NaN. Inputs
// above expHi must give exp(expHi) or better, and results below FLT_MIN may
// be off by up to 2^−126 (expLo is above the subnormal range), which counts
// as 0 ulp. As the AVX tests' ulpError (testdata/kerneltest/bias_test.go).
func ulpError(x, got float32) float64 {
	if x > expHi {
		x = expHi
	}
	e := math.Exp(float64(x))
	want := float32(e)
	switch {
	case math.IsNaN(float64(x)):
		if math.IsNaN(float64(got)) {
			return 0
		}
		return math.Inf(1)
	case got == want:
		return 0
	case math.IsInf(float64(got), 0) || math.IsNaN(float64(got)) || math.IsInf(float64(want), 0):
		return math.Inf(1)
	case e < 0x1p-126:
		if math.Abs(float64(got)-e) <= 0x1p-126 {
			return 0
		}
		return math.Inf(1)
	}
	_, exp := math.Frexp(e) // e = f·2^exp, f in [0.5, 1)
	return math.Abs(float64(got)-e) / math.Ldexp(1, exp-24)
}

// fma32 is the correctly rounded float32 a·b + c: a·b is exact in float64,
// and when rounding the float64 sum lands on a float32 midpoint the exact
// remainder (TwoSum, Knuth TAOCP vol. 2 §4.2.2) decides.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bb := s - p
	rem := (p - (s - bb)) + (float64(c) - bb) // p + c = s + rem exactly
	f := float32(s)
	if rem == 0 || float64(f) == s || math.IsInf(s, 0) {
		return f
	}
	lo, hi := f, math.Nextafter32(f, float32(math.Inf(1)))
	if float64(f) > s {
		lo, hi = math.Nextafter32(f, float32(math.Inf(-1))), f
	}
	if s == (float64(lo)+float64(hi))/2 {
		if rem > 0 {
			return hi
		}
		return lo
	}
	return f
}

// avx2Exp is the AVX2 exp of amd64_exp.go, operation by operation: clamp, t =
// fma(x, log2e, 1.5·2^23+127), n = t − M, Cody–Waite, Horner down to the
// constant term, times the 2^n of t's bits.
func avx2Exp(x float32) float32 {
	const magic = float32(0x1.8p23 + 127)
	x = max(x, expLo) // Go's max and min keep NaN, as VMAXPS/VMINPS ordered
	x = min(x, expHi)
	t := fma32(x, math.Log2E, magic)
	n := t - magic
	x = fma32(-n, 0.693359375, x)
	x = fma32(-n, -2.12194440e-4, x)
	p := float32(0.0013814599)
	for _, k := range []float32{0.008368717, 0.04166839, 0.16666521, 0.49999994, 1, 1} {
		p = fma32(p, x, k)
	}
	return p * math.Float32frombits(math.Float32bits(t)<<23)
}

// TestExpMatchesAVX2 checks that the NEON expf gives AVX2's bits wherever
// s·r cannot underflow (results above 2^-100): s + (s·r)·q rounds once,
// like (1 + r·q)·2^n.
func TestExpMatchesAVX2(t *testing.T) {
	var src []float32
	for b := uint64(0); b < 1<<32; b += 9973 {
		src = append(src, math.Float32frombits(uint32(b)))
	}
	dst := make([]float32, len(src))
	expNEON(dst, src)
	differ := 0
	for i, x := range src {
		want := avx2Exp(x)
		if math.Float32bits(dst[i]) == math.Float32bits(want) || math.IsNaN(float64(x)) && math.IsNaN(float64(dst[i])) {
			continue
		}
		differ++
		if !(want < 0x1p-100) {
			t.Fatalf("exp(%g) = %g, AVX2's sequence gives %g", x, dst[i], want)
		}
	}
	t.Logf("%d inputs, %d differ from AVX2's sequence (all below 2^-100)", len(src), differ)
}

// TestExpShift checks the attention form's expShift: each output is, bit
// for bit, the expf of softmaxRow (expNEON) at the float32 row[j] − m, and
// AVX2's sequence wherever that is above 2^-100; e^−∞ is +0; sum[0] is
// within n·2^-24 of the float64 sum of the outputs. Lengths reach every
// loop (16, 4 and 1 lanes), rows of 32 keys or more start with a block of
// far keys (the exp skip), and a NaN at any place makes its output and the
// sum NaN.
func TestExpShift(t *testing.T) {
	es := registered["neon"].expShift
	rng := rand.New(rand.NewPCG(9, 10))
	checked, skipped := 0, 0
	for _, n := range append(lengths, 4, 5, 16, 20, 64, 79) {
		for _, m := range []float32{0, 3.5, -20, 1e4} {
			r, rbuf := guarded(n)
			for j := range r {
				switch rng.IntN(8) {
				case 0:
					r[j] = float32(math.Inf(-1)) // a masked key
				case 1:
					r[j] = m - 1000 // far below the maximum: e^x = +0
				case 2:
					r[j] = m + float32(rng.Float64()) // above m: m is a running maximum
				default:
					r[j] = m - float32(rng.Float64()*40)
				}
			}
			for j := 0; j < 16 && n >= 32; j++ {
				r[j] = m - 1000
			}
			x := make([]float32, n)
			for j := range r {
				x[j] = r[j] - m
			}
			want := make([]float32, n)
			expNEON(want, x)
			sum, sbuf := guarded(1)
			es(r, m, sum)
			checkGuards(t, "row", rbuf)
			checkGuards(t, "sum", sbuf)
			total := 0.0
			for j := range r {
				if math.Float32bits(r[j]) != math.Float32bits(want[j]) {
					t.Fatalf("n %d m %v: row[%d] = e^%v = %v, softmaxRow's expf gives %v", n, m, j, x[j], r[j], want[j])
				}
				if a := avx2Exp(x[j]); math.Float32bits(a) != math.Float32bits(r[j]) && !(a < 0x1p-100) {
					t.Fatalf("n %d m %v: row[%d] = e^%v = %v, AVX2's sequence gives %v", n, m, j, x[j], r[j], a)
				}
				if math.IsInf(float64(x[j]), -1) && math.Float32bits(r[j]) != 0 {
					t.Fatalf("n %d m %v: row[%d] = %v for a −Inf score, want +0", n, m, j, r[j])
				}
				if x[j] <= -88 {
					skipped++
				}
				total += float64(r[j])
			}
			checked += n
			if e := math.Abs(float64(sum[0]) - total); !(e <= float64(n)*0x1p-24*total) {
				t.Fatalf("n %d m %v: sum %v, want %v", n, m, sum[0], total)
			}
		}
	}
	for _, n := range []int{1, 5, 16, 23, 64} {
		for _, at := range []int{0, n / 2, n - 1} {
			r := make([]float32, n)
			r[at] = float32(math.NaN())
			sum := []float32{0}
			es(r, 0, sum)
			for j := range r {
				if math.IsNaN(float64(r[j])) != (j == at) {
					t.Fatalf("NaN at %d of %d: row[%d] = %v", at, n, j, r[j])
				}
			}
			if !math.IsNaN(float64(sum[0])) {
				t.Fatalf("NaN at %d of %d: sum %v, want NaN", at, n, sum[0])
			}
		}
	}
	t.Logf("expShift: %d outputs equal to softmaxRow's expf (%d at or below its clamp)", checked, skipped)
}

func TestExpULP(t *testing.T) {
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()),
		-87.3, -87.34, -87.68, -87.7, -88, -88.1, -100, -103.9, -104, -200, -1e30, 87.9, 88, 88.01, 88.7, 88.72, 88.73, 89, 100, 1e30,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-10, -1e-10, 0.34657359, -0.34657359}
	// Special values at every length: every loop and tail position.
	for n := 1; n <= len(specials); n++ {
		src, sbuf := guarded(n)
		dst, dbuf := guarded(n)
		copy(src, specials[len(specials)-n:])
		expNEON(dst, src)
		checkGuards(t, "src", sbuf)
		checkGuards(t, "dst", dbuf)
		for i, x := range src {
			if e := ulpError(x, dst[i]); e > expMaxULP {
				t.Fatalf("exp(%g) = %g, want %g (%.3g ulp)", x, dst[i], math.Exp(float64(x)), e)
			}
		}
	}
	for _, s := range []struct{ x, want float32 }{
		{float32(math.Inf(-1)), 0}, {-88, 0}, {-200, 0}, {-1e30, 0}, {0, 1}, {float32(math.Copysign(0, -1)), 1},
	} {
		d := []float32{0, 0, 0, 0, 0}
		expNEON(d, []float32{s.x, s.x, s.x, s.x, s.x}) // vector and lane paths
		for _, got := range d {
			if got != s.want || math.Signbit(float64(got)) {
				t.Errorf("exp(%g) = %g, want %g", s.x, got, s.want)
			}
		}
	}
	// Every expStride-th bit pattern of the whole float32 range.
	const chunk = 1 << 18
	src := make([]float32, 0, chunk+3)
	dst := make([]float32, chunk+3)
	worst, at, count := 0.0, float32(0), 0
	flush := func() {
		expNEON(dst[:len(src)], src)
		for i, x := range src {
			if e := ulpError(x, dst[i]); e > worst {
				worst, at = e, x
			}
		}
		count += len(src)
		src = src[:0]
	}
	for b := uint64(0); b < 1<<32; b += expStride {
		src = append(src, math.Float32frombits(uint32(b)))
		if len(src) == chunk {
			flush()
		}
	}
	// A length not a multiple of 4 exercises the one-lane tail.
	src = append(src, 0.5, -0.5, 87.5)
	flush()
	fmt.Printf("POSENC-EXP-MAXULP %.4f at %g over %d inputs (stride %d)\n", worst, at, count, expStride)
	if worst > expMaxULP {
		t.Errorf("max error %.4f ulp at %g, want <= %v", worst, at, expMaxULP)
	}
}
