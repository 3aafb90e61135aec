//go:build linux

package kernelfuzz

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guarded returns a slice of n elements placed in an mmap'd region next to a
// PROT_NONE guard page: ending exactly where the guard page begins (atEnd),
// or starting exactly where it ends. Touching one element past the end (or
// before the start) faults. The region is unmapped when t ends.
func guarded[T float32 | int32 | uint16](t testing.TB, n int, atEnd bool) []T {
	t.Helper()
	page := unix.Getpagesize()
	size := n * int(unsafe.Sizeof(T(0)))
	data := (size + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, data+page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	guard, off := mem[data:], data-size
	if !atEnd {
		guard, off = mem[:page], page
	}
	if err := unix.Mprotect(guard, unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[off])), n)
}

// place copies src into a guarded slice of the same length.
func place[T float32 | int32 | uint16](t testing.TB, src []T, atEnd bool) []T {
	g := guarded[T](t, len(src), atEnd)
	copy(g, src)
	return g
}

// faultFree runs f with faults turned into panics and fails t, naming what,
// when f faults (or panics at all).
func faultFree(t *testing.T, what string, f func()) {
	t.Helper()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	if e := catch(f); e != nil {
		t.Errorf("%s: %v (a read or write outside the slices)", what, e)
	}
}

// TestCanaryGuardFaults shows that the canary works: reading one element
// past a guarded slice's end, or one before its start, faults.
func TestCanaryGuardFaults(t *testing.T) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	for _, atEnd := range []bool{true, false} {
		g := guarded[float32](t, 5, atEnd)
		step := 5
		if !atEnd {
			step = -1
		}
		p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(g)), step*4)
		var sink float32
		if e := catch(func() { sink = *(*float32)(p) }); e == nil {
			t.Errorf("atEnd=%v: reading beyond the slice did not fault (read %g)", atEnd, sink)
		}
	}
}

// TestCanaryKernels runs every runnable variant of rope Apply, ApplyQK and
// Inverse, alibi and rpe_bias AddBias, Softmax and Bias, sinusoidal Add and
// Encode, learned Add, rpe_full Scores and Output and xl Scores and
// Relative with every slice argument (data, positions, tables)
// ending at a PROT_NONE guard page, and again starting right after one, on
// lengths that are not multiples of any vector width; a kernel touching
// memory outside its slices faults. Results must equal those of ordinary
// Go memory.
func TestCanaryKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, atEnd := range []bool{true, false} {
		for _, p := range ropePkgs {
			shapes := []struct{ pos []int32 }{
				{[]int32{0}},
				{[]int32{3, int32(p.maxPosition) + 5, -2}},
				{[]int32{1, 2, 3, 4, 5}},
				{[]int32{math.MaxInt32, 9, -1 << 30, 17, 100, int32(p.maxPosition) - 1, 12}},
			}
			for _, sh := range shapes {
				n := len(sh.pos)
				const qh, kh = 3, 1
				x := randomValues(r, n*qh*p.headDim)
				k := randomValues(r, n*kh*p.headDim)
				p.reg.each(t, func(v string) {
					pos := place(t, sh.pos, atEnd)
					want := slices.Clone(x)
					p.apply(want, sh.pos, qh)
					g := place(t, x, atEnd)
					faultFree(t, p.name+" "+v+" Apply", func() { p.apply(g, pos, qh) })
					if !sameBits(g, want) {
						t.Errorf("%s %s Apply on guarded memory differs", p.name, v)
					}
					g = place(t, x, atEnd)
					faultFree(t, p.name+" "+v+" Inverse", func() { p.inverse(g, pos, qh) })
					gq, gk := place(t, x, atEnd), place(t, k, atEnd)
					faultFree(t, p.name+" "+v+" ApplyQK", func() { p.applyQK(gq, gk, pos, qh, kh) })
					if !sameBits(gq, want) {
						t.Errorf("%s %s ApplyQK q on guarded memory differs from Apply", p.name, v)
					}
				})
			}
		}
		for _, p := range biasPkgs {
			var table []float32
			if p.buckets > 0 {
				table = uniform(r, p.heads*p.buckets, 4)
			}
			for _, sh := range [][3]int{{1, 1, 0}, {3, 5, 0}, {3, 17, 2}, {2, 33, 1 << 20}, {5, 7, 40}, {1, 9, 3}} {
				lq, lk, qo := sh[0], sh[1], sh[2]
				sc := uniform(r, p.heads*lq*lk, 4)
				p.reg.each(t, func(v string) {
					var tg []float32
					if table != nil {
						tg = place(t, table, atEnd)
					}
					want := slices.Clone(sc)
					p.softmax(want, table, lq, lk, qo, 0.125)
					g := place(t, sc, atEnd)
					faultFree(t, p.name+" "+v+" Softmax", func() { p.softmax(g, tg, lq, lk, qo, 0.125) })
					if !sameBits(g, want) {
						t.Errorf("%s %s Softmax on guarded memory differs", p.name, v)
					}
					g = place(t, sc, atEnd)
					faultFree(t, p.name+" "+v+" AddBias", func() { p.add(g, tg, lq, lk, qo) })
					g = guarded[float32](t, len(sc), atEnd)
					faultFree(t, p.name+" "+v+" Bias", func() { p.bias(g, tg, lq, lk, qo) })
				})
			}
		}
		for _, p := range absPkgs {
			var table []float32
			if p.learned {
				table = learnedTable()
			}
			for _, pos := range [][]int32{{0}, {4, 1, 0}, {int32(p.maxLen) - 1, 7, 2, 3, 8}} {
				x := randomValues(r, len(pos)*p.dModel)
				p.reg.each(t, func(v string) {
					var tg []float32
					if table != nil {
						tg = place(t, table, atEnd)
					}
					want := slices.Clone(x)
					p.add(want, table, pos)
					g, gp := place(t, x, atEnd), place(t, pos, atEnd)
					faultFree(t, p.name+" "+v+" Add", func() { p.add(g, tg, gp) })
					if !sameBits(g, want) {
						t.Errorf("%s %s Add on guarded memory differs", p.name, v)
					}
					if p.encode != nil {
						d := guarded[float32](t, p.dModel, atEnd)
						faultFree(t, p.name+" "+v+" Encode", func() { p.encode(d, 1<<20) })
					}
				})
			}
		}
		// rpe_full and xl: row counts below, at and above the 4/8/16-row
		// blocks of the assembly kernels (the last block moves back), keys
		// clipped on both sides, qOffset 2^31−1.
		relShapes := [][3]int{{1, 1, 0}, {3, 5, 0}, {2, 17, 3}, {3, 40, 18}, {1, 33, 16}, {4, 7, math.MaxInt32}, {2, 0, 0}}
		for _, p := range rpeFullPkgs {
			d := p.headDim
			aK, aV := randomValues(r, p.buckets*d), randomValues(r, p.buckets*d)
			for _, sh := range relShapes {
				lq, lk, qo := sh[0], sh[1], sh[2]
				q, k := randomValues(r, lq*d), randomValues(r, lk*d)
				w, vv := uniform(r, lq*lk, 1), randomValues(r, lk*d)
				p.reg.each(t, func(v string) {
					want := make([]float32, lq*lk)
					p.scores(want, q, k, aK, lq, lk, qo)
					g := guarded[float32](t, lq*lk, atEnd)
					gq, gk, ga := place(t, q, atEnd), place(t, k, atEnd), place(t, aK, atEnd)
					faultFree(t, p.name+" "+v+" Scores", func() { p.scores(g, gq, gk, ga, lq, lk, qo) })
					if !sameBits(g, want) {
						t.Errorf("%s %s Scores on guarded memory differs", p.name, v)
					}
					want = make([]float32, lq*d)
					p.output(want, w, vv, aV, lq, lk, qo)
					g = guarded[float32](t, lq*d, atEnd)
					gw, gv, ga := place(t, w, atEnd), place(t, vv, atEnd), place(t, aV, atEnd)
					faultFree(t, p.name+" "+v+" Output", func() { p.output(g, gw, gv, ga, lq, lk, qo) })
					if !sameBits(g, want) {
						t.Errorf("%s %s Output on guarded memory differs", p.name, v)
					}
				})
			}
		}
		for _, p := range xlPkgs {
			d := p.headDim
			u, uv := randomValues(r, d), randomValues(r, d)
			for _, sh := range relShapes {
				lq, lk := sh[0], sh[1]
				q, k, rr := randomValues(r, lq*d), randomValues(r, lk*d), randomValues(r, p.relRows(lq, lk)*d)
				p.reg.each(t, func(v string) {
					want := make([]float32, lq*lk)
					p.scores(want, q, k, rr, u, uv, lq, lk, sh[2])
					g := guarded[float32](t, lq*lk, atEnd)
					gq, gk, gr := place(t, q, atEnd), place(t, k, atEnd), place(t, rr, atEnd)
					gu, gv := place(t, u, atEnd), place(t, uv, atEnd)
					faultFree(t, p.name+" "+v+" Scores", func() { p.scores(g, gq, gk, gr, gu, gv, lq, lk, sh[2]) })
					if !sameBits(g, want) {
						t.Errorf("%s %s Scores on guarded memory differs", p.name, v)
					}
					g = guarded[float32](t, (lq+lk)*d, atEnd)
					faultFree(t, p.name+" "+v+" Relative", func() { p.relative(g, lq+lk) })
				})
			}
		}
	}
}
