package cuda_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// buildLib emits a spec's CUDA files and builds their host-emulation
// driver.
func buildLib(t *testing.T, y string) *cudahost.Lib {
	t.Helper()
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	c := derive(t, y)
	dir := write(t, c)
	l, err := cudahost.Build(c.Input(), filepath.Join(dir, c.Input().Name+".cu"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// run checks the host-emulated kernels against the float64 reference
// with the harness of package verify (the bounds of docs/design/).
func run(t *testing.T, l *cudahost.Lib, target string) {
	s := l.Spec()
	r := l.Verify()
	r.Target = target
	verify.Emit(t, r)
	if r.Cases == 0 {
		t.Errorf("%s: no cases ran", s.Name)
	}
}

// TestHostEmulation runs the f32 test specs' CUDA kernels, compiled for
// the CPU with the host-emulation header, through the verify harness.
func TestHostEmulation(t *testing.T) {
	for _, y := range testSpecs {
		c := derive(t, y)
		if c.Input().DType != "f32" {
			continue
		}
		t.Run(c.Input().Name, func(t *testing.T) {
			l := buildLib(t, y)
			run(t, l, cudahost.Target)
			if c.Input().Name == "rope_half" || c.Input().Name == "rpefull64" || c.Input().Name == "xl64" {
				// The launchers' scalar fallback for unaligned pointers.
				l.Misalign = true
				run(t, l, cudahost.Target+"-unaligned")
			}
		})
	}
}

// storageUlp returns the relative half-ulp of the spec's storage type:
// the rounding of one f32 result to f16 (2^−11) or bf16 (2^−8).
func storageUlp(dtype string) float64 {
	switch dtype {
	case "f16":
		return 0x1p-11
	case "bf16":
		return 0x1p-8
	}
	return 0
}

// checker compares kernel outputs with a reference under a per-element
// bound and reports the first failures.
type checker struct {
	t     *testing.T
	name  string
	fails int
	worst float64
}

func (c *checker) check(what string, got []float32, want []float64, bound func(i int) float64) {
	c.t.Helper()
	for i, w := range want {
		g := float64(got[i])
		if math.IsInf(w, 0) && g == w {
			continue
		}
		b := bound(i)
		e := math.Abs(g - w)
		if !(e <= b) {
			if c.fails++; c.fails <= 5 {
				c.t.Errorf("%s %s[%d] = %v, want %v (|err| %.3g > bound %.3g)", c.name, what, i, g, w, e, b)
			}
		}
		if b > 0 {
			c.worst = max(c.worst, e/b)
		}
	}
}

// randn returns n normal draws rounded to the storage type.
func randn(l *cudahost.Lib, r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return l.RoundTrip(x)
}

// TestHostEmulationReducedPrecision checks the f16 and bf16 kernels: the
// inputs are rounded to the storage type first and the reference is
// computed from the rounded inputs in float64, so the only extra error is
// the final rounding of each f32 result to storage. Bound per element:
// u·|ref| + the f32 bound of docs/design/ (1e-5·(|x_a|+|x_b|)·A for RoPE at
// any position, 1e-6·max|bias| for biases, 1e-6 for softmax, 2e-6·max(1,
// |ref|) for absolute encodings and xl's Relative, verify's γ_n bounds for
// rpe_full and xl scores and outputs), u = 2^−11 (f16) or 2^−8 (bf16), the
// half-ulp of round-to-nearest-even.
func TestHostEmulationReducedPrecision(t *testing.T) {
	for _, y := range testSpecs {
		c := derive(t, y)
		s := c.Input()
		if s.DType == "f32" {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			l := buildLib(t, y)
			u := storageUlp(s.DType) * 1.0001
			r := rand.New(rand.NewPCG(1, 2))
			ck := &checker{t: t, name: s.Name}
			pos := []int32{0, 1, 63, 64, 4095, 1 << 20, math.MaxInt32, -5, 77, 1000}
			switch s.Encoding {
			case spec.RoPE:
				k := l.RoPE()
				a := verify.RoPEAttentionFactor(s)
				pa, pb := verify.RoPEPairs(s)
				for _, heads := range []int{1, 3} {
					for _, ps := range [][]int32{pos, pos[:4], {5, 9, 2}} {
						x := randn(l, r, len(ps)*heads*s.HeadDim)
						for _, inv := range []bool{false, true} {
							want := verify.RoPEApply(s, x, ps, heads, inv)
							got := append([]float32(nil), x...)
							if inv {
								k.Inverse(got, ps, heads)
							} else {
								k.Apply(got, ps, heads)
							}
							// Pair partner of every dim, for the bound.
							partner := make([]int, s.HeadDim)
							for i := range partner {
								partner[i] = -1
							}
							for i := range pa {
								partner[pa[i]], partner[pb[i]] = pb[i], pa[i]
							}
							ck.check("rope", got, want, func(i int) float64 {
								d := i % s.HeadDim
								if partner[d] < 0 {
									return 0 // untouched dim: exact
								}
								j := i - d + partner[d]
								return u*math.Abs(want[i]) + 1e-5*(math.Abs(float64(x[i]))+math.Abs(float64(x[j])))*a
							})
						}
					}
				}
			case spec.ALiBi, spec.RPEBias:
				k := l.Bias()
				var table []float32
				if s.Encoding == spec.RPEBias {
					table = randn(l, r, s.Heads*s.NumBuckets())
				}
				for _, sh := range [][3]int{{1, 1, 0}, {5, 9, 4}, {7, 7, 0}, {3, 40, 100}, {4, 300, 0}} {
					lq, lk, qo := sh[0], sh[1], sh[2]
					n := s.Heads * lq * lk
					var bias []float64
					dst := make([]float32, n)
					if s.Encoding == spec.ALiBi {
						bias = verify.ALiBiBias(s, lq, lk, qo)
						k.Bias(dst, lq, lk, qo)
					} else {
						bias = verify.RPEBias(s, table, lq, lk, qo)
						k.RPEBias(dst, table, lq, lk, qo)
					}
					mb := 0.0
					for _, b := range bias {
						mb = max(mb, math.Abs(b))
					}
					ck.check("bias", dst, bias, func(i int) float64 { return u*math.Abs(bias[i]) + 1e-6*mb })
					scores := randn(l, r, n)
					got := append([]float32(nil), scores...)
					if s.Encoding == spec.ALiBi {
						k.Softmax(got, lq, lk, qo, 0.7)
					} else {
						k.RPESoftmax(got, table, lq, lk, qo, 0.7)
					}
					want := verify.Softmax(scores, bias, verify.BiasMask(s, qo), s.Heads, lq, lk, float64(float32(0.7)))
					ck.check("softmax", got, want, func(i int) float64 { return u*math.Abs(want[i]) + 1e-6 })
				}
			case spec.RPEFull, spec.XL:
				relReducedPrecision(t, l, r, ck, u)
			default:
				k := l.Absolute()
				x := randn(l, r, len(pos)*s.DModel)
				want := verify.AbsoluteAdd(s, x, pos)
				got := append([]float32(nil), x...)
				k.Add(got, pos)
				ck.check("add", got, want, func(i int) float64 { return u*math.Abs(want[i]) + 2e-6*math.Max(1, math.Abs(want[i])) })
			}
			t.Logf("%s/%s: max error/bound %.3g", s.Name, cudahost.Target, ck.worst)
			if cudahost.VerifiesStorage(s) {
				// Lib.Verify's storage-rounded check: every launcher,
				// the RoPE engine forms included.
				r := l.Verify()
				verify.Emit(t, r)
				if r.Cases < 2 {
					t.Errorf("%s: Lib.Verify ran %d cases", s.Name, r.Cases)
				}
			}
		})
	}
}
