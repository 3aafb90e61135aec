package relative

import (
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
)

// TestKernelsQEMU runs the NEON rpe_full and xl kernels under
// qemu-aarch64-static: head dims with every tail (1, 2, 3 floats), several
// 16-float blocks, and heads long enough for the looped sweep (dot: more
// than 16 blocks) and the looped axpyRows chunks (more than 4 chunks of 96
// floats).
func TestKernelsQEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	fill := func(src, pkg string, d int) string {
		return strings.NewReplacer("PKG", pkg, "HEADDIM", fmt.Sprint(d)).Replace(src)
	}
	for _, c := range []struct {
		xl bool
		d  int
	}{
		{false, 1}, {false, 6}, {false, 7}, {false, 64}, {false, 72}, {false, 300}, {false, 1803},
		{true, 6}, {true, 64}, {true, 72}, {true, 274},
	} {
		pkg, test, ks := fmt.Sprintf("rpe%d", c.d), rpeTest, []abi.Kernel{abi.DotRows, abi.ScoresRow, abi.AxpyRows, abi.ScoresKV, abi.ValuesKV, abi.MaxRow, abi.ExpShift}
		if c.xl {
			pkg, test, ks = fmt.Sprintf("xl%d", c.d), xlTest, []abi.Kernel{abi.XLScoresRow, abi.ScoresKV, abi.ValuesKV, abi.MaxRow, abi.ExpShift}
		}
		files, err := NEON(pkg, "test/"+pkg+".yaml", Params{HeadDim: c.d, XL: c.xl})
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, asmtest.QEMUCase{Package: pkg, Files: files,
			Variants: asmtest.QEMUVariants(pkg, ks...),
			Test:     fill(test, pkg, c.d),
			Extra:    fill(relCommon, pkg, c.d)})
	}
	out := asmtest.RunQEMU(t, cs)
	asmtest.LogMatches(t, out, true, `rel kernels: max error .*`)
}

// relCommon holds the helpers of the rpe_full and xl kernel tests: inputs
// that end at a PROT_NONE page (qemu-user enforces page protections, so a
// read past a row faults) and the float64 dot product with its magnitude.
const relCommon = `package PKG

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

const headDim = HEADDIM

// relRowCounts are the row counts: below, at and around the block of four,
// and longer rows whose last block overlaps the one before.
var relRowCounts = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 33, 100}

// pageEnd returns a copy of src whose last element ends where a PROT_NONE
// page begins.
func pageEnd(t *testing.T, src []float32) []float32 {
	t.Helper()
	page := syscall.Getpagesize()
	size := 4 * len(src)
	pages := (size + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (pages+1)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[pages*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	s := unsafe.Slice((*float32)(unsafe.Pointer(&mem[pages*page-size])), len(src))
	copy(s, src)
	return s
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Float64()*4 - 2)
	}
	return v
}

// dot returns x·rows[j] in float64 and Σ|x_c·rows[j]_c|.
func dot(x, rows []float32, j int) (sum, mag float64) {
	for c := range headDim {
		p := float64(x[c]) * float64(rows[j*headDim+c])
		sum += p
		mag += math.Abs(p)
	}
	return sum, mag
}

// tol bounds the error of a float32 sum of n products of magnitude mag.
func tol(n int, mag float64) float64 { return 4*float64(n+4)*0x1p-24*mag + 1e-30 }

// output calls run on an n-element dst at a page end with guard elements
// before it, checks the guards and that the inputs equal their originals,
// and returns dst.
func output(t *testing.T, what string, n int, init []float32, run func(dst []float32), ins, orig [][]float32) []float32 {
	t.Helper()
	const guard = 8
	sentinel := math.Float32frombits(0x7fc0dead)
	buf := pageEnd(t, make([]float32, guard+n))
	for i := range buf {
		buf[i] = float32(math.NaN())
		if i < guard {
			buf[i] = sentinel
		}
	}
	copy(buf[guard:], init)
	run(buf[guard:])
	for i := range guard {
		if math.Float32bits(buf[i]) != math.Float32bits(sentinel) {
			t.Fatalf("%s: wrote %d elements before dst", what, guard-i)
		}
	}
	for k := range ins {
		for i := range ins[k] {
			if math.Float32bits(ins[k][i]) != math.Float32bits(orig[k][i]) {
				t.Fatalf("%s: input %d changed at %d", what, k, i)
			}
		}
	}
	return buf[guard:]
}
`

// rpeTest checks dotRows, scoresRow and axpyRows of an rpe_full package.
const rpeTest = `package PKG

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestRPEKernels(t *testing.T) {
	k := registered["neon"]
	rng := rand.New(rand.NewPCG(9, 10))
	worst := 0.0
	check := func(what string, got float32, want, mag float64, n int) {
		e := math.Abs(float64(got) - want)
		if !(e <= tol(n, mag)) {
			t.Fatalf("%s: got %v want %v", what, got, want)
		}
		worst = math.Max(worst, e/tol(n, mag))
	}
	for _, n := range relRowCounts {
		x0, m0, b0 := randVec(rng, headDim), randVec(rng, n*headDim), randVec(rng, n)
		x, m, bias := pageEnd(t, x0), pageEnd(t, m0), pageEnd(t, b0)
		ins, orig := [][]float32{x, m, bias}, [][]float32{x0, m0, b0}
		name := fmt.Sprintf("dotRows rows%d", n)
		got := output(t, name, n, nil, func(dst []float32) { k.dotRows(dst, x, m) }, ins, orig)
		for j := range n {
			w, g := dot(x0, m0, j)
			check(fmt.Sprintf("%s row %d", name, j), got[j], w, g, headDim)
		}
		const scale = float32(0.3)
		name = fmt.Sprintf("scoresRow rows%d", n)
		got = output(t, name, n, nil, func(dst []float32) { k.scoresRow(dst, x, m, bias, scale) }, ins, orig)
		for j := range n {
			w, g := dot(x0, m0, j)
			check(fmt.Sprintf("%s row %d", name, j), got[j], (w+float64(b0[j]))*float64(scale), (g+math.Abs(float64(b0[j])))*float64(scale), headDim+1)
		}

		w0, d0 := randVec(rng, n), randVec(rng, headDim)
		wv := pageEnd(t, w0)
		name = fmt.Sprintf("axpyRows rows%d", n)
		got = output(t, name, headDim, d0, func(dst []float32) { k.axpyRows(dst, wv, m) }, [][]float32{wv, m}, [][]float32{w0, m0})
		for c := range headDim {
			want, mag := float64(d0[c]), math.Abs(float64(d0[c]))
			for j := range n {
				p := float64(w0[j]) * float64(m0[j*headDim+c])
				want += p
				mag += math.Abs(p)
			}
			check(fmt.Sprintf("%s element %d", name, c), got[c], want, mag, n)
		}
	}
	t.Logf("rel kernels: max error %.3f of the bound", worst)
}
`

// xlTest checks the xl scoresRow.
const xlTest = `package PKG

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestXLKernels(t *testing.T) {
	k := registered["neon"]
	rng := rand.New(rand.NewPCG(11, 12))
	worst := 0.0
	for _, n := range relRowCounts {
		qu0, k0, qv0, r0 := randVec(rng, headDim), randVec(rng, n*headDim), randVec(rng, headDim), randVec(rng, n*headDim)
		qu, kk, qv, r := pageEnd(t, qu0), pageEnd(t, k0), pageEnd(t, qv0), pageEnd(t, r0)
		name := fmt.Sprintf("xl scoresRow rows%d", n)
		got := output(t, name, n, nil, func(dst []float32) { k.scoresRow(dst, qu, kk, qv, r) },
			[][]float32{qu, kk, qv, r}, [][]float32{qu0, k0, qv0, r0})
		for j := range n {
			a, ma := dot(qu0, k0, j)
			b, mb := dot(qv0, r0, j)
			e := math.Abs(float64(got[j]) - (a + b))
			if !(e <= tol(2*headDim, ma+mb)) {
				t.Fatalf("%s row %d: got %v want %v", name, j, got[j], a+b)
			}
			worst = math.Max(worst, e/tol(2*headDim, ma+mb))
		}
	}
	t.Logf("rel kernels: max error %.3f of the bound", worst)
}
`
