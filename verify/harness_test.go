package verify

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/posenc/posenc/spec"
)

// This file proves the harness both passes correct kernels and catches
// wrong ones. The "correct" kernels are float64 computations from the
// reference, rounded to float32, with the length checks of the generated
// API; each wrong set breaks one thing.

func mustLen(name string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("%s: length %d, want %d", name, got, want))
	}
}

func store(dst []float32, src []float64) {
	for i, v := range src {
		dst[i] = float32(v)
	}
}

// ropeKernels builds a float64-based rope kernel set; apply computes the
// rotated values (nil: the reference).
func ropeKernels(s *spec.Spec, apply func(x []float32, pos []int32, heads int, inverse bool) []float64) RoPEKernels {
	if apply == nil {
		apply = func(x []float32, pos []int32, heads int, inverse bool) []float64 {
			return RoPEApply(s, x, pos, heads, inverse)
		}
	}
	one := func(inverse bool) func([]float32, []int32, int) {
		return func(x []float32, pos []int32, heads int) {
			mustLen("x", len(x), len(pos)*heads*s.HeadDim)
			store(x, apply(x, pos, heads, inverse))
		}
	}
	return RoPEKernels{
		Apply:   one(false),
		Inverse: one(true),
		ApplyQK: func(q, k []float32, pos []int32, qh, kh int) {
			mustLen("q", len(q), len(pos)*qh*s.HeadDim)
			mustLen("k", len(k), len(pos)*kh*s.HeadDim)
			store(q, apply(q, pos, qh, false))
			store(k, apply(k, pos, kh, false))
		},
		Frequencies:     func() []float64 { return RoPEFrequencies(s, 0) },
		FrequenciesAt:   func(n int) []float64 { return RoPEFrequencies(s, n) },
		AttentionFactor: RoPEAttentionFactor(s),
	}
}

func parse(t *testing.T, yaml string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	yarnYAML = `name: yarnx
encoding: rope
head_dim: 32
rotary_dim: 32
layout: interleaved
base: 10000
max_position: 512
scaling:
  type: yarn
  factor: 16
  original_max_position: 1024
`
	halfYAML = `name: halfx
encoding: rope
head_dim: 64
rotary_dim: 48
layout: half
max_position: 4096
`
)

// expectFail asserts the report has failures, one of which contains want.
func expectFail(t *testing.T, r *Report, want string) {
	t.Helper()
	if r.OK() {
		t.Fatalf("%s: harness passed a wrong kernel set (cases %d, max ratio %g)", r.Spec, r.Cases, r.MaxRatio)
	}
	for _, f := range r.Failures {
		if strings.Contains(f, want) {
			t.Logf("%d failures, e.g. %s", r.failureCount(), f)
			return
		}
	}
	t.Errorf("no failure mentions %q; first: %s", want, r.Failures[0])
}

// expectPass asserts the report is clean.
func expectPass(t *testing.T, r *Report) {
	t.Helper()
	for i, f := range r.Failures {
		if i == 10 {
			break
		}
		t.Error(f)
	}
	if r.MaxRatio > 1 || r.Cases == 0 {
		t.Errorf("max ratio %g over %d cases", r.MaxRatio, r.Cases)
	}
}

func TestHarnessRoPECorrect(t *testing.T) {
	cases, err := GoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	specs := []*spec.Spec{parse(t, yarnYAML), parse(t, halfYAML)}
	for _, c := range cases {
		if c.Kind == "rope" && (strings.Contains(c.Name, "dynamic") || strings.Contains(c.Name, "longrope") || c.Name == "grope_half_partial") {
			specs = append(specs, parse(t, c.SpecYAML))
		}
	}
	for _, s := range specs {
		t.Run(s.Name, func(t *testing.T) {
			k := ropeKernels(s, nil)
			var gc *GoldenCase
			for _, c := range cases {
				if c.Name == s.Name {
					gc = c
				}
			}
			golden := 0
			apply := k.Apply
			k.Apply = func(x []float32, pos []int32, heads int) {
				if gc != nil && fmt.Sprint(pos) == fmt.Sprint(gc.Pos) && heads == gc.Heads {
					golden++
				}
				apply(x, pos, heads)
			}
			r := RunRoPE(s, k)
			expectPass(t, r)
			if gc != nil && golden != 1 {
				t.Errorf("golden case ran %d times", golden)
			}
			t.Logf("%d cases, max ratio %.3g at %s", r.Cases, r.MaxRatio, r.Worst)
		})
	}
}

// rotateWith returns a rope "apply" that forms the angle of position p and
// frequency ω with angle(p, ω).
func rotateWith(s *spec.Spec, angle func(p int32, om float64) float64) func([]float32, []int32, int, bool) []float64 {
	pa, pb := RoPEPairs(s)
	a := RoPEAttentionFactor(s)
	return func(x []float32, pos []int32, heads int, inverse bool) []float64 {
		w := RoPEFrequencies(s, CallSeqLen(pos))
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = float64(v)
		}
		for t, p := range pos {
			for h := range heads {
				o := (t*heads + h) * s.HeadDim
				for i, om := range w {
					sn, c := math.Sincos(angle(p, om))
					if inverse {
						sn = -sn
					}
					x0, x1 := y[o+pa[i]], y[o+pb[i]]
					y[o+pa[i]], y[o+pb[i]] = a*(x0*c-x1*sn), a*(x1*c+x0*sn)
				}
			}
		}
		return y
	}
}

func TestHarnessRoPEWrong(t *testing.T) {
	half := parse(t, halfYAML)
	yarn := parse(t, yarnYAML)
	t.Run("swapped layout", func(t *testing.T) {
		other := *half
		other.Layout = spec.LayoutInterleaved
		expectFail(t, RunRoPE(half, ropeKernels(&other, nil)), "Apply")
	})
	t.Run("missing attention factor", func(t *testing.T) {
		noA := *yarn
		sc := *yarn.Scaling
		sc.HasAttentionFactor, sc.AttentionFactor = true, 1
		noA.Scaling = &sc
		k := ropeKernels(&noA, nil)
		k.AttentionFactor = RoPEAttentionFactor(yarn) // the constant is right, the kernels are not
		expectFail(t, RunRoPE(yarn, k), "Apply")
	})
	t.Run("fp32 angle", func(t *testing.T) {
		// p·ω formed as a float32 product.
		k := ropeKernels(half, rotateWith(half, func(p int32, om float64) float64 {
			return float64(float32(p) * float32(om))
		}))
		r := RunRoPE(half, k)
		expectFail(t, r, "Apply")
		if r.MaxRatio < 1e3 {
			t.Errorf("max ratio %g: fp32 angles should be far off", r.MaxRatio)
		}
	})
	t.Run("fp32 position", func(t *testing.T) {
		// float32(p)·ω in float64: exact while |p| < 2^24, off by up to
		// 64·ω radians near 2^31 — only the large positions may fail.
		k := ropeKernels(half, rotateWith(half, func(p int32, om float64) float64 {
			return float64(float32(p)) * om
		}))
		r := RunRoPE(half, k)
		expectFail(t, r, "2^31")
		for _, f := range r.Failures {
			if !strings.Contains(f, "2^31") && !strings.Contains(f, "mixed") && !strings.Contains(f, "pos<0") {
				t.Errorf("failure at small positions: %s", f)
			}
		}
	})
	t.Run("no length check", func(t *testing.T) {
		k := ropeKernels(half, nil)
		k.Apply = func(x []float32, pos []int32, heads int) {
			n := len(x) / (heads * half.HeadDim)
			store(x[:n*heads*half.HeadDim], RoPEApply(half, x[:n*heads*half.HeadDim], pos[:n], heads, false))
		}
		expectFail(t, RunRoPE(half, k), "no panic on a length mismatch")
	})
	t.Run("writes past the end", func(t *testing.T) {
		k := ropeKernels(half, nil)
		apply := k.Apply
		k.Apply = func(x []float32, pos []int32, heads int) {
			apply(x, pos, heads)
			unsafe.Slice(unsafe.SliceData(x), len(x)+1)[len(x)] = 0 // the harness pads every slice
		}
		expectFail(t, RunRoPE(half, k), "out of bounds")
	})
	t.Run("touches dims beyond rotary_dim", func(t *testing.T) {
		k := ropeKernels(half, nil)
		apply := k.Apply
		k.Apply = func(x []float32, pos []int32, heads int) {
			apply(x, pos, heads)
			for i := half.RotaryDim; i < len(x); i += half.HeadDim {
				x[i] = math.Nextafter32(x[i], float32(math.Inf(1)))
			}
		}
		expectFail(t, RunRoPE(half, k), "untouched")
	})
}

// biasKernels builds a float64-based kernel set for an alibi or rpe_bias
// spec; slopes overrides the ALiBi slopes and mask the causal mask.
func biasKernels(s *spec.Spec, slopes []float64, noMask bool) BiasKernels {
	bias := func(table []float32, lq, lk, qo int) []float64 {
		if s.Encoding == spec.RPEBias {
			mustLen("table", len(table), s.Heads*s.NumBuckets())
			return RPEBias(s, table, lq, lk, qo)
		}
		sc := *s
		if slopes != nil {
			sc.Slopes = slopes
		}
		return ALiBiBias(&sc, lq, lk, qo)
	}
	mask := func(qo int) Mask {
		if noMask {
			return nil
		}
		return BiasMask(s, qo)
	}
	add := func(scores, table []float32, lq, lk, qo int) {
		mustLen("scores", len(scores), s.Heads*lq*lk)
		store(scores, AddBias(scores, bias(table, lq, lk, qo), mask(qo), s.Heads, lq, lk))
	}
	soft := func(scores, table []float32, lq, lk, qo int, scale float32) {
		mustLen("scores", len(scores), s.Heads*lq*lk)
		store(scores, Softmax(scores, bias(table, lq, lk, qo), mask(qo), s.Heads, lq, lk, float64(scale)))
	}
	dst := func(d, table []float32, lq, lk, qo int) {
		mustLen("dst", len(d), s.Heads*lq*lk)
		store(d, bias(table, lq, lk, qo))
	}
	return BiasKernels{
		AddBias: func(sc []float32, lq, lk, qo int) { add(sc, nil, lq, lk, qo) },
		Softmax: func(sc []float32, lq, lk, qo int, scale float32) { soft(sc, nil, lq, lk, qo, scale) },
		Bias:    func(d []float32, lq, lk, qo int) { dst(d, nil, lq, lk, qo) },

		RPEAddBias: add, RPESoftmax: soft, RPEBias: dst,
		Bucket: func(rel int) int { return RPEBucket(s, rel) },
	}
}

func TestHarnessBiasCorrect(t *testing.T) {
	cases, err := GoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	specs := []*spec.Spec{
		parse(t, "name: alibi12\nencoding: alibi\nheads: 12\n"),
		parse(t, "name: alibi_nc\nencoding: alibi\nheads: 3\ncausal: false\nmax_bias: 4\n"),
	}
	for _, c := range cases {
		if c.Kind == "alibi" || c.Kind == "rpe_bias" {
			specs = append(specs, parse(t, c.SpecYAML))
		}
	}
	for _, s := range specs {
		t.Run(s.Name, func(t *testing.T) {
			r := RunBias(s, biasKernels(s, nil, false))
			expectPass(t, r)
			t.Logf("%d cases, max ratio %.3g at %s", r.Cases, r.MaxRatio, r.Worst)
		})
	}
}

func TestHarnessBiasWrong(t *testing.T) {
	alibi := parse(t, "name: alibi5\nencoding: alibi\nheads: 5\n")
	t.Run("off-by-one slope head", func(t *testing.T) {
		sl := ALiBiSlopes(alibi)
		shifted := append(sl[1:], sl[0])
		expectFail(t, RunBias(alibi, biasKernels(alibi, shifted, false)), "Bias lq=")
	})
	t.Run("AddBias without mask", func(t *testing.T) {
		k := biasKernels(alibi, nil, false)
		k.AddBias = biasKernels(alibi, nil, true).AddBias
		expectFail(t, RunBias(alibi, k), "want −Inf (masked)")
	})
	t.Run("Softmax without mask", func(t *testing.T) {
		k := biasKernels(alibi, nil, false)
		k.Softmax = biasKernels(alibi, nil, true).Softmax
		expectFail(t, RunBias(alibi, k), "want 0 (masked)")
	})
	t.Run("masked Bias", func(t *testing.T) {
		// Bias must stay unmasked (galibi6): −Inf where causal masks fails.
		k := biasKernels(alibi, nil, false)
		k.Bias = func(d []float32, lq, lk, qo int) {
			mustLen("dst", len(d), alibi.Heads*lq*lk)
			store(d, AddBias(make([]float32, len(d)), ALiBiBias(alibi, lq, lk, qo), CausalMask(qo), alibi.Heads, lq, lk))
		}
		expectFail(t, RunBias(alibi, k), "Bias")
	})
	t.Run("T5 direction swapped", func(t *testing.T) {
		t5 := parse(t, "name: t5\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 32\n  max_distance: 128\n")
		k := biasKernels(t5, nil, false)
		k.Bucket = func(rel int) int { return RPEBucket(t5, -rel) }
		expectFail(t, RunBias(t5, k), "Bucket(")
	})
	t.Run("table too short accepted", func(t *testing.T) {
		clamp := parse(t, "name: c\nencoding: rpe_bias\nheads: 3\nr_max: 4\n")
		k := biasKernels(clamp, nil, false)
		k.RPEBias = func(d, table []float32, lq, lk, qo int) {
			mustLen("dst", len(d), clamp.Heads*lq*lk)
			full := make([]float32, clamp.Heads*clamp.NumBuckets())
			copy(full, table)
			store(d, RPEBias(clamp, full, lq, lk, qo))
		}
		expectFail(t, RunBias(clamp, k), "Bias with table one element short: no panic")
	})
}

// absKernels builds a float64-based kernel set for an absolute spec.
func absKernels(s *spec.Spec) AbsoluteKernels {
	d := s.DModel
	rows := func(table []float32, pos []int32) {
		for _, p := range pos {
			if p < 0 || (int(p)+1)*d > len(table) {
				panic("position outside the table")
			}
		}
	}
	k := AbsoluteKernels{
		LearnedAdd: func(x, table []float32, pos []int32) {
			mustLen("x", len(x), len(pos)*d)
			rows(table, pos)
			store(x, LearnedAdd(s, x, table, pos))
		},
		MixtureAdd: func(x, table []float32, pos []int32, alpha float32) {
			mustLen("x", len(x), len(pos)*d)
			rows(table, pos)
			store(x, MixtureAdd(s, x, table, pos, alpha))
		},
	}
	if s.Encoding != spec.Learned {
		k.Add = func(x []float32, pos []int32) {
			mustLen("x", len(x), len(pos)*d)
			store(x, AbsoluteAdd(s, x, pos))
		}
		k.Encode = func(dst []float32, pos int) {
			mustLen("dst", len(dst), d)
			store(dst, AbsoluteEncoding(s, pos))
		}
	}
	return k
}

func TestHarnessAbsolute(t *testing.T) {
	specs := map[string]*spec.Spec{}
	for _, y := range []string{
		"name: gsin\nencoding: sinusoidal\nd_model: 32\nmax_len: 5000\nbase: 10000\n",
		"name: sin_small\nencoding: sinusoidal\nd_model: 6\nmax_len: 100\n",
		"name: alg\nencoding: algebraic\nd_model: 24\nmax_len: 512\n",
		"name: bin\nencoding: binary\nd_model: 20\nmax_len: 1000\n",
		"name: learned\nencoding: learned\nd_model: 16\nmax_len: 70\n",
		"name: mix\nencoding: mixture\nd_model: 18\nmax_len: 50\n",
	} {
		s := parse(t, y)
		specs[s.Name] = s
	}
	for name, s := range specs {
		t.Run(name, func(t *testing.T) {
			r := RunAbsolute(s, absKernels(s))
			expectPass(t, r)
			t.Logf("%d cases, max ratio %.3g at %s", r.Cases, r.MaxRatio, r.Worst)
		})
	}
	t.Run("fp32 position", func(t *testing.T) {
		s := specs["gsin"]
		k := absKernels(s)
		k.Add = func(x []float32, pos []int32) {
			mustLen("x", len(x), len(pos)*s.DModel)
			for t, p := range pos {
				for i := 0; i < s.DModel; i += 2 {
					a := float32(p) / float32(math.Pow(10000, float64(i)/float64(s.DModel)))
					sn, c := math.Sincos(float64(a))
					x[t*s.DModel+i] += float32(sn)
					x[t*s.DModel+i+1] += float32(c)
				}
			}
		}
		expectFail(t, RunAbsolute(s, k), "Add tokens=")
	})
	t.Run("mixture alpha swapped", func(t *testing.T) {
		s := specs["mix"]
		k := absKernels(s)
		k.MixtureAdd = func(x, table []float32, pos []int32, alpha float32) {
			mustLen("x", len(x), len(pos)*s.DModel)
			store(x, MixtureAdd(s, x, table, pos, 1-alpha))
		}
		expectFail(t, RunAbsolute(s, k), "alpha=0")
	})
	t.Run("binary without two's complement", func(t *testing.T) {
		s := specs["bin"]
		k := absKernels(s)
		k.Encode = func(dst []float32, pos int) {
			mustLen("dst", len(dst), s.DModel)
			store(dst, AbsoluteEncoding(s, max(pos, 0)))
		}
		expectFail(t, RunAbsolute(s, k), "Encode pos=-")
	})
	t.Run("learned Add writes into the table", func(t *testing.T) {
		s := specs["learned"]
		k := absKernels(s)
		add := k.LearnedAdd
		k.LearnedAdd = func(x, table []float32, pos []int32) {
			add(x, table, pos)
			table[len(table)-1] = 0
		}
		expectFail(t, RunAbsolute(s, k), "table modified")
	})
	t.Run("learned Add writes past the table", func(t *testing.T) {
		s := specs["learned"]
		k := absKernels(s)
		add := k.LearnedAdd
		k.LearnedAdd = func(x, table []float32, pos []int32) {
			add(x, table, pos)
			unsafe.Slice(unsafe.SliceData(table), len(table)+1)[len(table)] = 0 // the harness pads every slice
		}
		expectFail(t, RunAbsolute(s, k), "wrote table out of bounds")
	})
}

func TestEmit(t *testing.T) {
	r := &Report{Spec: "x", Target: "go", Cases: 3, MaxRatio: math.Inf(1), Worst: "w"}
	ft := &fakeTB{TB: t}
	Emit(ft, r) // prints a POSENC-ROW line with max_ratio 1e300
	if ft.errors != 0 {
		t.Errorf("%d errors for a clean report", ft.errors)
	}
	for i := range 25 {
		r.addFailure(fmt.Sprint("failure ", i))
	}
	Emit(ft, r)
	if ft.errors != 21 { // 20 listed + the "more" line
		t.Errorf("Emit made %d t.Errorf calls, want 21", ft.errors)
	}
}

// fakeTB counts Errorf calls instead of failing the test.
type fakeTB struct {
	testing.TB
	errors int
}

func (f *fakeTB) Errorf(string, ...any) { f.errors++ }
func (f *fakeTB) Helper()               {}

// TestFailFastStopsAfterTheFirstFailure checks POSENC_FAILFAST's stop: a
// report with no failure begins cases as usual, one with a failure panics
// at the next case, naming that failure.
func TestFailFastStopsAfterTheFirstFailure(t *testing.T) {
	defer func(v bool) { failFast = v }(failFast)
	failFast = true
	r := &Report{Spec: "s"}
	r.begin("one").near("x", 0, 1, 1, 0.5)
	c := r.begin("two")
	c.near("x", 3, 2, 1, 0.5)
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, "two: x[3] = 2, want 1") {
			t.Errorf("panic %q does not name the first failure", msg)
		}
		if r.Cases != 2 {
			t.Errorf("%d cases begun, want 2", r.Cases)
		}
	}()
	r.begin("three")
	t.Errorf("a report with a failure began another case")
}
