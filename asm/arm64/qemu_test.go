package arm64

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/posenc/posenc/spec"
)

var expStride = flag.Int("expstride", 997, "TestKernelsQEMU checks the NEON expf at every expstride-th float32 bit pattern (1: all 2^32, about 15 minutes under qemu; raise -timeout)")

// moduleRoot returns the posenc module root (two levels above this package).
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(wd))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above %s: %v", wd, err)
	}
	return root
}

// needQEMU returns the qemu-aarch64-static path, skipping the test when it
// is missing unless POSENC_REQUIRE_QEMU is set (CI), where it fails.
func needQEMU(t *testing.T) string {
	t.Helper()
	if runtime.GOARCH == "arm64" {
		return "" // native: no emulator needed
	}
	q, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		if os.Getenv("POSENC_REQUIRE_QEMU") != "" {
			t.Fatalf("qemu-aarch64-static not found and POSENC_REQUIRE_QEMU is set")
		}
		t.Skip("qemu-aarch64-static not installed")
	}
	return q
}

// harnessVariants is the hand-written stand-in for the generated
// <name>_variants.go: the kernels type and registerVariant.
const harnessVariants = `package %s

type kernels struct {
	rotate     func(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)
	addRow     func(dst, src []float32)
	softmaxRow func(row, bias []float32, scale float32)
	addRows    func(x []float32, table []float32, idx []int32)
}

var registered = map[string]kernels{}

func registerVariant(name string, available bool, k kernels) {
	if !available {
		panic("variant " + name + " not available")
	}
	registered[name] = k
}
`

// harnessCommon holds helpers shared by every generated test file.
const harnessCommon = `package %s

import (
	"math"
	"testing"
)

const guard = 7

var sentinel = math.Float32bits(-12345.678)

// guarded returns a slice of n elements with guard elements on both sides
// and the full buffer.
func guarded(n int) (inner, buf []float32) {
	buf = make([]float32, n+2*guard)
	for i := range buf {
		buf[i] = math.Float32frombits(sentinel)
	}
	return buf[guard : guard+n : guard+n], buf
}

func checkGuards(t *testing.T, what string, buf []float32) {
	t.Helper()
	n := len(buf) - 2*guard
	for i := 0; i < guard; i++ {
		if math.Float32bits(buf[i]) != sentinel || math.Float32bits(buf[guard+n+i]) != sentinel {
			t.Fatalf("%%s: guard element overwritten", what)
		}
	}
}

var lengths = []int{0, 1, 3, 17, 31, 33, 512}
`

// ropeTest checks rotate against a float64 loop.
const ropeTest = `package %s

import (
	"math"
	"math/rand/v2"
	"testing"
)

const headDim, rotaryDim, interleaved = %d, %d, %v

func rowLen() int {
	if interleaved {
		return 2 * rotaryDim
	}
	return rotaryDim
}

func TestRotate(t *testing.T) {
	rot := registered["neon"].rotate
	rng := rand.New(rand.NewPCG(1, 2))
	const rows = 9
	n := rotaryDim / 2
	table := make([]float32, rows*rowLen())
	for r := 0; r < rows; r++ {
		row := table[r*rowLen() : (r+1)*rowLen()]
		for i := 0; i < n; i++ {
			ang, a := rng.Float64()*2*math.Pi, 0.5+rng.Float64()
			c, s := float32(a*math.Cos(ang)), float32(a*math.Sin(ang))
			if interleaved {
				row[2*i], row[2*i+1], row[rotaryDim+2*i], row[rotaryDim+2*i+1] = c, c, s, s
			} else {
				row[i], row[n+i] = c, s
			}
		}
	}
	tableCopy := append([]float32(nil), table...)
	for _, tokens := range lengths {
		for _, hh := range [][2]int{{1, 0}, {3, 2}, {0, 2}, {2, 5}} {
			if tokens == 512 && hh[0]+hh[1] > 3 {
				continue
			}
			for _, sign := range []float32{1, -1} {
				idx := make([]int32, tokens)
				for i := range idx {
					idx[i] = int32(rng.IntN(rows))
				}
				q, qbuf := guarded(tokens * hh[0] * headDim)
				k, kbuf := guarded(tokens * hh[1] * headDim)
				for _, x := range [][]float32{q, k} {
					for i := range x {
						x[i] = float32(rng.NormFloat64() * 3)
					}
				}
				q0, k0 := append([]float32(nil), q...), append([]float32(nil), k...)
				rot(q, hh[0], k, hh[1], table, idx, sign)
				checkGuards(t, "q", qbuf)
				checkGuards(t, "k", kbuf)
				for _, c := range []struct {
					got, in []float32
					heads   int
				}{{q, q0, hh[0]}, {k, k0, hh[1]}} {
					for tk := 0; tk < tokens; tk++ {
						row := table[int(idx[tk])*rowLen():]
						for h := 0; h < c.heads; h++ {
							off := (tk*c.heads + h) * headDim
							x, y := c.in[off:off+headDim], c.got[off:off+headDim]
							for i := 0; i < n; i++ {
								i0, i1, cs, sn := i, i+n, row[i], row[n+i]
								if interleaved {
									i0, i1, cs, sn = 2*i, 2*i+1, row[2*i], row[rotaryDim+2*i]
								}
								x0, x1 := float64(x[i0]), float64(x[i1])
								cc, ss := float64(cs), float64(sign)*float64(sn)
								w0, w1 := x0*cc-x1*ss, x1*cc+x0*ss
								tol := math.Ldexp(math.Abs(x0*cc)+math.Abs(x1*ss)+math.Abs(x1*cc)+math.Abs(x0*ss), -22) + 1e-30
								if math.Abs(float64(y[i0])-w0) > tol || math.Abs(float64(y[i1])-w1) > tol {
									t.Fatalf("tokens %%d heads %%v sign %%v t %%d h %%d pair %%d: got (%%g, %%g) want (%%g, %%g)",
										tokens, hh, sign, tk, h, i, y[i0], y[i1], w0, w1)
								}
							}
							for i := rotaryDim; i < headDim; i++ {
								if math.Float32bits(y[i]) != math.Float32bits(x[i]) {
									t.Fatalf("tokens %%d dim %%d >= RotaryDim changed", tokens, i)
								}
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
}
`

// biasTest checks addRow, softmaxRow and the vector expf. Its arguments:
// package name, the exp clamp (lo, hi), expMaxULP and the exp sweep's stride.
const biasTest = `package %s

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

const (
	expLo, expHi = %v, %v // the input range of the vector expf
	expMaxULP    = %v
	expStride    = %d
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
				t.Fatalf("len %%d [%%d]: got %%g want %%g", n, i, d[i], d0[i]+s[i])
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
						t.Fatalf("len %%d scale %%g [%%d]: got %%g want %%g", n, scale, i, r[i], v[i]/sum)
					}
				}
			}
		}
	}
	t.Logf("softmax max abs error %%.3g", worst)
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
			t.Fatalf("[%%d] = %%g differs from [1] = %%g", i, r[i], r[1])
		}
	}
	t.Logf("long row: max relative error %%.3g (%%.2f·2^-24)", worst, worst*0x1p24)
	if worst > 4*0x1p-24 {
		t.Errorf("long row: relative error %%.3g > 4·2^-24", worst)
	}
}

func TestSoftmaxNaN(t *testing.T) {
	r := []float32{1, float32(math.NaN()), 2, 3, 4, 5}
	registered["neon"].softmaxRow(r, make([]float32, len(r)), 1)
	for i := range r {
		if !math.IsNaN(float64(r[i])) {
			t.Fatalf("[%%d] = %%g, want NaN", i, r[i])
		}
	}
}

// ulpError is |got − exp(x)| in float32 ulps of exp(x) (the spacing of
// float32 numbers at exp(x), 2^-149 for subnormal results), or 0 when got is
// the correctly rounded result; +Inf for a wrong infinity or NaN. Inputs
// above expHi must give exp(expHi) or better, and results below FLT_MIN may
// be off by up to 2^−126 (expLo is above the subnormal range), which counts
// as 0 ulp. As asm/amd64's ulpError.
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

// avx2Exp is asm/amd64's AVX2 exp, operation by operation: clamp, t =
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
			t.Fatalf("exp(%%g) = %%g, AVX2's sequence gives %%g", x, dst[i], want)
		}
	}
	t.Logf("%%d inputs, %%d differ from AVX2's sequence (all below 2^-100)", len(src), differ)
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
				t.Fatalf("exp(%%g) = %%g, want %%g (%%.3g ulp)", x, dst[i], math.Exp(float64(x)), e)
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
				t.Errorf("exp(%%g) = %%g, want %%g", s.x, got, s.want)
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
	fmt.Printf("POSENC-EXP-MAXULP %%.4f at %%g over %%d inputs (stride %%d)\n", worst, at, count, expStride)
	if worst > expMaxULP {
		t.Errorf("max error %%.4f ulp at %%g, want <= %%v", worst, at, expMaxULP)
	}
}
`

// absTest checks addRows.
const absTest = `package %s

import (
	"math/rand/v2"
	"testing"
)

const dModel = %d

func TestAddRows(t *testing.T) {
	add := registered["neon"].addRows
	rng := rand.New(rand.NewPCG(7, 8))
	const rows = 11
	table := make([]float32, rows*dModel)
	for i := range table {
		table[i] = float32(rng.NormFloat64())
	}
	for _, tokens := range lengths {
		x, xbuf := guarded(tokens * dModel)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 5)
		}
		x0 := append([]float32(nil), x...)
		idx := make([]int32, tokens)
		for i := range idx {
			idx[i] = int32(rng.IntN(rows))
		}
		add(x, table, idx)
		checkGuards(t, "x", xbuf)
		for tk := 0; tk < tokens; tk++ {
			for i := 0; i < dModel; i++ {
				j := tk*dModel + i
				if want := x0[j] + table[int(idx[tk])*dModel+i]; x[j] != want {
					t.Fatalf("tokens %%d t %%d i %%d: got %%g want %%g", tokens, tk, i, x[j], want)
				}
			}
		}
	}
}
`

// qemuCase is one generated test package.
type qemuCase struct {
	p        Params
	test     string // the _test.go body
	variants string // the <name>_variants.go stand-in; "" for harnessVariants
	extra    string // more test helpers (rel_test.go), or ""
}

func qemuCases() []qemuCase {
	var cs []qemuCase
	rope := []struct {
		h, r   int
		layout string
	}{
		{128, 128, spec.LayoutHalf}, {128, 128, spec.LayoutInterleaved}, {64, 16, spec.LayoutHalf},
		{256, 64, spec.LayoutInterleaved}, {64, 48, spec.LayoutInterleaved}, {32, 24, spec.LayoutHalf},
		{6, 6, spec.LayoutInterleaved}, {10, 2, spec.LayoutHalf}, {200, 196, spec.LayoutHalf}, {256, 160, spec.LayoutInterleaved},
		{32, 30, spec.LayoutInterleaved}, {32, 32, spec.LayoutInterleaved}, {40, 34, spec.LayoutHalf},
	}
	for _, r := range rope {
		pkg := fmt.Sprintf("rope%s%d_%d", r.layout[:4], r.h, r.r)
		cs = append(cs, qemuCase{
			Params{Package: pkg, Source: "test/" + pkg + ".yaml", Encoding: spec.RoPE, HeadDim: r.h, RotaryDim: r.r, Layout: r.layout},
			fmt.Sprintf(ropeTest, pkg, r.h, r.r, r.layout == spec.LayoutInterleaved), "", ""})
	}
	cs = append(cs, qemuCase{
		Params{Package: "bias", Source: "test/bias.yaml", Encoding: spec.ALiBi, ExpTest: true},
		fmt.Sprintf(biasTest, "bias", expConsts[0].val, expConsts[1].val, expMaxULP, *expStride), "", ""})
	for _, d := range []int{512, 33, 7, 80} {
		pkg := fmt.Sprintf("abs%d", d)
		cs = append(cs, qemuCase{
			Params{Package: pkg, Source: "test/" + pkg + ".yaml", Encoding: spec.Sinusoidal, DModel: d},
			fmt.Sprintf(absTest, pkg, d), "", ""})
	}
	return append(cs, relQemuCases()...)
}

// TestKernelsQEMU generates one package per shape into a temporary module
// inside this module, vets it for arm64 (asmdecl) and runs its tests under
// qemu-aarch64-static.
func TestKernelsQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	qemu := needQEMU(t)
	dir, err := os.MkdirTemp(moduleRoot(t), ".arm64test-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	write := func(path, data string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "go.mod"), "module arm64test\n\ngo 1.26\n")
	for _, c := range qemuCases() {
		files, err := Files(c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.p.Package, err)
		}
		pd := filepath.Join(dir, c.p.Package)
		for _, f := range files {
			write(filepath.Join(pd, f.Name), string(f.Data))
		}
		variants := c.variants
		if variants == "" {
			variants = fmt.Sprintf(harnessVariants, c.p.Package)
		}
		write(filepath.Join(pd, c.p.Package+"_variants.go"), variants)
		if c.extra != "" {
			write(filepath.Join(pd, "rel_test.go"), c.extra)
		}
		write(filepath.Join(pd, "common_test.go"), fmt.Sprintf(harnessCommon, c.p.Package))
		write(filepath.Join(pd, c.p.Package+"_test.go"), c.test)
	}
	env := append(os.Environ(), "GOARCH=arm64", "GOWORK=off", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	run := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	run("vet", "./...")
	args := []string{"test", "-count=1", "-v", "-timeout=0"}
	if d, ok := t.Deadline(); ok {
		// The inner tests get what is left of ours (the exp sweep with
		// -expstride=1 needs more than go test's default 10 minutes).
		args[len(args)-1] = "-timeout=" + time.Until(d).Round(time.Second).String()
	}
	if qemu != "" {
		args = append(args, "-exec", qemu)
	}
	out := run(append(args, "./...")...)
	if os.Getenv("ARM64_DEBUG") != "" {
		t.Log(out)
	}
	if m := regexp.MustCompile(`POSENC-EXP-MAXULP .*`).FindString(out); m != "" {
		t.Log(m)
	} else {
		t.Errorf("exp ULP line missing from output:\n%s", out)
	}
	for _, re := range []string{`softmax max abs error .*`, `long row: .*`, `\d+ inputs, \d+ differ from AVX2.*`} {
		if m := regexp.MustCompile(re).FindString(out); m != "" {
			t.Log(m)
		}
	}
	for _, m := range regexp.MustCompile(`rel kernels: max error .*`).FindAllString(out, -1) {
		t.Log(m)
	}
	if n := strings.Count(out, "--- PASS"); n < len(qemuCases()) {
		t.Errorf("only %d tests passed:\n%s", n, out)
	}
}
