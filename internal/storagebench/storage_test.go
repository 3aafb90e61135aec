package storagebench

import (
	"math"
	"testing"

	f32 "github.com/posenc/posenc/generated/llama31_8b"
	bf16 "github.com/posenc/posenc/internal/goldens/grope_llama31_bf16"
)

// Geometry: 32 heads of 128 dims, tokens such that the float32 tensor is 64
// MiB (the bf16 one 32 MiB), positions t mod 8192 (table rows).
const (
	heads  = 32
	tokens = 64 << 20 / (heads * f32.HeadDim * 4)
)

func input() ([]float32, []uint16, []int32) {
	x := make([]float32, tokens*heads*f32.HeadDim)
	h := make([]uint16, len(x))
	for i := range x {
		x[i] = float32(i%1000)/1000 - 0.5
		h[i] = uint16(math.Float32bits(x[i]) >> 16) // truncation: any bf16 input will do
	}
	pos := make([]int32, tokens)
	for t := range pos {
		pos[t] = int32(t % f32.MaxPosition)
	}
	return x, h, pos
}

// BenchmarkApply64MiB runs Apply of the float32 and the bf16 package in
// turn, for every variant both can run; tokens/s is the figure to compare
// (issue 14 asks bf16 ≥ 1.5× float32).
func BenchmarkApply64MiB(b *testing.B) {
	x, h, pos := input()
	for _, v := range f32.Variants() {
		if !f32.VariantAvailable(v) || !bf16.VariantAvailable(v) {
			continue
		}
		b.Run(v+"/f32", func(b *testing.B) {
			defer f32.UseVariant(v)()
			f32.Apply(x, pos, heads) // table built outside the timed loop
			for b.Loop() {
				f32.Apply(x, pos, heads)
			}
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
		b.Run(v+"/bf16", func(b *testing.B) {
			defer bf16.UseVariant(v)()
			bf16.Apply(h, pos, heads)
			for b.Loop() {
				bf16.Apply(h, pos, heads)
			}
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
