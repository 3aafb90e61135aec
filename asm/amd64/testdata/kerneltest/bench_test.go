package kerneltest

import (
	"math"
	"math/rand"
	"testing"
)

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
						v.Rotate(x, benchHeads, nil, 0, table, idx, 1)
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

// goSoftmax is the plain Go softmax-with-bias loop.
func goSoftmax(row, bias []float32, scale float32) {
	m := float32(math.Inf(-1))
	for j := range row {
		v := scale*row[j] + bias[j]
		row[j] = v
		if v > m {
			m = v
		}
	}
	var sum float32
	for j := range row {
		e := float32(math.Exp(float64(row[j] - m)))
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range row {
		row[j] *= inv
	}
}

func BenchmarkSoftmax512(b *testing.B) {
	r := rand.New(rand.NewSource(6))
	row, bias := make([]float32, 512), make([]float32, 512)
	fill(r, row, -4, 4)
	fill(r, bias, -8, 0)
	for _, v := range biasCases[0].variants {
		if !v.Available {
			continue
		}
		b.Run(v.Name, func(b *testing.B) {
			b.SetBytes(4 * 512)
			for i := 0; i < b.N; i++ {
				v.SoftmaxRow(row, bias, 0.125)
			}
		})
	}
	b.Run("goloop", func(b *testing.B) {
		b.SetBytes(4 * 512)
		for i := 0; i < b.N; i++ {
			goSoftmax(row, bias, 0.125)
		}
	})
}
