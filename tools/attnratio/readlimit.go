package main

import (
	"unsafe"
)

// readLimit prints the row that bounds every decode row: a plain read of the
// same K+V bytes (readWords, eight independent sums of 8-byte words, so no
// chain of additions limits it), timed against copy() the same way as the
// attention calls. A decode step must read every byte of K and V at least
// once, so no kernel's ratio can pass this one by more than the noise; on a
// machine whose copy() streams its stores past the cache it lies well below 2.
func readLimit[E float32 | uint16](k, v, src, dst []E, rounds int) {
	kw, vw := words(k), words(v)
	rs, ts := againstCopy(dst, src, rounds, func() { sink += readWords(kw) + readWords(vw) })
	row("read limit (a plain Go read of K and V)", "go", rs, ts)
}

// sink keeps readLimit's sums, so that the reads are not dropped.
var sink uint64

// words is x's bytes as 8-byte words (a whole number of them: x's sizes here
// are multiples of 128 elements).
func words[E float32 | uint16](x []E) []uint64 {
	var e E
	n := len(x) * int(unsafe.Sizeof(e)) / 8
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), n)
}

// readWords returns the sum of w's words, eight sums of every eighth word
// added at the end.
//
//go:noinline
func readWords(w []uint64) uint64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 uint64
	for len(w) >= 8 {
		s0 += w[0]
		s1 += w[1]
		s2 += w[2]
		s3 += w[3]
		s4 += w[4]
		s5 += w[5]
		s6 += w[6]
		s7 += w[7]
		w = w[8:]
	}
	for _, x := range w {
		s0 += x
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}
