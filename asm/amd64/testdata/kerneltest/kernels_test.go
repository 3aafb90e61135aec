// Package kerneltest checks the kernels that asm/amd64 generates against
// straightforward float64 loops. asm/amd64's TestKernels copies this file
// into a temporary module directory next to the generated packages and a
// config_test.go listing them (ropeCases, biasCases, absCases, expMaxULP).
package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// variant is the harness's Variant (an alias of the same struct type).
type variant = struct {
	Name       string
	Available  bool
	Rotate     func(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)
	AddRow     func(dst, src []float32)
	SoftmaxRow func(row, bias []float32, scale float32)
	AddRows    func(x []float32, table []float32, idx []int32)
}

type ropeCase struct {
	name               string
	headDim, rotaryDim int
	half               bool
	variants           []variant
}

type biasCase struct {
	name     string
	variants []variant
	exp      map[string]func(dst, src []float32)
}

type absCase struct {
	name     string
	dModel   int
	variants []variant
}

// guardFloats is how many sentinel elements precede every guarded slice.
const guardFloats = 64

// sentinel is the bit pattern of the guard elements (a quiet NaN).
const sentinel = 0x7fc0dead

// guarded allocates n 4-byte elements that end exactly where a PROT_NONE
// page begins (so reading or writing past the end faults) and are preceded
// by guardFloats sentinel words; check reports any change to those.
func guarded(t *testing.T, n int) (p unsafe.Pointer, check func(what string)) {
	t.Helper()
	page := os.Getpagesize()
	size := 4 * (n + guardFloats)
	pages := (size + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (pages+1)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[pages*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	end := pages * page
	words := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[end-size])), guardFloats)
	for i := range words {
		words[i] = sentinel
	}
	return unsafe.Pointer(&mem[end-4*n]), func(what string) {
		t.Helper()
		for i, w := range words {
			if w != sentinel {
				t.Errorf("%s: guard word %d before the slice changed to %#x", what, guardFloats-i, w)
				return
			}
		}
	}
}

func guardedF32(t *testing.T, n int) ([]float32, func(string)) {
	p, check := guarded(t, n)
	return unsafe.Slice((*float32)(p), n), check
}

func guardedI32(t *testing.T, n int) ([]int32, func(string)) {
	p, check := guarded(t, n)
	return unsafe.Slice((*int32)(p), n), check
}

func fill(r *rand.Rand, s []float32, lo, hi float64) {
	for i := range s {
		s[i] = float32(lo + (hi-lo)*r.Float64())
	}
}

func TestRotate(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const rows = 7
	const amp = 1.25 // stands in for an attention factor ≠ 1
	for _, rc := range ropeCases {
		R, n := rc.rotaryDim, rc.rotaryDim/2
		rowLen := R
		if !rc.half {
			rowLen = 2 * R
		}
		// The table: row p holds amp·cos(θ_{p,i}), amp·sin(θ_{p,i}) in the
		// layout's order, with random angles.
		table, checkTable := guardedF32(t, rows*rowLen)
		for p := 0; p < rows; p++ {
			row := table[p*rowLen : (p+1)*rowLen]
			for i := 0; i < n; i++ {
				s, c := math.Sincos(2 * math.Pi * r.Float64())
				if rc.half {
					row[i], row[n+i] = float32(amp*c), float32(amp*s)
				} else {
					row[2*i], row[2*i+1] = float32(amp*c), float32(amp*c)
					row[R+2*i], row[R+2*i+1] = float32(amp*s), float32(amp*s)
				}
			}
		}
		tableCopy := append([]float32(nil), table...)
		for _, v := range rc.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", rc.name, v.Name)
				continue
			}
			maxErr := 0.0
			// The last two shapes straddle ropeGroupedMaxBytes, so both
			// token orders of rotateTokens run (small calls grouped, large
			// ones streaming) when a head has more pieces than registers.
			perToken := (3 + 2) * rc.headDim * 4
			atLimit := ropeGroupedMaxBytes / perToken
			for _, sh := range []struct{ tokens, qHeads, kHeads int }{{5, 3, 2}, {1, 1, 0}, {3, 2, 1}, {0, 2, 2}, {4, 0, 3}, {atLimit, 3, 2}, {atLimit + 1, 3, 2}} {
				for _, sign := range []float32{1, -1} {
					name := fmt.Sprintf("%s/%s/t%d_q%d_k%d_sign%v", rc.name, v.Name, sh.tokens, sh.qHeads, sh.kHeads, sign)
					q, checkQ := guardedF32(t, sh.tokens*sh.qHeads*rc.headDim)
					k, checkK := guardedF32(t, sh.tokens*sh.kHeads*rc.headDim)
					idx, checkIdx := guardedI32(t, sh.tokens)
					fill(r, q, -2, 2)
					fill(r, k, -2, 2)
					for i := range idx {
						idx[i] = int32(r.Intn(rows))
					}
					if sh.tokens > 0 {
						idx[sh.tokens-1] = rows - 1 // the row that ends at the PROT_NONE page
					}
					q0, k0 := append([]float32(nil), q...), append([]float32(nil), k...)
					v.Rotate(q, sh.qHeads, k, sh.kHeads, table, idx, sign)
					checkQ(name + " q")
					checkK(name + " k")
					checkIdx(name + " idx")
					for _, part := range []struct {
						got, x []float32
						heads  int
					}{{q, q0, sh.qHeads}, {k, k0, sh.kHeads}} {
						for tok := 0; tok < sh.tokens; tok++ {
							row := table[int(idx[tok])*rowLen:]
							for h := 0; h < part.heads; h++ {
								off := (tok*part.heads + h) * rc.headDim
								x, got := part.x[off:off+rc.headDim], part.got[off:off+rc.headDim]
								for i := 0; i < n; i++ {
									var a, b, c, s float64
									var ia, ib int
									if rc.half {
										ia, ib = i, i+n
										c, s = float64(row[i]), float64(row[n+i])
									} else {
										ia, ib = 2*i, 2*i+1
										c, s = float64(row[2*i]), float64(row[R+2*i])
									}
									s *= float64(sign)
									a, b = float64(x[ia]), float64(x[ib])
									wa, wb := a*c-b*s, b*c+a*s
									// Two roundings (a product, then a fused
									// multiply-add): ≤ 2^-23·(|a|+|b|)·max(|c|,|s|).
									bound := 0x1p-23 * (math.Abs(a) + math.Abs(b)) * math.Max(math.Abs(c), math.Abs(s))
									for _, e := range [][2]float64{{float64(got[ia]), wa}, {float64(got[ib]), wb}} {
										d := math.Abs(e[0] - e[1])
										if !(d <= bound) {
											t.Fatalf("%s: token %d head %d pair %d: got %v want %v (bound %v)", name, tok, h, i, e[0], e[1], bound)
										}
										if bound > 0 {
											maxErr = math.Max(maxErr, d/bound)
										}
									}
								}
								for i := R; i < rc.headDim; i++ {
									if math.Float32bits(got[i]) != math.Float32bits(x[i]) {
										t.Fatalf("%s: token %d head %d: dim %d ≥ RotaryDim changed", name, tok, h, i)
									}
								}
							}
						}
					}
				}
			}
			for i := range table {
				if table[i] != tableCopy[i] {
					t.Fatalf("%s/%s: table changed", rc.name, v.Name)
				}
			}
			checkTable(rc.name + " table")
			t.Logf("rotate %s/%s: max error %.3f of the bound", rc.name, v.Name, maxErr)
		}
	}
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

func TestAddRows(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const rows = 9
	for _, ac := range absCases {
		D := ac.dModel
		table, checkTable := guardedF32(t, rows*D)
		fill(r, table, -1, 1)
		table0 := append([]float32(nil), table...)
		for _, v := range ac.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", ac.name, v.Name)
				continue
			}
			for _, tokens := range []int{0, 1, 2, 5} {
				name := fmt.Sprintf("addRows %s/%s/t%d", ac.name, v.Name, tokens)
				x, checkX := guardedF32(t, tokens*D)
				idx, checkIdx := guardedI32(t, tokens)
				fill(r, x, -3, 3)
				for i := range idx {
					idx[i] = int32(r.Intn(rows))
				}
				if tokens > 0 {
					idx[tokens-1] = rows - 1
				}
				want := make([]float32, len(x))
				for tok := 0; tok < tokens; tok++ {
					for i := 0; i < D; i++ {
						want[tok*D+i] = x[tok*D+i] + table[int(idx[tok])*D+i]
					}
				}
				v.AddRows(x, table, idx)
				checkX(name)
				checkIdx(name)
				for i := range want {
					if x[i] != want[i] {
						t.Fatalf("%s: element %d: got %v want %v", name, i, x[i], want[i])
					}
				}
			}
			for i := range table {
				if table[i] != table0[i] {
					t.Fatalf("%s/%s: table changed", ac.name, v.Name)
				}
			}
			checkTable(ac.name + " table")
		}
	}
}

// ulpError is |got − exp(x)| in float32 ulps of exp(x) (the spacing of
// float32 numbers at exp(x), 2^-149 for subnormal results), or 0 when got is
// the correctly rounded result; +Inf for a wrong infinity or NaN. clamp is
// the variant's input range (see asm/amd64's exp): inputs above clamp[1]
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
