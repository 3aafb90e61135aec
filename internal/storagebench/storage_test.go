package storagebench

import (
	"testing"
	"time"

	f32 "github.com/posenc/posenc/generated/llama31_8b"
	bf16 "github.com/posenc/posenc/internal/goldens/grope_llama31_bf16"
	f16 "github.com/posenc/posenc/internal/goldens/grope_llama31_f16"
	"github.com/posenc/posenc/verify"
)

// Geometry: 32 heads of 128 dims, tokens such that the float32 tensor is 64
// MiB (a 16-bit one 32 MiB), positions t mod 8192 (table rows).
const (
	heads  = 32
	tokens = 64 << 20 / (heads * f32.HeadDim * 4)
)

// input returns the float32 tensor, the same values rounded to bf16 and to
// f16 (their encodings, by verify's storage rounding), and the positions.
func input() ([]float32, []uint16, []uint16, []int32) {
	x := make([]float32, tokens*heads*f32.HeadDim)
	b := make([]uint16, len(x))
	h := make([]uint16, len(x))
	for i := range x {
		x[i] = float32(i%1000)/1000 - 0.5
		b[i] = verify.StorageBF16.Bits(verify.StorageBF16.Round(float64(x[i])))
		h[i] = verify.StorageF16.Bits(verify.StorageF16.Round(float64(x[i])))
	}
	pos := make([]int32, tokens)
	for t := range pos {
		pos[t] = int32(t % f32.MaxPosition)
	}
	return x, b, h, pos
}

// BenchmarkApply64MiB pairs, per variant and 16-bit type, a float32 Apply
// and a 16-bit Apply of the same tokens in every iteration, each timed on
// its own, so that both sides see the same machine: it reports the tokens
// per second of each and their ratio, 16-bit ÷ float32, as x-f32 (issue 14
// asks ≥ 1.5).
func BenchmarkApply64MiB(b *testing.B) {
	x, hb, hf, pos := input()
	sixteen := []struct {
		name      string
		available func(string) bool
		use       func(string) func()
		apply     func([]uint16, []int32, int)
		data      []uint16
	}{
		{"bf16", bf16.VariantAvailable, bf16.UseVariant, func(h []uint16, p []int32, n int) { bf16.Apply(h, p, n) }, hb},
		{"f16", f16.VariantAvailable, f16.UseVariant, func(h []uint16, p []int32, n int) { f16.Apply(h, p, n) }, hf},
	}
	for _, v := range f32.Variants() {
		for _, s := range sixteen {
			if !f32.VariantAvailable(v) || !s.available(v) {
				continue
			}
			b.Run(v+"/"+s.name, func(b *testing.B) {
				defer f32.UseVariant(v)()
				defer s.use(v)()
				f32.Apply(x, pos, heads) // tables built outside the timed loop
				s.apply(s.data, pos, heads)
				var t32, t16 time.Duration
				for b.Loop() {
					t0 := time.Now()
					f32.Apply(x, pos, heads)
					t1 := time.Now()
					s.apply(s.data, pos, heads)
					t16 += time.Since(t1)
					t32 += t1.Sub(t0)
				}
				n := float64(tokens) * float64(b.N)
				b.ReportMetric(n/t32.Seconds(), "f32-tokens/s")
				b.ReportMetric(n/t16.Seconds(), s.name+"-tokens/s")
				b.ReportMetric(t32.Seconds()/t16.Seconds(), "x-f32")
			})
		}
	}
}
