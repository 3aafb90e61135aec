package rope

import (
	"fmt"
	"strconv"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// cudaData is what templates/rope.cu.tmpl sees.
type cudaData struct {
	cuda.Common
	HeadDim, RotaryDim, Pairs int
	Interleaved, VecOK        bool
	Freqs, LongFreqs          []string
	FreqDoc, AttnDoc, Attn    string
	Dynamic, LongRoPE         bool
	Base, Factor              string // dynamic NTK (DynamicNTK)
	OMP                       int
	SeqArg                    string
	mropeCUDA
	temperatureCUDA
}

// CUDAFiles returns <name>.cu and <name>.cuh (nil without the cuda target).
func (c *Consts) CUDAFiles() ([]emit.File, error) {
	return cuda.Files(c.Spec, Family.Name, func(b cuda.Common) (any, error) { return c.cudaData(b) })
}

func (c *Consts) cudaData(b cuda.Common) (*cudaData, error) {
	s := c.Spec
	r := s.RotaryDim
	if len(c.Freqs) != r/2 {
		return nil, fmt.Errorf("%d frequencies, want rotary_dim/2 = %d", len(c.Freqs), r/2)
	}
	d := &cudaData{Common: b}
	T := d.Store
	d.HeadDim, d.RotaryDim, d.Pairs = s.HeadDim, r, r/2
	d.Interleaved = s.Layout == spec.LayoutInterleaved
	v := d.VecElems
	if d.Interleaved {
		d.VecOK = r%v == 0 && s.HeadDim%v == 0
	} else {
		d.VecOK = d.Pairs%v == 0 && s.HeadDim%v == 0
	}
	d.Freqs = cuda.Doubles(c.Freqs)
	d.Attn = cuda.Float32Lit(c.AttentionFactor)
	d.AttnDoc = strconv.FormatFloat(c.AttentionFactor, 'g', -1, 64)
	d.FreqDoc = "base " + strconv.FormatFloat(s.Base, 'g', -1, 64) + ", no scaling."
	d.SeqArg = "0"
	seq := []string{}
	if sc := s.Scaling; sc != nil {
		d.FreqDoc = "base " + strconv.FormatFloat(s.Base, 'g', -1, 64) + ", " + sc.Type + " scaling (Hugging Face modeling_rope_utils.py)"
		switch {
		case c.Dynamic != nil:
			d.Dynamic = true
			d.FreqDoc += "; unscaled until seq_len > original_max_position."
			d.Base, d.Factor, d.OMP = cuda.DoubleLit(c.Dynamic.Base), cuda.DoubleLit(c.Dynamic.Factor), c.Dynamic.OMP
		case c.LongFreqs != nil:
			if len(c.LongFreqs) != r/2 {
				return nil, fmt.Errorf("%d long frequencies, want %d", len(c.LongFreqs), r/2)
			}
			d.LongRoPE = true
			d.FreqDoc += "; short_factor."
			d.LongFreqs = cuda.Doubles(c.LongFreqs)
			d.OMP = sc.OriginalMaxPosition
		default:
			d.FreqDoc += "."
		}
		if c.RuntimeSwitch() {
			d.SeqArg = "max_pos"
			seq = []string{"int max_pos"}
		}
	}
	seqDoc := ""
	if len(seq) > 0 {
		seqDoc = " max_pos must be max(pos) over the call (Hugging Face's seq_len − 1; it selects the " + s.Scaling.Type + " frequencies as the Go API does)."
	}
	d.Consts = []cuda.Define{{Name: "HEAD_DIM", Value: strconv.Itoa(s.HeadDim)}, {Name: "ROTARY_DIM", Value: strconv.Itoa(r)}}
	cat := func(a ...[]string) []string {
		var o []string
		for _, x := range a {
			o = append(o, x...)
		}
		return o
	}
	d.AddLauncher("apply", "Apply: x[tokens][heads][HEAD_DIM] rotated in place by pos[t]."+seqDoc,
		cat([]string{T + " *x", "const int *pos", "int tokens", "int heads"}, seq, []string{cuda.Stream})...)
	d.AddLauncher("apply_qk", "ApplyQK: q[tokens][q_heads][HEAD_DIM] and k[tokens][k_heads][HEAD_DIM] rotated in place in one launch.",
		cat([]string{T + " *q", T + " *k", "const int *pos", "int tokens", "int q_heads", "int k_heads"}, seq, []string{cuda.Stream})...)
	d.AddLauncher("inverse", "Inverse: rotation by −angle (the backward pass), in place.",
		cat([]string{T + " *x", "const int *pos", "int tokens", "int heads"}, seq, []string{cuda.Stream})...)
	c.cudaMRoPE(d)
	c.cudaTemperature(d)
	return d, nil
}
