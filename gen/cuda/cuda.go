// Package cuda emits the CUDA backend of a posenc spec: <name>.cu with the
// kernels and their extern "C" launchers, and <name>.cuh declaring them
// (DESIGN.md, "Generated Go package": launchers posenc_<name>_<func>(…,
// cudaStream_t) over device pointers, the Go API's layouts, returning
// cudaError_t). The files are rendered from the text/template sources in
// package templates with the constants of gen/consts baked in; f16 and bf16
// storage compute in f32, and every angle is formed in float64.
//
// The same .cu compiles with nvcc, with clang against templates.Prelude
// (CompilePTX, the compile check without the CUDA SDK), and with the
// system C++ compiler through verify/cudahost's host-emulation header.
package cuda

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/posenc/posenc/gen/consts"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/templates"
)

// launcher is one extern "C" entry point: its function suffix, its
// parameter list and its documentation line for the header.
type launcher struct {
	Func, Params, Doc string
}

// define is one #define of the header.
type define struct {
	Name, Value string
}

// data is what the templates see.
type data struct {
	Header, Name, Upper, Encoding, DType, T string
	Family                                  string // the .cu template: "rope", "bias", "absolute", "relative"
	PerHead                                 bool   // the relative family's one-head layouts (header comment)
	VecElems                                int    // storage elements per 128-bit access
	Reductions                              bool   // block reductions are needed (softmax)
	Consts                                  []define
	Launchers                               []launcher
	Sig                                     map[string]string

	// rope
	HeadDim, RotaryDim, Pairs int
	Interleaved, VecOK        bool
	Freqs, LongFreqs          []string
	FreqDoc, AttnDoc, Attn    string
	Dynamic, LongRoPE         bool
	Base, Factor              string
	OMP                       int
	SeqArg                    string

	// alibi, rpe_bias
	Heads, NumBuckets, BucketSpan int
	ALiBi, Causal                 bool
	Slopes                        []string
	SlopeDoc, BucketRule          string
	BucketMap                     []int

	// absolute (Divisors also for xl)
	DModel, AbsPairs, BinBits int
	PairKind, Table           bool
	Algebraic, Binary         bool
	Mixture                   bool
	Divisors                  []string
	AbsDoc                    string

	// rpe_full (HeadDim, NumBuckets above) and xl (HeadDim, Pairs, VecOK above)
	RMax, RelSpan int
	Scale, XLBase string
	XLTable, XL   bool
}

// Files returns <name>.cu and <name>.cuh for c's spec, or nil when the spec
// does not list the cuda target. Output is deterministic.
func Files(c *consts.Set) ([]emit.File, error) {
	s := c.Spec
	if !s.HasTarget(spec.TargetCUDA) {
		return nil, nil
	}
	d, err := newData(c)
	if err != nil {
		return nil, fmt.Errorf("%s: cuda: %w", s.File, err)
	}
	t, err := templates.CUDA(nil)
	if err != nil {
		return nil, fmt.Errorf("cuda: templates: %w", err)
	}
	var files []emit.File
	for _, f := range []struct{ tmpl, ext string }{{templates.CUDAFile(d.Family), ".cu"}, {templates.CUDAHeader, ".cuh"}} {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, f.tmpl, d); err != nil {
			return nil, fmt.Errorf("%s: cuda: %s: %w", s.File, f.tmpl, err)
		}
		files = append(files, emit.File{Name: s.Name + f.ext, Data: b.Bytes()})
	}
	return files, nil
}

// newData fills the template data of one spec.
func newData(c *consts.Set) (*data, error) {
	s := c.Spec
	d := &data{
		Header:   emit.Header(s.File),
		Name:     s.Name,
		Upper:    strings.ToUpper(s.Name),
		Encoding: s.Encoding,
		DType:    s.DType,
	}
	switch s.DType {
	case "", "f32":
		d.DType, d.T, d.VecElems = "f32", "float", 4
	case "f16":
		d.T, d.VecElems = "__half", 8
	case "bf16":
		d.T, d.VecElems = "__nv_bfloat16", 8
	default:
		return nil, fmt.Errorf("dtype %q is not supported", s.DType)
	}
	T := "posenc_" + s.Name + "_t"
	const stream = "cudaStream_t stream"
	switch s.Encoding {
	case spec.RoPE:
		return d, ropeData(c, d, T, stream)
	case spec.ALiBi, spec.RPEBias:
		return d, biasData(c, d, T, stream)
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned, spec.Mixture:
		return d, absoluteData(c, d, T, stream)
	case spec.RPEFull:
		return d, rpeFullData(c, d, T, stream)
	case spec.XL:
		return d, xlData(c, d, T, stream)
	}
	return nil, fmt.Errorf("encoding %q has no CUDA kernels", s.Encoding)
}

// sig records a launcher: its parameter list (for the .cu definition) and
// its header entry.
func (d *data) sig(fn, doc string, params ...string) {
	if d.Sig == nil {
		d.Sig = map[string]string{}
	}
	p := strings.Join(params, ", ")
	d.Sig[fn] = p
	d.Launchers = append(d.Launchers, launcher{Func: fn, Params: p, Doc: doc})
}

func ropeData(c *consts.Set, d *data, T, stream string) error {
	s := c.Spec
	r := s.RotaryDim
	if r == 0 {
		r = s.HeadDim
	}
	if r < 2 || r%2 != 0 || r > s.HeadDim {
		return fmt.Errorf("rotary_dim %d does not fit head_dim %d", r, s.HeadDim)
	}
	if len(c.Freqs) != r/2 {
		return fmt.Errorf("%d frequencies, want rotary_dim/2 = %d", len(c.Freqs), r/2)
	}
	d.Family = "rope"
	d.HeadDim, d.RotaryDim, d.Pairs = s.HeadDim, r, r/2
	d.Interleaved = s.Layout == spec.LayoutInterleaved
	v := d.VecElems
	if d.Interleaved {
		d.VecOK = r%v == 0 && s.HeadDim%v == 0
	} else {
		d.VecOK = d.Pairs%v == 0 && s.HeadDim%v == 0
	}
	d.Freqs = doubles(c.Freqs)
	d.Attn = float32Lit(c.AttentionFactor)
	d.AttnDoc = strconv.FormatFloat(c.AttentionFactor, 'g', -1, 64)
	d.FreqDoc = "base " + strconv.FormatFloat(s.Base, 'g', -1, 64) + ", no scaling."
	d.SeqArg = "0"
	seq := []string{}
	if sc := s.Scaling; sc != nil {
		d.FreqDoc = "base " + strconv.FormatFloat(s.Base, 'g', -1, 64) + ", " + sc.Type + " scaling (Hugging Face modeling_rope_utils.py)"
		switch sc.Type {
		case spec.ScaleDynamic:
			d.Dynamic = true
			d.FreqDoc += "; unscaled until seq_len > original_max_position."
			d.Base, d.Factor, d.OMP = doubleLit(s.Base), doubleLit(sc.Factor), sc.OriginalMaxPosition
		case spec.ScaleLongRoPE:
			if len(c.LongFreqs) != r/2 {
				return fmt.Errorf("%d long frequencies, want %d", len(c.LongFreqs), r/2)
			}
			d.LongRoPE = true
			d.FreqDoc += "; short_factor."
			d.LongFreqs = doubles(c.LongFreqs)
			d.OMP = sc.OriginalMaxPosition
		default:
			d.FreqDoc += "."
		}
		if d.Dynamic || d.LongRoPE {
			d.SeqArg = "max_pos"
			seq = []string{"int max_pos"}
		}
	}
	seqDoc := ""
	if len(seq) > 0 {
		seqDoc = " max_pos must be max(pos) over the call (Hugging Face's seq_len − 1; it selects the " + s.Scaling.Type + " frequencies as the Go API does)."
	}
	d.Consts = []define{{"HEAD_DIM", strconv.Itoa(s.HeadDim)}, {"ROTARY_DIM", strconv.Itoa(r)}}
	cat := func(a ...[]string) []string {
		var o []string
		for _, x := range a {
			o = append(o, x...)
		}
		return o
	}
	d.sig("apply", "Apply: x[tokens][heads][HEAD_DIM] rotated in place by pos[t]."+seqDoc,
		cat([]string{T + " *x", "const int *pos", "int tokens", "int heads"}, seq, []string{stream})...)
	d.sig("apply_qk", "ApplyQK: q[tokens][q_heads][HEAD_DIM] and k[tokens][k_heads][HEAD_DIM] rotated in place in one launch.",
		cat([]string{T + " *q", T + " *k", "const int *pos", "int tokens", "int q_heads", "int k_heads"}, seq, []string{stream})...)
	d.sig("inverse", "Inverse: rotation by −angle (the backward pass), in place.",
		cat([]string{T + " *x", "const int *pos", "int tokens", "int heads"}, seq, []string{stream})...)
	return nil
}

func biasData(c *consts.Set, d *data, T, stream string) error {
	s := c.Spec
	d.Family, d.Reductions, d.Heads = "bias", true, s.Heads
	d.Consts = []define{{"HEADS", strconv.Itoa(s.Heads)}}
	tab := []string{}
	if s.Encoding == spec.ALiBi {
		if len(c.Slopes) != s.Heads {
			return fmt.Errorf("%d slopes, want heads = %d", len(c.Slopes), s.Heads)
		}
		d.ALiBi, d.Causal = true, s.Causal
		for _, v := range c.Slopes {
			d.Slopes = append(d.Slopes, float32Lit(v))
		}
		d.SlopeDoc = "get_slopes with max_bias " + strconv.FormatFloat(s.MaxBias, 'g', -1, 64)
		if len(s.Slopes) > 0 {
			d.SlopeDoc = "explicit slopes of the spec"
		}
	} else {
		if c.NumBuckets < 1 || len(c.BucketMap) != 2*c.BucketSpan+1 {
			return fmt.Errorf("bucket map of %d entries for span %d", len(c.BucketMap), c.BucketSpan)
		}
		for _, b := range c.BucketMap {
			if b < 0 || b >= c.NumBuckets {
				return fmt.Errorf("bucket %d outside [0, %d)", b, c.NumBuckets)
			}
		}
		d.NumBuckets, d.BucketSpan, d.BucketMap = c.NumBuckets, c.BucketSpan, c.BucketMap
		d.Consts = append(d.Consts, define{"BUCKETS", strconv.Itoa(c.NumBuckets)})
		if b := s.Buckets; b != nil {
			d.BucketRule = fmt.Sprintf("T5 (Hugging Face T5Attention._relative_position_bucket; %d buckets, max_distance %d, bidirectional %v)", b.Num, b.MaxDistance, b.Bidirectional)
		} else {
			d.BucketRule = fmt.Sprintf("clamp (seed 000 gather_biases; r_max %d)", s.RMax)
		}
		tab = []string{"const " + T + " *table"}
	}
	tabDoc := ""
	if !d.ALiBi {
		tabDoc = " table is [HEADS][BUCKETS]."
	}
	mask := ""
	if d.Causal {
		mask = " Masked (causal) keys get −Inf."
	}
	params := func(first string, extra ...string) []string {
		p := append([]string{first}, tab...)
		p = append(p, "int lq", "int lk", "int q_offset")
		p = append(p, extra...)
		return append(p, stream)
	}
	d.sig("add_bias", "AddBias: scores[HEADS][lq][lk] += bias; query i sits at position q_offset+i, key j at j."+mask+tabDoc,
		params(T+" *scores")...)
	d.sig("softmax", "Softmax: fused scale·scores + bias, mask, row-max-subtracted softmax over keys, in place (masked keys and empty rows give 0)."+tabDoc,
		params(T+" *scores", "float scale")...)
	d.sig("bias", "Bias: dst[HEADS][lq][lk] = the bias, unmasked."+tabDoc,
		params(T+" *dst")...)
	return nil
}

func absoluteData(c *consts.Set, d *data, T, stream string) error {
	s := c.Spec
	d.Family, d.DModel = "absolute", s.DModel
	d.Consts = []define{{"D_MODEL", strconv.Itoa(s.DModel)}}
	switch s.Encoding {
	case spec.Sinusoidal, spec.Mixture:
		if len(c.AbsDivisors) != (s.DModel+1)/2 {
			return fmt.Errorf("%d divisors, want %d", len(c.AbsDivisors), (s.DModel+1)/2)
		}
		d.PairKind, d.AbsPairs = true, len(c.AbsDivisors)
		d.Divisors = doubles(c.AbsDivisors)
		d.AbsDoc = "Sinusoidal encoding (Vaswani et al. 2017): PE(p, 2i) = sin(p/base^(2i/d)), PE(p, 2i+1) = cos(p/base^(2i/d)); the angle is formed in float64."
		if s.Encoding == spec.Mixture {
			d.Table, d.Mixture = true, true
			d.AbsDoc = "Mixture encoding (seed 001): x[t] += α·PE_sin(p) + (1−α)·table[p], PE_sin with base 10000, the angle formed in float64."
		}
	case spec.Algebraic:
		if len(c.AbsDivisors) != s.DModel {
			return fmt.Errorf("%d divisors, want %d", len(c.AbsDivisors), s.DModel)
		}
		d.Algebraic = true
		d.Divisors = doubles(c.AbsDivisors)
		d.AbsDoc = "Algebraic encoding (seed 001): PE(p, i) = p / (max_len−1)^(i/(d−1))."
	case spec.Binary:
		d.Binary, d.BinBits = true, c.BinBits
		d.AbsDoc = "Binary encoding (seed 001): PE(p, i) = bit i of p."
	case spec.Learned:
		d.Table = true
		d.AbsDoc = "Learned absolute encoding: x[t] += table[pos[t]]."
	}
	switch {
	case s.Encoding == spec.Learned:
		d.sig("add", "Add: x[t] += table[pos[t]] (table is [rows][D_MODEL]); tokens whose position is outside [0, rows) are left unchanged.",
			T+" *x", "const "+T+" *table", "int rows", "const int *pos", "int tokens", stream)
	case s.Encoding == spec.Mixture:
		d.sig("add", "Add: x[t] += alpha·PE_sin(pos[t]) + (1−alpha)·table[pos[t]] (table is [rows][D_MODEL]); tokens whose position is outside [0, rows) are left unchanged.",
			T+" *x", "const "+T+" *table", "int rows", "const int *pos", "int tokens", "float alpha", stream)
	default:
		d.sig("add", "Add: x[t] += PE(pos[t]) for x[tokens][D_MODEL].",
			T+" *x", "const int *pos", "int tokens", stream)
		d.sig("encode", "Encode: dst[t] = PE(pos[t]) for dst[tokens][D_MODEL] (the Go Encode with one token).",
			T+" *dst", "const int *pos", "int tokens", stream)
	}
	return nil
}

// maxXLTablePairs is the largest xl pair count whose divisors go into a
// __constant__ double table (32 KiB, half of CUDA's 64 KiB of constant
// memory); wider heads compute base^(2i/HeadDim) with pow on the device.
const maxXLTablePairs = 4096

// rpeFullData fills the template data of an rpe_full spec (Shaw et al.
// 2018): per-head Scores and Output over the learned [2·r_max−1][head_dim]
// tables, the Go API's arguments.
func rpeFullData(c *consts.Set, d *data, T, stream string) error {
	s := c.Spec
	if s.HeadDim < 1 || s.RMax < 1 || c.NumBuckets != 2*s.RMax-1 || c.BucketSpan != s.RMax-1 {
		return fmt.Errorf("rpe_full constants not derived (head_dim %d, r_max %d, %d rows, span %d)", s.HeadDim, s.RMax, c.NumBuckets, c.BucketSpan)
	}
	d.Family, d.Reductions, d.PerHead = "relative", true, true
	d.HeadDim, d.RMax, d.NumBuckets, d.RelSpan = s.HeadDim, s.RMax, c.NumBuckets, c.BucketSpan
	d.VecOK = s.HeadDim%d.VecElems == 0
	// 1/√HeadDim rounded once to float32, as the Go package's invSqrtD.
	d.Scale = float32Lit(1 / math.Sqrt(float64(s.HeadDim)))
	d.Consts = []define{{"HEAD_DIM", strconv.Itoa(s.HeadDim)}, {"R_MAX", strconv.Itoa(s.RMax)}, {"BUCKETS", strconv.Itoa(c.NumBuckets)}}
	d.sig("scores", "Scores: dst[lq][lk] = q_i·(k_j + aK[b])/√HEAD_DIM (Shaw et al. 2018, eqs. 4–5) for q[lq][HEAD_DIM], k[lk][HEAD_DIM], aK[BUCKETS][HEAD_DIM], b = clamp(q_offset+i−j, −(R_MAX−1), R_MAX−1) + R_MAX−1.",
		T+" *dst", "const "+T+" *q", "const "+T+" *k", "const "+T+" *aK", "int lq", "int lk", "int q_offset", stream)
	d.sig("output", "Output: dst[lq][HEAD_DIM] = Σ_j weights[i][j]·(v_j + aV[b]) (Shaw et al. 2018, eq. 3) for weights[lq][lk], v[lk][HEAD_DIM], aV[BUCKETS][HEAD_DIM], b as in scores; lk = 0 writes zeros.",
		T+" *dst", "const "+T+" *weights", "const "+T+" *v", "const "+T+" *aV", "int lq", "int lk", "int q_offset", stream)
	return nil
}

// xlData fills the template data of an xl spec (Dai et al. 2019): per-head
// Scores over the caller's projected relative table and Relative, the
// sinusoid R with float64 angles.
func xlData(c *consts.Set, d *data, T, stream string) error {
	s := c.Spec
	if s.HeadDim < 2 || s.HeadDim%2 != 0 || len(c.AbsDivisors) != s.HeadDim/2 {
		return fmt.Errorf("%d sinusoid divisors for head_dim %d", len(c.AbsDivisors), s.HeadDim)
	}
	d.Family, d.PerHead, d.XL = "relative", true, true
	d.HeadDim, d.Pairs = s.HeadDim, s.HeadDim/2
	d.VecOK = s.HeadDim%d.VecElems == 0
	d.XLBase = doubleLit(s.Base)
	d.XLTable = d.Pairs <= maxXLTablePairs
	if d.XLTable {
		d.Divisors = doubles(c.AbsDivisors)
	}
	d.Consts = []define{{"HEAD_DIM", strconv.Itoa(s.HeadDim)}}
	d.sig("scores", "Scores: dst[lq][lk] = (q_i+u)·k_j + (q_i+v)·r[lq−1−i+j] (Dai et al. 2019, A^rel terms (a)+(c) and (b)+(d); no 1/√d scale) for q[lq][HEAD_DIM], k[lk][HEAD_DIM], r[lq+lk−1][HEAD_DIM] (row m: distance q_offset+lq−1−m), u[HEAD_DIM], v[HEAD_DIM].",
		T+" *dst", "const "+T+" *q", "const "+T+" *k", "const "+T+" *r", "const "+T+" *u", "const "+T+" *v", "int lq", "int lk", "int q_offset", stream)
	d.sig("relative", "Relative: dst[n][HEAD_DIM], row m = the sinusoid R of distance n−1−m: R_d[2i] = sin(d/base^(2i/HEAD_DIM)), R_d[2i+1] = cos(…), angles in float64.",
		T+" *dst", "int n", stream)
	return nil
}

// doubleLit formats v as a C double literal that round-trips exactly.
func doubleLit(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		panic(fmt.Sprintf("cuda: non-finite constant %v", v))
	}
	t := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(t, ".e") {
		t += ".0"
	}
	return t
}

// doubles formats a slice with doubleLit.
func doubles(v []float64) []string {
	o := make([]string, len(v))
	for i, x := range v {
		o[i] = doubleLit(x)
	}
	return o
}

// float32Lit formats v rounded to float32 as a C float literal that
// round-trips exactly.
func float32Lit(v float64) string {
	f := float32(v)
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		panic(fmt.Sprintf("cuda: non-finite constant %v", v))
	}
	t := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(t, ".e") {
		t += ".0"
	}
	return t + "f"
}
