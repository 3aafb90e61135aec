package rope

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/internal/asmtest"
)

// shape is the Params of a head shape, with RowLen as gen derives it.
func shape(h, r int, interleaved bool) Params {
	row := r
	if interleaved {
		row = 2 * r
	}
	return Params{HeadDim: h, RotaryDim: r, RowLen: row, Interleaved: interleaved}
}

// qemuShapes are the head shapes TestKernelsQEMU runs: every step kind and
// tail, resident and streamed rows, the block loop.
var qemuShapes = []struct {
	h, r        int
	interleaved bool
}{
	{128, 128, false}, {128, 128, true}, {64, 16, false},
	{256, 64, true}, {64, 48, true}, {32, 24, false},
	{6, 6, true}, {10, 2, false}, {200, 196, false}, {256, 160, true},
	{32, 30, true}, {32, 32, true}, {40, 34, false},
}

// TestKernelsQEMU runs the NEON rotate of every qemuShapes shape under
// qemu-aarch64-static against a float64 loop.
func TestKernelsQEMU(t *testing.T) {
	var cs []asmtest.QEMUCase
	for _, s := range qemuShapes {
		layout := "half"
		if s.interleaved {
			layout = "interleaved"
		}
		pkg := fmt.Sprintf("rope%s%d_%d", layout[:4], s.h, s.r)
		files, err := NEON(pkg, "test/"+pkg+".yaml", shape(s.h, s.r, s.interleaved))
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		cs = append(cs, asmtest.QEMUCase{Package: pkg, Files: files,
			Variants: asmtest.QEMUVariants(pkg, abi.Rotate, abi.FarRows),
			Test:     fmt.Sprintf(ropeTest, pkg, s.h, s.r, s.interleaved)})
	}
	asmtest.RunQEMU(t, cs)
}

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
			for _, strided := range []bool{false, true} {
				// In place on the contiguous layout, or with heads HeadDim+3
				// floats apart and tokens 5 floats more than their heads
				// apart, q from a source to a separate destination (in place
				// for the inverse, which is only called in place: abi.Rotate).
				separate := strided && sign > 0
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
				q, qbuf := guarded(tokens * qts)
				k, kbuf := guarded(tokens * kts)
				for _, x := range [][]float32{q, k} {
					for i := range x {
						x[i] = float32(rng.NormFloat64() * 3)
					}
				}
				q0, k0 := append([]float32(nil), q...), append([]float32(nil), k...)
				qd, qdbuf, kd, kdbuf := q, qbuf, k, kbuf
				if separate {
					qd, qdbuf = guarded(len(q))
				}
				qd0, kd0 := append([]float32(nil), qd...), append([]float32(nil), kd...)
				rot(qd, q, hh[0], qts, qhs, kd, k, hh[1], kts, khs, table, idx, sign)
				checkGuards(t, "q", qbuf)
				checkGuards(t, "k", kbuf)
				checkGuards(t, "q dst", qdbuf)
				checkGuards(t, "k dst", kdbuf)
				if separate {
					for i := range q {
						if math.Float32bits(q[i]) != math.Float32bits(q0[i]) {
							t.Fatalf("q source changed at %%d", i)
						}
					}
				}
				for _, c := range []struct {
					got, in, d0 []float32
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
								x0, x1 := float64(x[i0]), float64(x[i1])
								cc, ss := float64(cs), float64(sign)*float64(sn)
								w0, w1 := x0*cc-x1*ss, x1*cc+x0*ss
								tol := math.Ldexp(math.Abs(x0*cc)+math.Abs(x1*ss)+math.Abs(x1*cc)+math.Abs(x0*ss), -22) + 1e-30
								if math.Abs(float64(y[i0])-w0) > tol || math.Abs(float64(y[i1])-w1) > tol {
									t.Fatalf("tokens %%d heads %%v sign %%v strided %%v t %%d h %%d pair %%d: got (%%g, %%g) want (%%g, %%g)",
										tokens, hh, sign, strided, tk, h, i, y[i0], y[i1], w0, w1)
								}
							}
							for i := rotaryDim; i < headDim; i++ {
								if math.Float32bits(y[i]) != math.Float32bits(x[i]) {
									t.Fatalf("tokens %%d strided %%v dim %%d >= RotaryDim not the source's", tokens, strided, i)
								}
							}
						}
					}
					for i, cv := range covered {
						if !cv && math.Float32bits(c.got[i]) != math.Float32bits(c.d0[i]) {
							t.Fatalf("tokens %%d strided %%v: element %%d between heads written", tokens, strided, i)
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

// TestFarRows checks the NEON farRows bit for bit against ((D3·D2)·D1)·D0
// per pair as float32 expressions whose conversions forbid FMA fusion, and
// against amp·cos/sin of the digit rows' summed angles, the rows between
// guard elements, on random positions and ones whose bytes are 0, 0x7f,
// 0x80 and 0xff, both signs and the int32 limits.
func TestFarRows(t *testing.T) {
	fr := registered["neon"].farRows
	rng := rand.New(rand.NewPCG(7, 8))
	const amp, rowsPer = 1.25, 256
	n := rotaryDim / 2
	digits, angles := make([]float32, 4*rowsPer*2*n), make([]float64, 4*rowsPer*n)
	for k := 0; k < 4; k++ {
		for d := 0; d < rowsPer; d++ {
			for i := 0; i < n; i++ {
				a := rng.Float64() * 2 * math.Pi
				angles[(k*rowsPer+d)*n+i] = a
				c, s := math.Cos(a), math.Sin(a)
				if k == 3 {
					c, s = amp*c, amp*s
				}
				digits[(k*rowsPer+d)*2*n+i], digits[(k*rowsPer+d)*2*n+n+i] = float32(c), float32(s)
			}
		}
	}
	cmul := func(xc, xs, yc, ys float32) (float32, float32) {
		return float32(xc*yc) - float32(xs*ys), float32(xs*yc) + float32(xc*ys)
	}
	digitsCopy := append([]float32(nil), digits...)
	edges := []int32{math.MaxInt32, math.MinInt32, -1, 0, 1<<20 + 1, -(1<<20 + 1), 0x7f80ff00, -0x7f80ff01, 0x00ff807f}
	for _, tokens := range []int{0, 1, 3, 9} {
		rows, buf := guarded(tokens * rowLen())
		pos := make([]int32, tokens)
		for k := range pos {
			pos[k] = int32(rng.Uint32())
		}
		if tokens == 9 {
			copy(pos, edges)
		}
		fr(rows, digits, pos)
		checkGuards(t, "rows", buf)
		for k, p := range pos {
			var dl [4]int
			for j := range dl {
				dl[j] = j*rowsPer + int(uint32(p)>>(8*j)&0xff)
			}
			at := func(j, i int) (float32, float32) { return digits[dl[j]*2*n+i], digits[dl[j]*2*n+n+i] }
			row := rows[k*rowLen():]
			for i := 0; i < n; i++ {
				a3c, a3s := at(3, i)
				a2c, a2s := at(2, i)
				a1c, a1s := at(1, i)
				a0c, a0s := at(0, i)
				mc, ms := cmul(a3c, a3s, a2c, a2s)
				hc, hs := cmul(mc, ms, a1c, a1s)
				wc, ws := cmul(hc, hs, a0c, a0s)
				gc := []float32{row[i], row[i]}
				gs := []float32{row[n+i], row[n+i]}
				if interleaved {
					gc = []float32{row[2*i], row[2*i+1]}
					gs = []float32{row[rotaryDim+2*i], row[rotaryDim+2*i+1]}
				}
				for j := range gc {
					if math.Float32bits(gc[j]) != math.Float32bits(wc) || math.Float32bits(gs[j]) != math.Float32bits(ws) {
						t.Fatalf("tokens %%d token %%d (pos %%d) pair %%d: got (%%v, %%v), want (%%v, %%v)", tokens, k, p, i, gc[j], gs[j], wc, ws)
					}
				}
				sum := 0.0
				for j := range dl {
					sum += angles[dl[j]*n+i]
				}
				if math.Abs(float64(wc)-amp*math.Cos(sum)) > 2e-6 || math.Abs(float64(ws)-amp*math.Sin(sum)) > 2e-6 {
					t.Fatalf("pair %%d: (%%v, %%v) is not amp·cos/sin of the summed angle", i, wc, ws)
				}
			}
		}
	}
	for i := range digits {
		if math.Float32bits(digits[i]) != math.Float32bits(digitsCopy[i]) {
			t.Fatalf("digits modified at %%d", i)
		}
	}
}
`

// TestRopeInstructionCounts reports the instructions per rotated element of
// the per-head loop (Apply path), and bounds them.
func TestRopeInstructionCounts(t *testing.T) {
	for _, c := range []struct {
		h, r    int
		layout  string
		max     float64 // instructions per rotated element
		storage string  // Params.Storage: "" (float32), "f16" or "bf16"
	}{
		{128, 128, "half", 0.8, ""},
		{128, 128, "interleaved", 1.1, ""},
		{64, 16, "half", 1.05, ""},
		{256, 64, "interleaved", 1.2, ""},
		{64, 48, "interleaved", 1.2, ""},
		{32, 24, "half", 0.9, ""},
		{256, 256, "half", 0.85, ""},
		// 16-bit storage adds a widening per loaded vector and a narrowing
		// per stored one (bf16: three instructions).
		{128, 128, "half", 1.3, "f16"},
		{128, 128, "interleaved", 1.6, "f16"},
		{128, 128, "half", 1.8, "bf16"},
		{128, 128, "interleaved", 2.1, "bf16"},
		{80, 78, "half", 2.2, "bf16"},
	} {
		p := shape(c.h, c.r, c.layout == "interleaved")
		p.Storage = c.storage
		files, err := NEON("p", "p.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		asm := string(files[0].Data)
		// The in-place head loop follows the one from a separate source
		// (ApplyTo's).
		labels := regexp.MustCompile(`(?m)^(qhead\d+):$`).FindAllStringSubmatch(asm, 2)
		var label []string
		if len(labels) == 2 {
			label = labels[1]
		}
		if label == nil {
			t.Fatalf("%d/%d %s: no head loop", c.h, c.r, c.layout)
		}
		n := asmtest.HotLoop(asm, label[1])
		if blk := regexp.MustCompile(`(?m)^(blk\d+):$`).FindStringSubmatch(asm); blk != nil {
			// The block loop's body appears once in the head loop but
			// runs once per 16 pairs.
			b := asmtest.HotLoop(asm, blk[1])
			n += (c.r/32 - 1) * b
			t.Logf("rope %d/%d %s: inner block loop %d instructions per 32 elements", c.h, c.r, c.layout, b)
		}
		per := float64(n) / float64(c.r)
		t.Logf("rope %d/%d %-11s %-4s: %3d instructions per head, %.3f per rotated element", c.h, c.r, c.layout, c.storage, n, per)
		if n == 0 || per > c.max {
			t.Errorf("%d/%d %s: %.3f instructions per element, want <= %.2f", c.h, c.r, c.layout, per, c.max)
		}
	}
}
