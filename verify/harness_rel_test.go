package verify

import (
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/posenc/posenc/spec"
)

// rpeFullKernels builds a float64-based rpe_full kernel set with the length
// checks of the generated API; row overrides the distance-to-row rule and
// scale the score scale (0: 1/√HeadDim).
func rpeFullKernels(s *spec.Spec, row func(rel int) int, scale float64) RPEFullKernels {
	if row == nil {
		row = func(rel int) int { return RPEFullRow(s, rel) }
	}
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(s.HeadDim))
	}
	d, rows := s.HeadDim, 2*s.RMax-1
	return RPEFullKernels{
		Scores: func(dst, q, k, aK []float32, lq, lk, qo int) {
			mustLen("dst", len(dst), lq*lk)
			mustLen("q", len(q), lq*d)
			mustLen("k", len(k), lk*d)
			mustLen("aK", len(aK), rows*d)
			for i := range lq {
				for j := range lk {
					b := row(qo + i - j)
					var sum float64
					for x := range d {
						sum += float64(q[i*d+x]) * (float64(k[j*d+x]) + float64(aK[b*d+x]))
					}
					dst[i*lk+j] = float32(sum * scale)
				}
			}
		},
		Output: func(dst, w, v, aV []float32, lq, lk, qo int) {
			mustLen("dst", len(dst), lq*d)
			mustLen("weights", len(w), lq*lk)
			mustLen("v", len(v), lk*d)
			mustLen("aV", len(aV), rows*d)
			for i := range lq {
				for x := range d {
					var sum float64
					for j := range lk {
						b := row(qo + i - j)
						sum += float64(w[i*lk+j]) * (float64(v[j*d+x]) + float64(aV[b*d+x]))
					}
					dst[i*d+x] = float32(sum)
				}
			}
		},
	}
}

// xlKernels builds a float64-based xl kernel set; swap exchanges u and v.
func xlKernels(s *spec.Spec, swap bool) XLKernels {
	d := s.HeadDim
	return XLKernels{
		Scores: func(dst, q, k, r, u, v []float32, lq, lk, qo int) {
			mustLen("dst", len(dst), lq*lk)
			mustLen("q", len(q), lq*d)
			mustLen("k", len(k), lk*d)
			mustLen("r", len(r), xlRows(lq, lk)*d)
			mustLen("u", len(u), d)
			mustLen("v", len(v), d)
			if swap {
				u, v = v, u
			}
			store(dst, XLScores(s, q, k, r, u, v, lq, lk, qo))
		},
		Relative: func(dst []float32, n int) {
			mustLen("dst", len(dst), n*d)
			store(dst, XLRelative(s, n))
		},
	}
}

func TestHarnessRelCorrect(t *testing.T) {
	for _, y := range []string{
		"name: rf\nencoding: rpe_full\nhead_dim: 16\nr_max: 4\n",
		"name: rf1\nencoding: rpe_full\nhead_dim: 5\nr_max: 1\n",
		"name: rfwide\nencoding: rpe_full\nhead_dim: 3\nr_max: 700\n",
	} {
		s := parse(t, y)
		t.Run(s.Name, func(t *testing.T) {
			r := RunRPEFull(s, rpeFullKernels(s, nil, 0))
			expectPass(t, r)
			t.Logf("%d cases, max ratio %.3g at %s", r.Cases, r.MaxRatio, r.Worst)
		})
	}
	for _, y := range []string{
		"name: x\nencoding: xl\nhead_dim: 16\n",
		"name: x6\nencoding: xl\nhead_dim: 6\nbase: 500\n",
	} {
		s := parse(t, y)
		t.Run(s.Name, func(t *testing.T) {
			r := RunXL(s, xlKernels(s, false))
			expectPass(t, r)
			t.Logf("%d cases, max ratio %.3g at %s", r.Cases, r.MaxRatio, r.Worst)
		})
	}
}

func TestHarnessRelWrong(t *testing.T) {
	rf := parse(t, "name: rf\nencoding: rpe_full\nhead_dim: 8\nr_max: 4\n")
	t.Run("clip one short", func(t *testing.T) {
		// Distances clamped to ±(r_max−2): rows 0 and 2·r_max−2 never used.
		m := rf.RMax - 2
		k := rpeFullKernels(rf, func(rel int) int { return min(max(rel, -m), m) + rf.RMax - 1 }, 0)
		expectFail(t, RunRPEFull(rf, k), "Scores lq=")
	})
	t.Run("distance sign flipped", func(t *testing.T) {
		k := rpeFullKernels(rf, func(rel int) int { return RPEFullRow(rf, -rel) }, 0)
		expectFail(t, RunRPEFull(rf, k), "Output lq=")
	})
	t.Run("qOffset ignored", func(t *testing.T) {
		// Distances measured as i−j: wrong only where qOffset > 0.
		k := rpeFullKernels(rf, nil, 0)
		k.Scores = func(dst, q, kk, aK []float32, lq, lk, _ int) {
			rpeFullKernels(rf, nil, 0).Scores(dst, q, kk, aK, lq, lk, 0)
		}
		expectFail(t, RunRPEFull(rf, k), "qOffset=4")
	})
	t.Run("missing 1/sqrt(d)", func(t *testing.T) {
		expectFail(t, RunRPEFull(rf, rpeFullKernels(rf, nil, 1)), "Scores lq=")
	})
	t.Run("Output without aV", func(t *testing.T) {
		k := rpeFullKernels(rf, nil, 0)
		k.Output = func(dst, w, v, aV []float32, lq, lk, qo int) {
			rpeFullKernels(rf, nil, 0).Output(dst, w, v, make([]float32, len(aV)), lq, lk, qo)
		}
		expectFail(t, RunRPEFull(rf, k), "Output lq=")
	})
	t.Run("aK length unchecked", func(t *testing.T) {
		k := rpeFullKernels(rf, nil, 0)
		k.Scores = func(dst, q, kk, aK []float32, lq, lk, qo int) {
			full := make([]float32, (2*rf.RMax-1)*rf.HeadDim)
			copy(full, aK)
			rpeFullKernels(rf, nil, 0).Scores(dst, q, kk, full, lq, lk, qo)
		}
		expectFail(t, RunRPEFull(rf, k), "Scores with aK one element short: no panic")
	})

	xl := parse(t, "name: x\nencoding: xl\nhead_dim: 8\n")
	t.Run("u and v swapped", func(t *testing.T) {
		expectFail(t, RunXL(xl, xlKernels(xl, true)), "Scores lq=")
	})
	t.Run("r rows reversed", func(t *testing.T) {
		k := xlKernels(xl, false)
		k.Scores = func(dst, q, kk, r, u, v []float32, lq, lk, qo int) {
			rev := make([]float32, len(r))
			n := len(r) / xl.HeadDim
			for m := range n {
				copy(rev[m*xl.HeadDim:(m+1)*xl.HeadDim], r[(n-1-m)*xl.HeadDim:])
			}
			xlKernels(xl, false).Scores(dst, q, kk, rev, u, v, lq, lk, qo)
		}
		expectFail(t, RunXL(xl, k), "Scores lq=")
	})
	t.Run("scaled by 1/sqrt(d)", func(t *testing.T) {
		k := xlKernels(xl, false)
		k.Scores = func(dst, q, kk, r, u, v []float32, lq, lk, qo int) {
			xlKernels(xl, false).Scores(dst, q, kk, r, u, v, lq, lk, qo)
			for i := range dst {
				dst[i] /= float32(math.Sqrt(float64(xl.HeadDim)))
			}
		}
		expectFail(t, RunXL(xl, k), "Scores lq=")
	})
	t.Run("Relative with sin and cos swapped", func(t *testing.T) {
		k := xlKernels(xl, false)
		k.Relative = func(dst []float32, n int) {
			xlKernels(xl, false).Relative(dst, n)
			for x := 0; x+1 < len(dst); x += 2 {
				dst[x], dst[x+1] = dst[x+1], dst[x]
			}
		}
		expectFail(t, RunXL(xl, k), "Relative n=")
	})
	t.Run("Relative rows ascending", func(t *testing.T) {
		k := xlKernels(xl, false)
		k.Relative = func(dst []float32, n int) {
			mustLen("dst", len(dst), n*xl.HeadDim)
			all := XLRelative(xl, n)
			for m := range n {
				store(dst[m*xl.HeadDim:(m+1)*xl.HeadDim], all[(n-1-m)*xl.HeadDim:(n-m)*xl.HeadDim])
			}
		}
		expectFail(t, RunXL(xl, k), "Relative n=")
	})
	t.Run("Scores writes past dst", func(t *testing.T) {
		k := rpeFullKernels(rf, nil, 0)
		k.Scores = func(dst, q, kk, aK []float32, lq, lk, qo int) {
			rpeFullKernels(rf, nil, 0).Scores(dst, q, kk, aK, lq, lk, qo)
			unsafe.Slice(unsafe.SliceData(dst), len(dst)+1)[len(dst)] = 0 // the harness pads every slice
		}
		expectFail(t, RunRPEFull(rf, k), "out of bounds")
	})
	t.Run("Scores writes into q", func(t *testing.T) {
		k := xlKernels(xl, false)
		k.Scores = func(dst, q, kk, r, u, v []float32, lq, lk, qo int) {
			xlKernels(xl, false).Scores(dst, q, kk, r, u, v, lq, lk, qo)
			if len(q) > 0 {
				q[0]++
			}
		}
		expectFail(t, RunXL(xl, k), "q modified")
	})
	t.Run("Output writes into aV", func(t *testing.T) {
		k := rpeFullKernels(rf, nil, 0)
		k.Output = func(dst, w, v, aV []float32, lq, lk, qo int) {
			rpeFullKernels(rf, nil, 0).Output(dst, w, v, aV, lq, lk, qo)
			aV[len(aV)/2]++
		}
		expectFail(t, RunRPEFull(rf, k), "aV modified")
	})
	t.Run("Scores writes before aK", func(t *testing.T) {
		k := rpeFullKernels(rf, nil, 0)
		k.Scores = func(dst, q, kk, aK []float32, lq, lk, qo int) {
			rpeFullKernels(rf, nil, 0).Scores(dst, q, kk, aK, lq, lk, qo)
			unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(aK)), -4)), 1)[0] = 0
		}
		expectFail(t, RunRPEFull(rf, k), "aK out of bounds")
	})
}

func TestRelReference(t *testing.T) {
	// Zero tables: rpe_full is plain scaled dot-product attention.
	s := parse(t, "name: rf\nencoding: rpe_full\nhead_dim: 2\nr_max: 2\n")
	q, k := []float32{1, 2}, []float32{3, 4, 5, 6}
	got := RPEFullScores(s, q, k, make([]float32, 3*2), 1, 2, 0)
	if want := []float64{11 / math.Sqrt2, 17 / math.Sqrt2}; math.Abs(got[0]-want[0]) > 1e-12 || math.Abs(got[1]-want[1]) > 1e-12 {
		t.Errorf("RPEFullScores = %v, want %v", got, want)
	}
	// Rows: rel = 0 → row 1; rel = 1 → 2; rel = −5 → 0 (r_max 2).
	for rel, want := range map[int]int{0: 1, 1: 2, 7: 2, -1: 0, -5: 0} {
		if g := RPEFullRow(s, rel); g != want {
			t.Errorf("RPEFullRow(%d) = %d, want %d", rel, g, want)
		}
	}
	// Output with one-hot weights picks v_j + a_row.
	aV := []float32{10, 20, 30, 40, 50, 60}
	o := RPEFullOutput(s, []float32{0, 1}, k, aV, 1, 2, 0) // rel = 0−1 = −1 → row 0
	if o[0] != 15 || o[1] != 26 {
		t.Errorf("RPEFullOutput = %v, want [15 26]", o)
	}
	// xl: Relative row n−1 is distance 0: [sin 0, cos 0, …].
	x := parse(t, "name: x\nencoding: xl\nhead_dim: 4\nbase: 100\n")
	r := XLRelative(x, 3)
	if r[8] != 0 || r[9] != 1 || r[10] != 0 || r[11] != 1 {
		t.Errorf("distance 0 row = %v", r[8:12])
	}
	// Row 0 is distance 2: sin(2), cos(2), sin(2/10), cos(2/10).
	if math.Abs(r[0]-math.Sin(2)) > 1e-15 || math.Abs(r[3]-math.Cos(0.2)) > 1e-15 {
		t.Errorf("distance 2 row = %v", r[0:4])
	}
}

// TestHarnessRelGolden runs RunRPEFull and RunXL on the spec of every
// golden_rel case: correct kernels pass, with the golden case checked
// (its calls counted once each), and kernels with the key − query sign
// fail on the golden case itself.
func TestHarnessRelGolden(t *testing.T) {
	cases, err := RelGoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		s := parse(t, c.SpecYAML)
		t.Run(c.Name, func(t *testing.T) {
			var r *Report
			golden := 0
			switch c.Kind {
			case spec.RPEFull:
				k := rpeFullKernels(s, nil, 0)
				scores := k.Scores
				k.Scores = func(dst, q, kk, aK []float32, lq, lk, qo int) {
					if lq == c.LQ && lk == c.LK && qo == c.QOffset && slices.Equal(q, c.Q) {
						golden++
					}
					scores(dst, q, kk, aK, lq, lk, qo)
				}
				r = RunRPEFull(s, k)
			case spec.XL:
				k := xlKernels(s, false)
				scores := k.Scores
				k.Scores = func(dst, q, kk, rr, u, v []float32, lq, lk, qo int) {
					if lq == c.LQ && lk == c.LK && qo == c.QOffset && slices.Equal(q, c.Q) {
						golden++
					}
					scores(dst, q, kk, rr, u, v, lq, lk, qo)
				}
				r = RunXL(s, k)
			}
			expectPass(t, r)
			if golden != 1 {
				t.Errorf("the golden case's Scores ran %d times, want 1", golden)
			}
			t.Logf("%d cases, max ratio %.3g at %s", r.Cases, r.MaxRatio, r.Worst)
		})
		if c.Kind == spec.RPEFull && c.RMax > 1 {
			t.Run(c.Name+"/sign flipped", func(t *testing.T) {
				k := rpeFullKernels(s, func(rel int) int { return RPEFullRow(s, -rel) }, 0)
				expectFail(t, RunRPEFull(s, k), "golden:"+c.Name+" Scores")
			})
		}
		if c.Kind == spec.XL {
			t.Run(c.Name+"/sin and cos swapped", func(t *testing.T) {
				k := xlKernels(s, false)
				k.Relative = func(dst []float32, n int) {
					xlKernels(s, false).Relative(dst, n)
					for x := 0; x+1 < len(dst); x += 2 {
						dst[x], dst[x+1] = dst[x+1], dst[x]
					}
				}
				expectFail(t, RunXL(s, k), "golden:"+c.Name+" Relative")
			})
		}
	}
}

// TestHarnessRelGoldenMismatch checks that a spec named like a golden_rel
// case but of another shape is reported, not silently skipped.
func TestHarnessRelGoldenMismatch(t *testing.T) {
	s := parse(t, "name: gshaw_d7\nencoding: rpe_full\nhead_dim: 8\nr_max: 4\n")
	expectFail(t, RunRPEFull(s, rpeFullKernels(s, nil, 0)), "does not fit spec gshaw_d7")
	x := parse(t, "name: gxl_d8\nencoding: xl\nhead_dim: 8\nbase: 500\n")
	expectFail(t, RunXL(x, xlKernels(x, false)), "does not fit spec gxl_d8")
}
