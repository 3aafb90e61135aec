// The alibi/rpe_bias kernel tests of asm/bias (see asmtest.RunAMD64).
package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

type biasCase struct {
	name     string
	variants []variant
	exp      map[string]func(dst, src []float32)
}

var rowLens = []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 512, 1000}

func TestAddRow(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, bc := range biasCases {
		for _, v := range bc.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", bc.name, v.Name)
				continue
			}
			for _, n := range rowLens {
				name := fmt.Sprintf("addRow %s/%s/len%d", bc.name, v.Name, n)
				dst, checkDst := guardedF32(t, n)
				src, checkSrc := guardedF32(t, n)
				fill(r, dst, -10, 10)
				fill(r, src, -10, 10)
				want := make([]float32, n)
				for i := range want {
					want[i] = dst[i] + src[i]
				}
				src0 := append([]float32(nil), src...)
				v.AddRow(dst, src)
				checkDst(name)
				checkSrc(name)
				for i := range want {
					if dst[i] != want[i] || src[i] != src0[i] {
						t.Fatalf("%s: element %d: got %v want %v", name, i, dst[i], want[i])
					}
				}
			}
		}
	}
}

func TestSoftmaxRow(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, bc := range biasCases {
		for _, v := range bc.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", bc.name, v.Name)
				continue
			}
			maxErr := 0.0
			for _, n := range rowLens[1:] {
				for trial, scale := range []float32{0.125, 1, 0.5} {
					name := fmt.Sprintf("softmaxRow %s/%s/len%d/scale%v", bc.name, v.Name, n, scale)
					row, checkRow := guardedF32(t, n)
					bias, checkBias := guardedF32(t, n)
					fill(r, row, -4, 4)
					fill(r, bias, -8, 0)
					if trial == 2 {
						// Some entries far below the max: exp underflows to 0.
						for i := range bias {
							if r.Intn(3) == 0 {
								bias[i] = -200
							}
						}
					}
					bias0 := append([]float32(nil), bias...)
					vals := make([]float64, n)
					m := math.Inf(-1)
					for i := range vals {
						vals[i] = float64(scale)*float64(row[i]) + float64(bias[i])
						m = math.Max(m, vals[i])
					}
					sum := 0.0
					for i := range vals {
						vals[i] = math.Exp(vals[i] - m)
						sum += vals[i]
					}
					v.SoftmaxRow(row, bias, scale)
					checkRow(name)
					checkBias(name)
					for i := range vals {
						want := vals[i] / sum
						d := math.Abs(float64(row[i]) - want)
						if !(d <= 1e-6) {
							t.Fatalf("%s: element %d: got %v want %v", name, i, row[i], want)
						}
						if bias[i] != bias0[i] {
							t.Fatalf("%s: bias changed", name)
						}
						maxErr = math.Max(maxErr, d)
					}
				}
			}
			t.Logf("softmaxRow %s/%s: max error %.3g (absolute)", bc.name, v.Name, maxErr)
		}
	}
}

// rampCheck runs one softmaxRamp call on a guarded row of n scores and
// compares it with the float64 softmax of the kernel's float32 logits:
// bias_j = float32(nslope·|t0 − j|) (the product of two float32 is exact in
// float64, so this is the kernel's one rounding) and v_j = scale·row[j] +
// bias_j unrounded (the kernel forms (bias_j − max) + scale·row[j] fused). It returns the largest absolute error.
func rampCheck(t *testing.T, name string, f func(row []float32, scale, nslope, t0 float32), r *rand.Rand, n int, scale, nslope float32, t0 int) float64 {
	t.Helper()
	row, checkRow := guardedF32(t, n)
	fill(r, row, -4, 4)
	vals := make([]float64, n)
	m := math.Inf(-1)
	for j := range vals {
		d := float64(t0 - j)
		b := float32(float64(nslope) * math.Abs(d))
		vals[j] = float64(scale)*float64(row[j]) + float64(b) // the precise exponent: (b − max) + scale·row, fused
		m = math.Max(m, vals[j])
	}
	sum := 0.0
	for j := range vals {
		vals[j] = math.Exp(vals[j] - m)
		sum += vals[j]
	}
	f(row, scale, nslope, float32(t0))
	checkRow(name)
	worst := 0.0
	for j := range vals {
		d := math.Abs(float64(row[j]) - vals[j]/sum)
		if !(d <= 1e-6) {
			t.Fatalf("%s: element %d: got %v want %v", name, j, row[j], vals[j]/sum)
		}
		worst = math.Max(worst, d)
	}
	return worst
}

// TestAddRamp checks addRamp (the in-register ALiBi bias of AddBias and
// Bias) against a float64 loop, bit for bit: dst[j] + float32(nslope·|t0 − j|)
// with the product in float64, on every row length, t0 before, inside and
// after the row, at 2^20 and near 2^31, and with -0.0 biases (t0 = j).
func TestAddRamp(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, bc := range biasCases {
		for _, v := range bc.variants {
			if !v.Available || v.AddRamp == nil {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions or no addRamp", bc.name, v.Name)
				continue
			}
			for _, n := range append(rowLens, 4099) {
				for _, t0 := range []int{0, n - 1, n / 2, n + 3, -5, 1 << 20, 1<<31 - 2} {
					for _, ns := range []float64{-0.5, -1.0 / 256, -0.0078125 * 3, -math.Pow(2, -8.0/3)} {
						name := fmt.Sprintf("addRamp %s/%s/len%d/t0=%d/nslope%v", bc.name, v.Name, n, t0, ns)
						dst, check := guardedF32(t, n)
						fill(r, dst, -10, 10)
						want := make([]float32, n)
						for j := range want {
							want[j] = dst[j] + float32(ns*math.Abs(float64(t0)-float64(j)))
						}
						v.AddRamp(dst, ns, float64(t0))
						check(name)
						for j := range want {
							if math.Float32bits(dst[j]) != math.Float32bits(want[j]) {
								t.Fatalf("%s: element %d: got %v want %v", name, j, dst[j], want[j])
							}
						}
					}
				}
			}
		}
	}
}

// TestSoftmaxRamp checks softmaxRamp (the in-register ALiBi bias) on every
// row length, with t0 before, inside and after the row (the |t0 − j| fold)
// and up to 2^24−1, for steep and shallow slopes.
func TestSoftmaxRamp(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for _, bc := range biasCases {
		for _, v := range bc.variants {
			if !v.Available || v.SoftmaxRamp == nil {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions or no softmaxRamp", bc.name, v.Name)
				continue
			}
			worst := 0.0
			for _, n := range append(rowLens[1:], 4099) {
				for _, t0 := range []int{0, n - 1, n / 2, n + 3, 1 << 20, 1<<24 - 1} {
					for _, sl := range []float32{-0.5, -1.0 / 256, -0.0078125 * 3} {
						for _, scale := range []float32{0.125, 1} {
							name := fmt.Sprintf("softmaxRamp %s/%s/len%d/t0=%d/nslope%v/scale%v", bc.name, v.Name, n, t0, sl, scale)
							worst = math.Max(worst, rampCheck(t, name, v.SoftmaxRamp, r, n, scale, sl, t0))
						}
					}
				}
			}
			t.Logf("softmaxRamp %s/%s: max error %.3g (absolute)", bc.name, v.Name, worst)
		}
	}
}

// ulpError is |got − exp(x)| in float32 ulps of exp(x) (the spacing of
// float32 numbers at exp(x), 2^-149 for subnormal results), or 0 when got is
// the correctly rounded result; +Inf for a wrong infinity or NaN. clamp is
// the variant's input range (see asm/bias's expconst.go): inputs above clamp[1]
// must give exp(clamp[1]) or better, and where the clamp is above the
// subnormal range (AVX2), results below FLT_MIN may be off by up to 2^−126,
// which counts as 0 ulp here.
func ulpError(x, got float32, clamp [2]float32) float64 {
	if x > clamp[1] {
		x = clamp[1]
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
	case clamp[0] > -103.9 && e < 0x1p-126: // the clamp cuts into the subnormal range
		if math.Abs(float64(got)-e) <= 0x1p-126 {
			return 0
		}
		return math.Inf(1)
	}
	_, exp := math.Frexp(e) // e = f·2^exp, f in [0.5, 1)
	ulp := math.Ldexp(1, exp-24)
	if ulp < 0x1p-149 {
		ulp = 0x1p-149
	}
	return math.Abs(float64(got)-e) / ulp
}

func TestExp(t *testing.T) {
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()),
		-87.3, -87.34, -100, -103.9, -103.98, -104, -200, -1e30, 88.7, 88.72, 88.7228, 88.72284, 88.8, 89, 100, 1e30,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-10, -1e-10}
	for _, bc := range biasCases {
		for _, v := range bc.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", bc.name, v.Name)
				continue
			}
			exp := bc.exp[v.Name]
			// Special values, also at every tail length.
			for n := 1; n <= len(specials); n++ {
				src, checkSrc := guardedF32(t, n)
				dst, checkDst := guardedF32(t, n)
				copy(src, specials[len(specials)-n:])
				exp(dst, src)
				checkSrc("exp src")
				checkDst("exp dst")
				for i, x := range src {
					if e := ulpError(x, dst[i], expClamp[v.Name]); e > expMaxULP {
						t.Fatalf("%s/%s: exp(%v) = %v, want %v (%.3g ulp)", bc.name, v.Name, x, dst[i], math.Exp(float64(x)), e)
					}
				}
			}
			if got := func() float32 { d := []float32{0}; exp(d, []float32{float32(math.Inf(-1))}); return d[0] }(); got != 0 {
				t.Fatalf("%s/%s: exp(-Inf) = %v", bc.name, v.Name, got)
			}
			// Every expStride-th bit pattern of the whole float32 range.
			const chunk = 1 << 20
			src := make([]float32, 0, chunk)
			dst := make([]float32, chunk)
			maxErr, worst := 0.0, float32(0)
			flush := func() {
				exp(dst[:len(src)], src)
				for i, x := range src {
					if e := ulpError(x, dst[i], expClamp[v.Name]); e > maxErr {
						maxErr, worst = e, x
					}
				}
				src = src[:0]
			}
			for b := uint64(0); b < 1<<32; b += expStride {
				src = append(src, math.Float32frombits(uint32(b)))
				if len(src) == chunk {
					flush()
				}
			}
			flush()
			t.Logf("exp %s/%s: max error %.4f ulp at x = %v (bound %v, every %d-th bit pattern)", bc.name, v.Name, maxErr, worst, expMaxULP, expStride)
			if maxErr > expMaxULP {
				t.Errorf("%s/%s: exp error %.4f ulp at %v exceeds %v", bc.name, v.Name, maxErr, worst, expMaxULP)
			}
		}
	}
}

// goSoftmax is the plain Go softmax-with-bias loop.
func goSoftmax(row, bias []float32, scale float32) {
	m := float32(math.Inf(-1))
	for j := range row {
		v := scale*row[j] + bias[j]
		row[j] = v
		if v > m {
			m = v
		}
	}
	var sum float32
	for j := range row {
		e := float32(math.Exp(float64(row[j] - m)))
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
}

func BenchmarkSoftmax512(b *testing.B) {
	r := rand.New(rand.NewSource(6))
	row, bias := make([]float32, 512), make([]float32, 512)
	fill(r, row, -4, 4)
	fill(r, bias, -8, 0)
	for _, v := range biasCases[0].variants {
		if !v.Available {
			continue
		}
		b.Run(v.Name, func(b *testing.B) {
			b.SetBytes(4 * 512)
			for i := 0; i < b.N; i++ {
				v.SoftmaxRow(row, bias, 0.125)
			}
		})
	}
	b.Run("goloop", func(b *testing.B) {
		b.SetBytes(4 * 512)
		for i := 0; i < b.N; i++ {
			goSoftmax(row, bias, 0.125)
		}
	})
}
