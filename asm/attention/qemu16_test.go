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

// qemu16HeadDims are the head dimensions TestKernels16QEMU generates for
// each 16-bit storage: every tail (one element, two, both; rope heads are
// even, the kernels take any), 1..3 vectors after the blocks, a row
// scoresKV16 holds whole (96) and one it streams (112), and Llama's 128.
var qemu16HeadDims = []int{1, 3, 6, 37, 96, 112, 128}

// TestKernels16QEMU runs the NEON scoresKV16 and valuesKV16 under
// qemu-aarch64-static for f16 and bf16 and each of qemu16HeadDims, as
// TestKernelsQEMU runs the float32 kernels: scoresKV16 against a float64
// dot product of the widened keys, valuesKV16 bit for bit against
// correctly rounded float32 fused multiply-adds of the widened values, in
// key order; the 16-bit rows end at a PROT_NONE page, the elements between
// rows and the values of padding keys are NaN, and every output float
// outside the written rows keeps its sentinel.
func TestKernels16QEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, st := range []string{"f16", "bf16"} {
		for _, d := range qemu16HeadDims {
			pkg := fmt.Sprintf("attn%s_%d", st, d)
			files, err := arm64.Files(pkg, "test/"+pkg+".yaml", NEONStorage16(d, st))
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			cs = append(cs, kv16Case(pkg, st, d, files, asmtest.QEMUVariants(pkg, kv16Kernels...)))
		}
	}
	out := asmtest.RunQEMU(t, cs)
	asmtest.LogMatches(t, out, true, `scoresKV16 \w+ \w+ HeadDim \d+: .*`)
}

// kv16Kernels are the fields of the 16-bit test packages' stand-in kernels
// struct: pairOrder16 stays nil where a variant keeps the natural order.
var kv16Kernels = []abi.Kernel{abi.ScoresKV16, abi.ValuesKV16, abi.PairOrder16}

// kv16Case is the test package of the 16-bit kernels in files (storage st,
// HeadDim d) with the stand-in variants.
func kv16Case(pkg, st string, d int, files []emit.File, variants string) asmtest.QEMUCase {
	return asmtest.QEMUCase{Package: pkg, Files: files, Variants: variants,
		Test: strings.NewReplacer("PKG", pkg, "HEADDIM", fmt.Sprint(d), "STORAGE", st).Replace(kvCommon + kv16Test)}
}

// kv16Test tests scoresKV16 and valuesKV16 over rows stored as STORAGE.
const kv16Test = `
const storage = "STORAGE"

` + asmtest.Value16 + `

// nan16 is a quiet NaN of the storage.
var nan16 = map[string]uint16{"f16": 0x7e01, "bf16": 0x7fc1}[storage]

// draw returns a normal 16-bit value between 1/16 and 16 in magnitude (a
// subnormal now and then), either sign.
func draw(r *rand.Rand) uint16 {
	sign := uint16(r.IntN(2)) << 15
	if r.IntN(20) == 0 {
		return sign | uint16(1+r.IntN(100)) // a subnormal of either format
	}
	if storage == "bf16" {
		return sign | uint16(123+r.IntN(8))<<7 | uint16(r.IntN(1<<7))
	}
	return sign | uint16(11+r.IntN(8))<<10 | uint16(r.IntN(1<<10))
}

// keyRows16 returns the 16-bit rows of a shape: nk rows of groups·headDim
// values, stride elements apart, NaN between them.
func keyRows16(r *rand.Rand, c kvShape) (x []uint16, stride int) {
	stride = c.groups*headDim + c.gap
	if c.nk == 0 || c.groups == 0 {
		return nil, stride
	}
	x = make([]uint16, (c.nk-1)*stride+c.groups*headDim)
	for i := range x {
		if i%stride < c.groups*headDim {
			x[i] = draw(r)
		} else {
			x[i] = nan16
		}
	}
	return x, stride
}

func same16(a, b []uint16) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// pairs puts x (rows of headDim floats) into the pair order of
// asm/abi PairOrder16, or back (inverse): in each whole block of 32 of a
// row the 16 even-indexed elements, then the 16 odd ones.
func pairs(x []float32, inverse bool) {
	var b [32]float32
	for r := 0; r+headDim <= len(x); r += headDim {
		for o := r; o+32 <= r+headDim; o += 32 {
			copy(b[:], x[o:o+32])
			for i := 0; i < 16; i++ {
				if inverse {
					x[o+2*i], x[o+2*i+1] = b[i], b[16+i]
				} else {
					x[o+i], x[o+16+i] = b[2*i], b[2*i+1]
				}
			}
		}
	}
}

// paired reports whether variant name keeps q and acc in pair order: it
// registers pairOrder16, which only AVX-512 over bf16 does.
func paired(t *testing.T, name string) bool {
	has := registered[name].pairOrder16 != nil
	if want := name == "avx512" && storage == "bf16"; has != want {
		t.Fatalf("%s over %s: pairOrder16 registered %v, want %v", name, storage, has, want)
	}
	return has
}

func TestPairOrder16(t *testing.T) {
	for name := range registered {
		if !paired(t, name) {
			continue
		}
		order := registered[name].pairOrder16
		r := rand.New(rand.NewPCG(13, headDim))
		for _, rows := range []int{0, 1, 2, 5} {
			x, buf := guarded(rows * headDim)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			x0 := append([]float32(nil), x...)
			want := append([]float32(nil), x...)
			pairs(want, false)
			order(x, 0)
			checkGuards(t, "x", buf)
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s rows=%d: pairOrder16(x, 0)[%d] = %v, want %v", name, rows, i, x[i], want[i])
				}
			}
			order(x, 1)
			checkGuards(t, "x", buf)
			if !sameBits(x, x0) {
				t.Fatalf("%s rows=%d: pairOrder16(x, 1) did not restore x", name, rows)
			}
		}
	}
}

func TestScoresKV16(t *testing.T) {
	for name := range registered {
		t.Run(name, func(t *testing.T) { testScoresKV16(t, name) })
	}
}

// testScoresKV16 checks the variant's scoresKV16, given q in its order.
func testScoresKV16(t *testing.T, name string) {
	scores, inPairs := registered[name].scoresKV16, paired(t, name)
	r := rand.New(rand.NewPCG(11, headDim))
	worst := 0.0
	for _, c := range kvShapes() {
		rows := c.nb * c.groups * c.grp
		k, kStride := keyRows16(r, c)
		q0 := make([]float32, rows*headDim)
		for i := range q0 {
			q0[i] = float32(r.NormFloat64())
		}
		k0 := append([]uint16(nil), k...)
		qk := append([]float32(nil), q0...) // q as the kernel reads it
		if inPairs {
			pairs(qk, false)
		}
		q, k := pageEnd(t, qk), pageEnd(t, k)
		sStride := c.nk + c.sGap
		s, buf := guarded(max(rows*sStride, 1))
		scores(s, q, k, c.nk, c.nb, c.groups, c.grp, kStride, sStride)
		if !sameBits(q, qk) || !same16(k, k0) {
			t.Fatalf("%+v: q or k written", c)
		}
		q = q0
		for i, got := range buf {
			in := i - guard
			row, j := in/max(sStride, 1), in%max(sStride, 1)
			if in >= 0 && in < rows*sStride && j < c.nk {
				gi := row / c.grp % c.groups
				var dot, mag float64
				for x := 0; x < headDim; x++ {
					a, b := float64(q[row*headDim+x]), value(k[j*kStride+gi*headDim+x])
					dot += a * b
					mag += math.Abs(a * b)
				}
				// bf16 subnormal keys make subnormal products: each of the
				// 2·headDim roundings may add up to 2^-150 beyond the relative bound.
				bound := float64(headDim+2)*0x1p-24*mag + float64(2*headDim)*0x1p-150
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
	t.Logf("scoresKV16 %s %s HeadDim %d: max error %.3g of the bound (HeadDim+2)·2^-24·Σ|q·k| + 2·HeadDim·2^-150", name, storage, headDim, worst)
}

func TestValuesKV16(t *testing.T) {
	for name := range registered {
		t.Run(name, func(t *testing.T) { testValuesKV16(t, name) })
	}
}

// testValuesKV16 checks the variant's valuesKV16, with acc in its order.
func testValuesKV16(t *testing.T, name string) {
	values, inPairs := registered[name].valuesKV16, paired(t, name)
	r := rand.New(rand.NewPCG(12, headDim))
	for _, c := range kvShapes() {
		rows := c.nb * c.groups * c.grp
		v, vStride := keyRows16(r, c)
		pStride := c.nk + c.sGap
		p := make([]float32, rows*pStride)
		for i := range p {
			switch j := i % max(pStride, 1); {
			case j >= c.nk:
				p[i] = float32(math.NaN()) // between the rows: never read
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
				v[j*vStride+x] = nan16
			}
		}
		acc, buf := guarded(rows * headDim)
		for i := range acc {
			acc[i] = float32(r.NormFloat64())
		}
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
					*a = fma32(w, float32(value(v[j*vStride+gi*headDim+x])), *a)
				}
			}
		}
		p0, v0 := p, append([]uint16(nil), v...)
		p, v, alpha = pageEnd(t, p), pageEnd(t, v), pageEnd(t, alpha)
		if inPairs {
			pairs(acc, false)
		}
		values(acc, p, v, alpha, c.nk, c.nb, c.groups, c.grp, vStride, pStride)
		if inPairs {
			pairs(acc, true)
		}
		if !sameBits(p, p0) || !same16(v, v0) {
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
`

// TestNEON16Files checks the generated 16-bit files as TestNEONFiles does
// the float32 ones: declarations, registration, every WORD (FCVTL, SHLL
// and the vector arithmetic) against go tool objdump, and determinism.
func TestNEON16Files(t *testing.T) {
	for _, st := range []string{"f16", "bf16"} {
		for _, d := range []int{3, 128} {
			gen := func() ([]emit.File, error) { return arm64.Files("attn", "a.yaml", NEONStorage16(d, st)) }
			files, err := gen()
			if err != nil {
				t.Fatal(err)
			}
			asmtest.CheckNEON(t, files, "attn", "a.yaml", []string{
				"func scoresKV16NEON(s, q []float32, k []uint16, nk, nb, groups, grp, kStride, sStride int)",
				"func valuesKV16NEON(acc, p []float32, v []uint16, alpha []float32, nk, nb, groups, grp, vStride, pStride int)",
			}, "kernels{scoresKV16: scoresKV16NEON, valuesKV16: valuesKV16NEON}")
			if n := asmtest.CheckWords(t, files[0].Data); n == 0 {
				t.Errorf("%s HeadDim %d: no WORD lines", st, d)
			}
			asmtest.Deterministic(t, fmt.Sprint(st, " HeadDim ", d), gen)
		}
	}
}
