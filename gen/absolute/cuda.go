package absolute

import (
	"fmt"
	"strconv"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/internal/emit"
)

// cudaData is what templates/absolute.cu.tmpl sees.
type cudaData struct {
	cuda.Common
	DModel, AbsPairs, BinBits int
	PairKind, Table           bool
	Algebraic, Binary         bool
	Mixture                   bool
	Divisors                  []string
	AbsDoc                    string
}

// CUDAFiles returns <name>.cu and <name>.cuh (nil without the cuda target).
func (c *Consts) CUDAFiles() ([]emit.File, error) {
	return cuda.Files(c.Spec, Family.Name, func(b cuda.Common) (any, error) { return c.cudaData(b) })
}

func (c *Consts) cudaData(b cuda.Common) (*cudaData, error) {
	s := c.Spec
	d := &cudaData{Common: b, DModel: s.DModel}
	T, stream := d.Store, cuda.Stream
	d.Consts = []cuda.Define{{Name: "D_MODEL", Value: strconv.Itoa(s.DModel)}}
	switch memberOf(s) {
	case sinusoidal, mixture:
		if len(c.AbsDivisors) != (s.DModel+1)/2 {
			return nil, fmt.Errorf("%d divisors, want %d", len(c.AbsDivisors), (s.DModel+1)/2)
		}
		d.PairKind, d.AbsPairs = true, len(c.AbsDivisors)
		d.Divisors = cuda.Doubles(c.AbsDivisors)
		d.AbsDoc = "Sinusoidal encoding (Vaswani et al. 2017): PE(p, 2i) = sin(p/base^(2i/d)), PE(p, 2i+1) = cos(p/base^(2i/d)); the angle is formed in float64."
		if memberOf(s) == mixture {
			d.Table, d.Mixture = true, true
			d.AbsDoc = "Mixture of absolute encodings: x[t] += α·PE_sin(p) + (1−α)·table[p], PE_sin with base 10000, the angle formed in float64."
		}
	case algebraic:
		if len(c.AbsDivisors) != s.DModel {
			return nil, fmt.Errorf("%d divisors, want %d", len(c.AbsDivisors), s.DModel)
		}
		d.Algebraic = true
		d.Divisors = cuda.Doubles(c.AbsDivisors)
		d.AbsDoc = "Algebraic encoding: PE(p, i) = p / (max_len−1)^(i/(d−1))."
	case binary:
		d.Binary, d.BinBits = true, c.BinBits
		d.AbsDoc = "Binary encoding: PE(p, i) = bit i of p."
	case learned:
		d.Table = true
		d.AbsDoc = "Learned absolute encoding: x[t] += table[pos[t]]."
	}
	switch {
	case memberOf(s) == learned:
		d.AddLauncher("add", "Add: x[t] += table[pos[t]] (table is [rows][D_MODEL]); tokens whose position is outside [0, rows) are left unchanged.",
			T+" *x", "const "+T+" *table", "int rows", "const int *pos", "int tokens", stream)
	case memberOf(s) == mixture:
		d.AddLauncher("add", "Add: x[t] += alpha·PE_sin(pos[t]) + (1−alpha)·table[pos[t]] (table is [rows][D_MODEL]); tokens whose position is outside [0, rows) are left unchanged.",
			T+" *x", "const "+T+" *table", "int rows", "const int *pos", "int tokens", "float alpha", stream)
	default:
		d.AddLauncher("add", "Add: x[t] += PE(pos[t]) for x[tokens][D_MODEL].",
			T+" *x", "const int *pos", "int tokens", stream)
		d.AddLauncher("encode", "Encode: dst[t] = PE(pos[t]) for dst[tokens][D_MODEL] (the Go Encode with one token).",
			T+" *dst", "const int *pos", "int tokens", stream)
	}
	return d, nil
}
