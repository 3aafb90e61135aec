// The rope kernel tests of asm/rope (see asmtest.RunAMD64).
package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

type ropeCase struct {
	name               string
	headDim, rotaryDim int
	half               bool
	variants           []variant
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
					for _, strided := range []bool{false, true} {
						name := fmt.Sprintf("%s/%s/t%d_q%d_k%d_sign%v_strided%v", rc.name, v.Name, sh.tokens, sh.qHeads, sh.kHeads, sign, strided)
						if strided && sh.tokens > 64 {
							continue
						}
						// In place on the contiguous layout, or with heads HeadDim+3
						// floats apart and tokens 5 floats more than their heads
						// apart, q from a source to a separate destination (in place
						// for the inverse, which is only called in place: abi.Rotate).
						separate := strided && sign > 0
						// k is rotated in place only, and the inverse has no
						// k (abi.Rotate).
						sh := sh
						if sign < 0 {
							sh.kHeads = 0
						}
						lay := func(heads int) (ts, hs int) {
							if !strided {
								return heads * rc.headDim, rc.headDim
							}
							return heads*(rc.headDim+3) + 5, rc.headDim + 3
						}
						qts, qhs := lay(sh.qHeads)
						kts, khs := lay(sh.kHeads)
						q, checkQ := guardedF32(t, sh.tokens*qts)
						k, checkK := guardedF32(t, sh.tokens*kts)
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
						qd, kd := q, k
						checkQD, checkKD := func(string) {}, func(string) {}
						if separate {
							qd, checkQD = guardedF32(t, len(q))
							fill(r, qd, 100, 101)
						}
						qd0, kd0 := append([]float32(nil), qd...), append([]float32(nil), kd...)
						v.Rotate(qd, q, sh.qHeads, qts, qhs, kd, k, sh.kHeads, kts, khs, table, idx, sign)
						checkQ(name + " q")
						checkK(name + " k")
						checkIdx(name + " idx")
						checkQD(name + " q dst")
						checkKD(name + " k dst")
						if separate {
							for i := range q {
								if math.Float32bits(q[i]) != math.Float32bits(q0[i]) {
									t.Fatalf("%s: q source changed at %d", name, i)
								}
							}
						}
						for _, part := range []struct {
							got, x, d0 []float32
							heads      int
							ts, hs     int
						}{{qd, q0, qd0, sh.qHeads, qts, qhs}, {kd, k0, kd0, sh.kHeads, kts, khs}} {
							covered := make([]bool, len(part.got))
							for tok := 0; tok < sh.tokens; tok++ {
								row := table[int(idx[tok])*rowLen:]
								for h := 0; h < part.heads; h++ {
									off := tok*part.ts + h*part.hs
									for i := off; i < off+rc.headDim; i++ {
										covered[i] = true
									}
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
											t.Fatalf("%s: token %d head %d: dim %d ≥ RotaryDim not the source's", name, tok, h, i)
										}
									}
								}
							}
							for i, c := range covered {
								if !c && math.Float32bits(part.got[i]) != math.Float32bits(part.d0[i]) {
									t.Fatalf("%s: element %d between heads written", name, i)
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

// Throughput convention: b.SetBytes is the bytes of x (q) processed per
// call, so MB/s counts each byte of x once although it is read and written;
// copy() of the same byte count (one read, one write per byte) is the
// memory-bound reference.

const (
	benchHeads   = 32
	benchHeadDim = 128
	benchRows    = 4096
)

func findRope(name string) *ropeCase {
	for i := range ropeCases {
		if ropeCases[i].name == name {
			return &ropeCases[i]
		}
	}
	return nil
}

// goRotateHalf is the plain Go loop over precomputed float32 cos/sin rows
// (HeadDim = RotaryDim = 128, half layout).
func goRotateHalf(x []float32, heads int, table []float32, idx []int32) {
	for t, p := range idx {
		row := table[int(p)*128 : int(p)*128+128]
		c, s := row[:64], row[64:128]
		for h := 0; h < heads; h++ {
			v := x[(t*heads+h)*128 : (t*heads+h)*128+128]
			for i := 0; i < 64; i++ {
				x0, x1 := v[i], v[i+64]
				v[i] = x0*c[i] - x1*s[i]
				v[i+64] = x1*c[i] + x0*s[i]
			}
		}
	}
}

// goRotateInterleaved is the same for the interleaved layout.
func goRotateInterleaved(x []float32, heads int, table []float32, idx []int32) {
	for t, p := range idx {
		row := table[int(p)*256 : int(p)*256+256]
		c, s := row[:128], row[128:256]
		for h := 0; h < heads; h++ {
			v := x[(t*heads+h)*128 : (t*heads+h)*128+128]
			for i := 0; i < 128; i += 2 {
				x0, x1 := v[i], v[i+1]
				v[i] = x0*c[i] - x1*s[i]
				v[i+1] = x1*c[i] + x0*s[i]
			}
		}
	}
}

func BenchmarkRope(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	for _, layout := range []struct {
		pkg    string
		rowLen int
		goLoop func(x []float32, heads int, table []float32, idx []int32)
	}{{"rope128h", 128, goRotateHalf}, {"rope128i", 256, goRotateInterleaved}} {
		rc := findRope(layout.pkg)
		if rc == nil {
			b.Fatalf("no %s package", layout.pkg)
		}
		table := make([]float32, benchRows*layout.rowLen)
		fill(r, table, -1, 1)
		for _, size := range []struct {
			name   string
			tokens int
		}{{"16tok", 16}, {"64MiB", 64 << 20 / (4 * benchHeads * benchHeadDim)}} {
			x := make([]float32, size.tokens*benchHeads*benchHeadDim)
			fill(r, x, -1, 1)
			idx := make([]int32, size.tokens)
			for i := range idx {
				idx[i] = int32(i % benchRows)
			}
			bytes := int64(4 * len(x))
			prefix := layout.pkg + "/" + size.name + "/"
			for _, v := range rc.variants {
				if !v.Available {
					continue
				}
				b.Run(prefix+v.Name, func(b *testing.B) {
					b.SetBytes(bytes)
					for i := 0; i < b.N; i++ {
						v.Rotate(x, x, benchHeads, benchHeads*benchHeadDim, benchHeadDim, nil, nil, 0, 0, 0, table, idx, 1)
					}
				})
			}
			b.Run(prefix+"goloop", func(b *testing.B) {
				b.SetBytes(bytes)
				for i := 0; i < b.N; i++ {
					layout.goLoop(x, benchHeads, table, idx)
				}
			})
			dst := make([]float32, len(x))
			copy(dst, x) // fault the pages in before timing
			b.Run(prefix+"copy", func(b *testing.B) {
				b.SetBytes(bytes)
				for i := 0; i < b.N; i++ {
					copy(dst, x)
				}
			})
		}
	}
}

// cmul32 is the complex product of the farRows kernel as a plain float32
// expression: every product rounded (the float32 conversions forbid FMA
// fusion).
func cmul32(xc, xs, yc, ys float32) (float32, float32) {
	return float32(xc*yc) - float32(xs*ys), float32(xs*yc) + float32(xc*ys)
}

// farPositions are the edge positions of TestFarRows: every byte at 0,
// 0x7f, 0x80 and 0xff somewhere, both signs, the int32 limits and the
// positions next to ±2^20.
var farPositions = []int32{math.MaxInt32, math.MinInt32, -1, 0, 1<<20 + 1, -(1<<20 + 1), 0x7f80ff00, -0x7f80ff01, 0x00ff807f, 255}

// TestFarRows checks farRows of every variant bit for bit against cmul32's
// ((D3·D2)·D1)·D0 per pair, and against amp·cos/sin of the digit rows'
// summed angles, with the digit tables and the rows guarded slices of
// exactly their length (the shapes' nFreq cover every tail of 16, 8 and 4
// lanes and both layouts), and that the tables stay unchanged.
func TestFarRows(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const amp, rowsPer = 1.25, 256
	for _, rc := range ropeCases {
		R, n := rc.rotaryDim, rc.rotaryDim/2
		rowLen := R
		if !rc.half {
			rowLen = 2 * R
		}
		digits, checkDigits := guardedF32(t, 4*rowsPer*2*n)
		angles := make([]float64, 4*rowsPer*n)
		for k := 0; k < 4; k++ {
			for d := 0; d < rowsPer; d++ {
				for i := 0; i < n; i++ {
					a := 2 * math.Pi * r.Float64()
					angles[(k*rowsPer+d)*n+i] = a
					s, c := math.Sincos(a)
					if k == 3 {
						s, c = amp*s, amp*c
					}
					row := digits[(k*rowsPer+d)*2*n:]
					row[i], row[n+i] = float32(c), float32(s)
				}
			}
		}
		digitsCopy := append([]float32(nil), digits...)
		for _, v := range rc.variants {
			if !v.Available {
				t.Logf("%s/%s: SKIP: CPU lacks the instructions", rc.name, v.Name)
				continue
			}
			for _, tokens := range []int{0, 1, 2, 5, 17} {
				rows, check := guardedF32(t, tokens*rowLen)
				pos := make([]int32, tokens)
				for k := range pos {
					pos[k] = int32(r.Uint32())
				}
				if tokens == 17 {
					copy(pos, farPositions)
				}
				v.FarRows(rows, digits, pos)
				check(fmt.Sprintf("%s/%s/t%d rows", rc.name, v.Name, tokens))
				for k, p := range pos {
					var dr [4][]float32
					var dl [4]int
					for j := range dr {
						dl[j] = j*rowsPer + int(uint32(p)>>(8*j)&0xff)
						dr[j] = digits[dl[j]*2*n : (dl[j]+1)*2*n]
					}
					row := rows[k*rowLen : (k+1)*rowLen]
					for i := 0; i < n; i++ {
						mc, ms := cmul32(dr[3][i], dr[3][n+i], dr[2][i], dr[2][n+i])
						hc, hs := cmul32(mc, ms, dr[1][i], dr[1][n+i])
						wc, ws := cmul32(hc, hs, dr[0][i], dr[0][n+i])
						gc, gs := [2]float32{row[i], row[i]}, [2]float32{row[n+i], row[n+i]}
						if !rc.half {
							gc = [2]float32{row[2*i], row[2*i+1]}
							gs = [2]float32{row[R+2*i], row[R+2*i+1]}
						}
						for j := 0; j < 2; j++ {
							if math.Float32bits(gc[j]) != math.Float32bits(wc) || math.Float32bits(gs[j]) != math.Float32bits(ws) {
								t.Fatalf("%s/%s/t%d: token %d (pos %d) pair %d: got (%v, %v), want (%v, %v)", rc.name, v.Name, tokens, k, p, i, gc[j], gs[j], wc, ws)
							}
						}
						sum := 0.0
						for j := range dl {
							sum += angles[dl[j]*n+i]
						}
						s, c := math.Sincos(sum)
						if math.Abs(float64(wc)-amp*c) > 2e-6 || math.Abs(float64(ws)-amp*s) > 2e-6 {
							t.Fatalf("%s/%s: pair %d: (%v, %v) is not amp·cos/sin of the summed angle (%v, %v)", rc.name, v.Name, i, wc, ws, amp*c, amp*s)
						}
					}
				}
			}
		}
		checkDigits(rc.name + " digits")
		for i := range digits {
			if math.Float32bits(digits[i]) != math.Float32bits(digitsCopy[i]) {
				t.Fatalf("%s: digits modified at %d", rc.name, i)
			}
		}
	}
}
