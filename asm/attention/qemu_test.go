package attention

import (
	"fmt"
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/asm/internal/asmtest"
	"github.com/posenc/posenc/internal/emit"
)

// qemuHeadDims are the head dimensions TestKernelsQEMU generates: every
// tail (one float, two, both), 1..3 vectors after the blocks, the zoo's 64,
// 96 (scoresKV's largest row held whole), 100 (streamed by scoresKV, held
// by valuesKV), 112 (streamed by both), 128 and 256.
var qemuHeadDims = []int{1, 3, 6, 37, 64, 96, 100, 112, 128, 256}

// TestKernelsQEMU runs the NEON scoresKV, valuesKV and maxRow under
// qemu-aarch64-static for each of qemuHeadDims: scoresKV against a float64
// dot product, valuesKV bit for bit against a loop of correctly rounded
// float32 fused multiply-adds in key order; inputs end at a PROT_NONE page,
// the floats between rows and the values of zero-weight (padding) keys are
// NaN, and every output float outside the written rows must keep its
// sentinel.
func TestKernelsQEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, d := range qemuHeadDims {
		pkg := fmt.Sprintf("attn%d", d)
		files, err := arm64.Files(pkg, "test/"+pkg+".yaml", NEON(d))
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, asmtest.QEMUCase{Package: pkg, Files: files,
			Variants: asmtest.QEMUVariants(pkg, abi.ScoresKV, abi.ValuesKV, abi.MaxRow),
			Test:     strings.NewReplacer("PKG", pkg, "HEADDIM", fmt.Sprint(d)).Replace(kvTest)})
	}
	out := asmtest.RunQEMU(t, cs)
	asmtest.LogMatches(t, out, true, `scoresKV HeadDim \d+: .*`)
}

// TestNEONFiles checks the generated files: declarations, registration,
// every WORD against go tool objdump, and determinism.
func TestNEONFiles(t *testing.T) {
	for _, d := range []int{3, 64, 100, 256} {
		gen := func() ([]emit.File, error) { return arm64.Files("attn", "a.yaml", NEON(d)) }
		files, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		asmtest.CheckNEON(t, files, "attn", "a.yaml", []string{
			"func scoresKVNEON(s, q, k []float32, nk, nb, groups, grp, kStride, sStride int)",
			"func valuesKVNEON(acc, p, v, alpha []float32, nk, nb, groups, grp, vStride, pStride int)",
			"func maxRowNEON(row, m []float32)",
		}, "kernels{scoresKV: scoresKVNEON, valuesKV: valuesKVNEON, maxRow: maxRowNEON}")
		if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
			t.Errorf("HeadDim %d: no WORD lines", d)
		}
		asmtest.Deterministic(t, fmt.Sprint("HeadDim ", d), gen)
	}
}

// kvTest is the test of one generated package (PKG, HeadDim HEADDIM).
const kvTest = kvCommon + kvF32Test

// kvCommon is the start of a generated package's test: the header and the
// helpers the float32 and 16-bit tests share.
const kvCommon = `package PKG

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

const headDim = HEADDIM

// pageEnd returns a copy of src whose last element ends where a PROT_NONE
// page begins (qemu-user enforces page protections: a read past it faults).
func pageEnd[T float32 | uint16](t *testing.T, src []T) []T {
	t.Helper()
	if len(src) == 0 {
		return nil
	}
	page := syscall.Getpagesize()
	size := int(unsafe.Sizeof(src[0])) * len(src)
	pages := (size + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (pages+1)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[pages*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	s := unsafe.Slice((*T)(unsafe.Pointer(&mem[pages*page-size])), len(src))
	copy(s, src)
	return s
}

// kvShape is one call: nk keys, a block of nb queries × groups KV groups ×
// grp heads, the key rows gap floats longer than groups·headDim and the
// output rows sGap floats longer than nk.
type kvShape struct{ nk, nb, groups, grp, gap, sGap int }

func kvShapes() []kvShape {
	var out []kvShape
	i := 0
	for _, nk := range []int{0, 1, 5, 64} {
		for _, nb := range []int{1, 3} {
			for _, groups := range []int{1, 2} {
				for _, grp := range []int{1, 4} {
					out = append(out, kvShape{nk, nb, groups, grp, []int{0, 3, headDim}[i%3], []int{0, 1, 7}[i%3]})
					i++
				}
			}
		}
	}
	return append(out, kvShape{3, 0, 2, 2, 0, 0}, kvShape{3, 2, 0, 2, 0, 0}, kvShape{3, 2, 2, 0, 0, 0})
}

func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// fma32 is the correctly rounded float32 a·b + c: the product is exact in
// float64, and the float64 sum s rounds to float32 correctly unless it lies
// exactly halfway between two float32 values, where the sign of the sum's
// exact remainder (Knuth's TwoSum) picks the side.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bv := s - p
	rem := (p - (s - bv)) + (float64(c) - bv)
	f := float32(s)
	if rem == 0 || float64(f) == s || math.IsInf(s, 0) || math.IsNaN(s) {
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

`

// kvF32Test tests scoresKV, valuesKV and maxRow over float32 rows.
const kvF32Test = `
// keyRows returns the keys' rows of a shape: nk rows of groups·headDim
// normal floats, kStride floats apart, NaN between them.
func keyRows(r *rand.Rand, c kvShape) (x []float32, stride int) {
	stride = c.groups*headDim + c.gap
	if c.nk == 0 || c.groups == 0 {
		return nil, stride
	}
	x = make([]float32, (c.nk-1)*stride+c.groups*headDim)
	for i := range x {
		if i%stride < c.groups*headDim {
			x[i] = float32(r.NormFloat64())
		} else {
			x[i] = float32(math.NaN())
		}
	}
	return x, stride
}

func TestScoresKV(t *testing.T) {
	scores := registered["neon"].scoresKV
	r := rand.New(rand.NewPCG(1, headDim))
	worst := 0.0
	for _, c := range kvShapes() {
		rows := c.nb * c.groups * c.grp
		k, kStride := keyRows(r, c)
		q0 := make([]float32, rows*headDim)
		for i := range q0 {
			q0[i] = float32(r.NormFloat64())
		}
		k0 := append([]float32(nil), k...)
		q, k := pageEnd(t, q0), pageEnd(t, k)
		sStride := c.nk + c.sGap
		s, buf := guarded(max(rows*sStride, 1))
		scores(s, q, k, c.nk, c.nb, c.groups, c.grp, kStride, sStride)
		if !sameBits(q, q0) || !sameBits(k, k0) {
			t.Fatalf("%+v: q or k written", c)
		}
		for i, got := range buf {
			in := i - guard
			row, j := in/max(sStride, 1), in%max(sStride, 1)
			if in >= 0 && in < rows*sStride && j < c.nk {
				gi := row / c.grp % c.groups
				var dot, mag float64
				for x := 0; x < headDim; x++ {
					a, b := float64(q[row*headDim+x]), float64(k[j*kStride+gi*headDim+x])
					dot += a * b
					mag += math.Abs(a * b)
				}
				bound := float64(headDim+2) * 0x1p-24 * mag
				e := math.Abs(float64(s[in]) - dot)
				if !(e <= bound) {
					t.Fatalf("%+v: s[%d·%d + %d] = %v, want %v (bound %.3g)", c, row, sStride, j, s[in], dot, bound)
				}
				if bound > 0 {
					worst = max(worst, e/bound)
				}
			} else if math.Float32bits(got) != sentinel {
				t.Fatalf("%+v: float %d outside the scores written (%v)", c, in, got)
			}
		}
	}
	t.Logf("scoresKV HeadDim %d: max error %.3g of the bound (HeadDim+2)·2^-24·Σ|q·k|", headDim, worst)
}

func TestValuesKV(t *testing.T) {
	values := registered["neon"].valuesKV
	r := rand.New(rand.NewPCG(2, headDim))
	nan := float32(math.NaN())
	for _, c := range kvShapes() {
		rows := c.nb * c.groups * c.grp
		v, vStride := keyRows(r, c)
		pStride := c.nk + c.sGap
		p := make([]float32, rows*pStride)
		for i := range p {
			switch j := i % max(pStride, 1); {
			case j >= c.nk:
				p[i] = nan // between the rows: never read
			case r.IntN(6) == 0:
				p[i] = 0 // a masked key of this row
			case r.IntN(8) == 0:
				p[i] = float32(math.Copysign(0, -1)) // not +0: added, as −0·v
			default:
				p[i] = float32(r.Float64())
			}
		}
		// Every third key is padding: weight +0 in every row, NaN values.
		for j := 0; j < c.nk; j += 3 {
			for row := 0; row < rows; row++ {
				p[row*pStride+j] = 0
			}
			for x := 0; x < c.groups*headDim; x++ {
				v[j*vStride+x] = nan
			}
		}
		acc, buf := guarded(rows * headDim)
		for i := range acc {
			acc[i] = float32(r.NormFloat64())
		}
		// Each row's rescale factor: 1 (no new maximum), 0 or a fraction.
		alpha := make([]float32, rows)
		for i := range alpha {
			switch r.IntN(3) {
			case 0:
				alpha[i] = 1
			case 1:
				alpha[i] = float32(r.Float64())
			}
		}
		want := append([]float32(nil), acc...)
		for i := range want {
			want[i] *= alpha[i/headDim]
		}
		for row := 0; row < rows; row++ {
			gi := row / c.grp % c.groups
			for j := 0; j < c.nk; j++ {
				w := p[row*pStride+j]
				if math.Float32bits(w) == 0 {
					continue
				}
				for x := 0; x < headDim; x++ {
					a := &want[row*headDim+x]
					*a = fma32(w, v[j*vStride+gi*headDim+x], *a)
				}
			}
		}
		p0, v0 := p, append([]float32(nil), v...)
		p, v, alpha = pageEnd(t, p), pageEnd(t, v), pageEnd(t, alpha)
		values(acc, p, v, alpha, c.nk, c.nb, c.groups, c.grp, vStride, pStride)
		if !sameBits(p, p0) || !sameBits(v, v0) {
			t.Fatalf("%+v: p or v written", c)
		}
		checkGuards(t, "acc", buf)
		for i := range acc {
			if math.Float32bits(acc[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: acc[%d·%d + %d] = %v, want %v", c, i/headDim, headDim, i%headDim, acc[i], want[i])
			}
		}
	}
}

func TestMaxRow(t *testing.T) {
	maxRow := registered["neon"].maxRow
	r := rand.New(rand.NewPCG(3, headDim))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for n := 0; n <= 41; n++ {
		for trial := 0; trial < 6; trial++ {
			row := make([]float32, n)
			for i := range row {
				row[i] = float32(-4 - r.Float64()) // all negative: a zero lane would win
			}
			m0 := float32(math.Inf(-1))
			switch {
			case trial == 1 && n > 0:
				row[r.IntN(n)] = nan // NaN anywhere, numbers after it
			case trial == 2:
				m0 = nan
			case trial == 3 && n > 0:
				row[n-1] = inf
			case trial == 4:
				m0 = -2
			}
			want := m0
			for _, x := range row {
				want = max(want, x)
			}
			m := pageEnd(t, []float32{m0})
			maxRow(pageEnd(t, row), m)
			if got := m[0]; !(got == want || math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
				t.Fatalf("len %d trial %d: maxRow = %v, want %v", n, trial, got, want)
			}
		}
	}
}
`
