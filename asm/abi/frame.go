package abi

import "fmt"

// Slot is one word of a kernel's argument frame, named as go vet's asmdecl
// names it: "q_base", "q_len", "q_cap" for a slice, the parameter's name
// for a scalar.
type Slot struct {
	Name string
	Off  int // byte offset from the frame pointer FP
	Size int // bytes
}

// Frame is the argument frame of a kernel under Go's ABI0 on a 64-bit
// target: the arguments laid out in order, each at a multiple of its
// alignment (slices, ints and float64 8 bytes, float32 4), slices as three words.
type Frame struct {
	Slots []Slot
	Size  int // bytes of arguments: the end of the last one (no results)
}

// sizes gives the size and alignment of the Go types kernels take.
var sizes = map[string]int{"[]float32": 24, "[]float64": 24, "[]uint16": 24, "[]int32": 24, "int": 8, "float64": 8, "float32": 4}

// Frame computes k's argument frame. It panics on a parameter type the ABI
// does not use (a programming error in this package's declarations).
func (k Kernel) Frame() Frame {
	var f Frame
	off := 0
	for _, p := range k.Params {
		size, ok := sizes[p.Type]
		if !ok {
			panic(fmt.Sprintf("abi: %s: parameter %s has unsupported type %s", k.Field, p.Name, p.Type))
		}
		align := min(size, 8)
		off = (off + align - 1) / align * align
		if size == 24 {
			for i, part := range []string{"base", "len", "cap"} {
				f.Slots = append(f.Slots, Slot{p.Name + "_" + part, off + 8*i, 8})
			}
		} else {
			f.Slots = append(f.Slots, Slot{p.Name, off, size})
		}
		off += size
	}
	f.Size = off
	return f
}

// Lookup returns the slot called name.
func (f Frame) Lookup(name string) (Slot, bool) {
	for _, s := range f.Slots {
		if s.Name == name {
			return s, true
		}
	}
	return Slot{}, false
}
