// Package kerneltest checks the AVX kernels the asm family programs
// generate against straightforward float64 loops. asmtest.RunAMD64 copies
// this file and the family's own tests into a temporary module directory
// next to the generated packages and a config_test.go listing them.
package kerneltest

import (
	"math/rand"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// variant is the harness's Variant (an alias of the same struct type).
type variant = struct {
	Name        string
	Available   bool
	Rotate      func(q, qSrc []float32, qHeads, qStride, qHeadStride int, k, kSrc []float32, kHeads, kStride, kHeadStride int, table []float32, idx []int32, sign float32)
	AddRow      func(dst, src []float32)
	SoftmaxRow  func(row, bias []float32, scale float32)
	AddRows     func(x []float32, table []float32, idx []int32)
	SoftmaxRamp func(row []float32, scale, nslope, t0 float32)
	AddRamp     func(dst []float32, nslope, t0 float64)
	FarRows     func(rows, digits []float32, pos []int32)
}

// guardFloats is how many sentinel elements precede every guarded slice.
const guardFloats = 64

// sentinel is the bit pattern of the guard elements (a quiet NaN).
const sentinel = 0x7fc0dead

// guarded allocates n 4-byte elements that end exactly where a PROT_NONE
// page begins (so reading or writing past the end faults) and are preceded
// by guardFloats sentinel words; check reports any change to those.
func guarded(t *testing.T, n int) (p unsafe.Pointer, check func(what string)) {
	t.Helper()
	page := os.Getpagesize()
	size := 4 * (n + guardFloats)
	pages := (size + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (pages+1)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[pages*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	end := pages * page
	words := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[end-size])), guardFloats)
	for i := range words {
		words[i] = sentinel
	}
	return unsafe.Pointer(&mem[end-4*n]), func(what string) {
		t.Helper()
		for i, w := range words {
			if w != sentinel {
				t.Errorf("%s: guard word %d before the slice changed to %#x", what, guardFloats-i, w)
				return
			}
		}
	}
}

func guardedF32(t *testing.T, n int) ([]float32, func(string)) {
	p, check := guarded(t, n)
	return unsafe.Slice((*float32)(p), n), check
}

func guardedI32(t *testing.T, n int) ([]int32, func(string)) {
	p, check := guarded(t, n)
	return unsafe.Slice((*int32)(p), n), check
}

func fill(r *rand.Rand, s []float32, lo, hi float64) {
	for i := range s {
		s[i] = float32(lo + (hi-lo)*r.Float64())
	}
}
