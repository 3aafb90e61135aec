package relative

import (
	"fmt"
	"math"
	"strconv"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/internal/emit"
)

// cudaData is what templates/relative.cu.tmpl sees.
type cudaData struct {
	cuda.Common
	XL             bool // xl's kernels, else rpe_full's
	HeadDim, Pairs int
	VecOK          bool
	NumBuckets     int
	RMax, RelSpan  int
	Scale, XLBase  string
	XLTable        bool
	Divisors       []string
}

// CUDAFiles returns <name>.cu and <name>.cuh (nil without the cuda target).
func (c *Consts) CUDAFiles() ([]emit.File, error) {
	return cuda.Files(c.Spec, Family.Name, func(b cuda.Common) (any, error) {
		b.PerHead = true
		d := &cudaData{Common: b}
		build := c.rpeFullData
		if isXL(c.Spec) {
			build = c.xlData
		}
		return d, build(d)
	})
}

// maxXLTablePairs is the largest xl pair count whose divisors go into a
// __constant__ double table (32 KiB, half of CUDA's 64 KiB of constant
// memory); wider heads compute base^(2i/HeadDim) with pow on the device.
const maxXLTablePairs = 4096

// rpeFullData fills the template data of an rpe_full spec (Shaw et al.
// 2018): per-head Scores and Output over the learned [2·r_max−1][head_dim]
// tables, the Go API's arguments.
func (c *Consts) rpeFullData(d *cudaData) error {
	s := c.Spec
	T, stream := d.Store, cuda.Stream
	if s.HeadDim < 1 || s.RMax < 1 || c.NumBuckets != 2*s.RMax-1 || c.BucketSpan != s.RMax-1 {
		return fmt.Errorf("rpe_full constants not derived (head_dim %d, r_max %d, %d rows, span %d)", s.HeadDim, s.RMax, c.NumBuckets, c.BucketSpan)
	}
	d.Reductions = true
	d.HeadDim, d.RMax, d.NumBuckets, d.RelSpan = s.HeadDim, s.RMax, c.NumBuckets, c.BucketSpan
	d.VecOK = s.HeadDim%d.VecElems == 0
	// 1/√HeadDim rounded once to float32, as the Go package's invSqrtD.
	d.Scale = cuda.Float32Lit(1 / math.Sqrt(float64(s.HeadDim)))
	d.Consts = []cuda.Define{{Name: "HEAD_DIM", Value: strconv.Itoa(s.HeadDim)}, {Name: "R_MAX", Value: strconv.Itoa(s.RMax)}, {Name: "BUCKETS", Value: strconv.Itoa(c.NumBuckets)}}
	d.AddLauncher("scores", "Scores: dst[lq][lk] = q_i·(k_j + aK[b])/√HEAD_DIM (Shaw et al. 2018, eqs. 4–5) for q[lq][HEAD_DIM], k[lk][HEAD_DIM], aK[BUCKETS][HEAD_DIM], b = clamp(q_offset+i−j, −(R_MAX−1), R_MAX−1) + R_MAX−1.",
		T+" *dst", "const "+T+" *q", "const "+T+" *k", "const "+T+" *aK", "int lq", "int lk", "int q_offset", stream)
	d.AddLauncher("output", "Output: dst[lq][HEAD_DIM] = Σ_j weights[i][j]·(v_j + aV[b]) (Shaw et al. 2018, eq. 3) for weights[lq][lk], v[lk][HEAD_DIM], aV[BUCKETS][HEAD_DIM], b as in scores; lk = 0 writes zeros.",
		T+" *dst", "const "+T+" *weights", "const "+T+" *v", "const "+T+" *aV", "int lq", "int lk", "int q_offset", stream)
	// The attention form (templates/attention.cu.tmpl), as the Go package has it.
	return d.AddAttention("rpe_full", s.HeadDim, false)
}

// xlData fills the template data of an xl spec (Dai et al. 2019): per-head
// Scores over the caller's projected relative table and Relative, the
// sinusoid R with float64 angles.
func (c *Consts) xlData(d *cudaData) error {
	s := c.Spec
	T, stream := d.Store, cuda.Stream
	if s.HeadDim < 2 || s.HeadDim%2 != 0 || len(c.AbsDivisors) != s.HeadDim/2 {
		return fmt.Errorf("%d sinusoid divisors for head_dim %d", len(c.AbsDivisors), s.HeadDim)
	}
	d.XL = true
	d.HeadDim, d.Pairs = s.HeadDim, s.HeadDim/2
	d.VecOK = s.HeadDim%d.VecElems == 0
	d.XLBase = cuda.DoubleLit(s.Base)
	d.XLTable = d.Pairs <= maxXLTablePairs
	if d.XLTable {
		d.Divisors = cuda.Doubles(c.AbsDivisors)
	}
	d.Consts = []cuda.Define{{Name: "HEAD_DIM", Value: strconv.Itoa(s.HeadDim)}}
	d.AddLauncher("scores", "Scores: dst[lq][lk] = (q_i+u)·k_j + (q_i+v)·r[lq−1−i+j] (Dai et al. 2019, A^rel terms (a)+(c) and (b)+(d); no 1/√d scale) for q[lq][HEAD_DIM], k[lk][HEAD_DIM], r[lq+lk−1][HEAD_DIM] (row m: distance q_offset+lq−1−m), u[HEAD_DIM], v[HEAD_DIM].",
		T+" *dst", "const "+T+" *q", "const "+T+" *k", "const "+T+" *r", "const "+T+" *u", "const "+T+" *v", "int lq", "int lk", "int q_offset", stream)
	d.AddLauncher("relative", "Relative: dst[n][HEAD_DIM], row m = the sinusoid R of distance n−1−m: R_d[2i] = sin(d/base^(2i/HEAD_DIM)), R_d[2i+1] = cos(…), angles in float64.",
		T+" *dst", "int n", stream)
	// The attention form (templates/attention.cu.tmpl), as the Go package has it.
	return d.AddAttention("xl", s.HeadDim, false)
}
