package cudahost

import (
	"testing"

	"github.com/posenc/posenc/verify"
)

// TestAttentionZoo runs the CUDA attention form of zoo specs, host
// emulated, through verify.RunAttention alone (Lib.Verify merges it into
// the spec's row): ALiBi with 32 heads, T5's buckets, RoPE with GQA and with
// interleaved partial rotary of head_dim 256, and LongRoPE (max_pos).
func TestAttentionZoo(t *testing.T) {
	for _, name := range []string{"bloom_7b1", "t5_base", "llama2_7b", "gptj_6b", "phi35_mini"} {
		t.Run(name, func(t *testing.T) {
			if _, ok := CXX(); !ok {
				t.Skip("no C++ compiler")
			}
			s, cu := zooCU(t, name)
			if !HasAttention(s) {
				t.Fatalf("%s: no attention form", name)
			}
			l, err := Build(s, cu)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := verify.RunAttention(s, l.Attention())
			r.Target = Target + "-attention"
			verify.Emit(t, r)
			if r.Cases < 40 || r.MaxRatio > 1 {
				t.Errorf("%s: %d cases, max ratio %g", name, r.Cases, r.MaxRatio)
			}
		})
	}
}

// TestAttentionLauncherErrors calls the launcher with arguments the Go
// adapter refuses: each must return cudaErrorInvalidValue (1) without
// launching, the output untouched.
func TestAttentionLauncherErrors(t *testing.T) {
	if _, ok := CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	s, cu := zooCU(t, "bloom_7b1")
	l, err := Build(s, cu)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hd, h := s.HeadDim, s.Heads
	qpos, kpos := []int32{3}, []int32{0, 1}
	for _, c := range []struct {
		name            string
		qheads, kvheads int64
	}{
		{"kvheads 0", int64(h), 0},
		{"qheads not a multiple of kvheads", int64(h), int64(h - 1)},
		{"qheads not HEADS", int64(2 * h), int64(h)},
		{"qheads 0", 0, 1},
	} {
		out := make([]float32, 2*h*hd)
		for i := range out {
			out[i] = 7
		}
		q, k, v := make([]float32, 2*h*hd), make([]float32, 2*h*hd), make([]float32, 2*h*hd)
		st, err := l.call(opAttention, []int64{c.qheads, c.kvheads, 0, 1, 0}, 0.5, [][]float32{out, q, k, v}, [][]int32{qpos, kpos})
		if err != nil {
			t.Fatal(err)
		}
		if st != 1 {
			t.Errorf("%s: status %d (%s), want cudaErrorInvalidValue", c.name, st, statusText(st))
		}
		for i, x := range out {
			if x != 7 {
				t.Fatalf("%s: out[%d] = %g written", c.name, i, x)
			}
		}
	}
}
