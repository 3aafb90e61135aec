package abi

import (
	"strings"
	"testing"

	"github.com/mmcloughlin/avo/gotypes"
)

// TestFrameMatchesAvo checks every kernel's frame against the one avo
// computes from the same signature: the offset of every slot and the total
// argument size.
func TestFrameMatchesAvo(t *testing.T) {
	for _, k := range All() {
		sig, err := gotypes.ParseSignature(k.FuncType())
		if err != nil {
			t.Fatalf("%s: %v", k.Field, err)
		}
		f := k.Frame()
		if f.Size != sig.Bytes() {
			t.Errorf("%s: args size %d, avo %d", k.Field, f.Size, sig.Bytes())
		}
		for _, s := range f.Slots {
			name, part, isSlice := strings.Cut(s.Name, "_")
			c := sig.Params().Lookup(name)
			if isSlice {
				switch part {
				case "base":
					c = c.Base()
				case "len":
					c = c.Len()
				case "cap":
					c = c.Cap()
				}
			}
			b, err := c.Resolve()
			if err != nil {
				t.Fatalf("%s: %s: %v", k.Field, s.Name, err)
			}
			if b.Addr.Disp != s.Off {
				t.Errorf("%s: %s at %d, avo %d", k.Field, s.Name, s.Off, b.Addr.Disp)
			}
		}
		want := 0
		for _, p := range k.Params {
			want++
			if strings.HasPrefix(p.Type, "[]") {
				want += 2
			}
		}
		if len(f.Slots) != want {
			t.Errorf("%s: %d slots for %d params", k.Field, len(f.Slots), len(k.Params))
		}
	}
}

// TestKnownFrames pins the frames the NEON kernels have always used.
func TestKnownFrames(t *testing.T) {
	for _, c := range []struct {
		k    Kernel
		slot string
		off  int
		size int
	}{
		{Rotate, "sign", 192, 196},
		{Rotate, "idx_len", 176, 196},
		{Rotate, "kHeadStride", 136, 196},
		{SoftmaxRow, "scale", 48, 52},
		{AddRows, "idx_base", 48, 72},
		{AddRows64, "table_len", 32, 72},
		{ScoresRow, "scale", 96, 100},
		{XLScoresRow, "r_base", 96, 120},
		{AxpyRows, "w_len", 32, 72},
		{Exp, "src_base", 24, 48},
	} {
		f := c.k.Frame()
		s, ok := f.Lookup(c.slot)
		if !ok || s.Off != c.off || f.Size != c.size {
			t.Errorf("%s: %s at %d of %d, want %d of %d", c.k.Field, c.slot, s.Off, f.Size, c.off, c.size)
		}
	}
}

// TestSignature checks the Go spellings of a grouped and a spelled kernel.
func TestSignature(t *testing.T) {
	if got := ScoresRow.Signature(); got != "(dst, q, k, bias []float32, scale float32)" {
		t.Errorf("ScoresRow: %s", got)
	}
	if got := AddRows.Signature(); got != "(x []float32, table []float32, idx []int32)" {
		t.Errorf("AddRows: %s", got)
	}
	if got := Rotate.FuncType(); got != "func(q, qSrc []float32, qHeads, qStride, qHeadStride int, k, kSrc []float32, kHeads, kStride, kHeadStride int, table []float32, idx []int32, sign float32)" {
		t.Errorf("Rotate: %s", got)
	}
}
