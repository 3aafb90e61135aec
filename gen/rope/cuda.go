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
	// ShiftSeqArg is the max_pos the shift launcher passes: seq_len − 1
	// (FrequenciesAt(seq_len)) with a run-time switch, else 0.
	ShiftSeqArg string
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
	d.SeqArg, d.ShiftSeqArg = "0", "0"
	seq, shiftSeq := []string{}, []string{}
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
			d.SeqArg, d.ShiftSeqArg = "max_pos", "seq_len - 1"
			seq = []string{"int max_pos"}
			shiftSeq = []string{"int seq_len"}
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
	// The engine forms (Go: ApplyStrided, ApplyHeadMajor, ApplyQKStrided,
	// ApplyTo, ApplyToSlots, Shift). Strides count elements of the storage
	// type; they are long long so that a tensor may exceed 2^31 elements.
	d.AddLauncher("apply_strided", "ApplyStrided: head h of token t at x + t*stride + h*head_stride (HEAD_DIM elements) rotated in place; "+
		"elements at no head are not touched. The heads must not overlap (the Go API checks this; the launcher does not).",
		cat([]string{T + " *x", "const int *pos", "int tokens", "int heads", "long long stride", "long long head_stride"}, seq, []string{cuda.Stream})...)
	d.AddLauncher("apply_head_major", "ApplyHeadMajor: x[heads][tokens][HEAD_DIM] (per-head layout) rotated in place.",
		cat([]string{T + " *x", "const int *pos", "int tokens", "int heads"}, seq, []string{cuda.Stream})...)
	d.AddLauncher("apply_qk_strided", "ApplyQKStrided: packed QKV rows (vLLM's layout), row t at qkv + t*stride holding q_heads query heads, "+
		"then k_heads key heads, then the values; q and k rotated in place, the rest of the row untouched. stride >= (q_heads+k_heads)*HEAD_DIM.",
		cat([]string{T + " *qkv", "const int *pos", "int tokens", "int q_heads", "int k_heads", "long long stride"}, seq, []string{cuda.Stream})...)
	d.AddLauncher("apply_to", "ApplyTo: dst[tokens][heads][HEAD_DIM] = the rotation of src (same layout), dims ROTARY_DIM..HEAD_DIM copied; "+
		"src is only read. dst == src is apply; otherwise they must not overlap.",
		cat([]string{T + " *dst", "const " + T + " *src", "const int *pos", "int tokens", "int heads"}, seq, []string{cuda.Stream})...)
	d.AddLauncher("apply_to_slots", "ApplyToSlots: token t of src[tokens][heads][HEAD_DIM], rotated by pos[t], written to row slots[t] of "+
		"cache[cache_slots][heads][HEAD_DIM] (paged KV-cache append: slot = page*page_size + offset). A token whose slot is outside "+
		"[0, cache_slots) is skipped. Tokens run in parallel: the slots must be distinct (a slot given twice gets either token). "+
		"src must not overlap cache."+seqDoc,
		cat([]string{T + " *cache", "long long cache_slots", "const int *slots", "const " + T + " *src", "const int *pos", "int tokens", "int heads"}, seq, []string{cuda.Stream})...)
	shiftDoc := ""
	if len(shiftSeq) > 0 {
		shiftDoc = " The frequencies are FrequenciesAt(seq_len) of the Go API (seq_len <= 0: the default ones)."
	}
	d.AddLauncher("shift", "Shift: x[tokens][heads][HEAD_DIM] rotated in place by the angles delta*w_i, without the attention factor "+
		"(ggml's context shift: keys cached at position p move to p + delta)."+shiftDoc,
		cat([]string{T + " *x", "int delta", "int tokens", "int heads"}, shiftSeq, []string{cuda.Stream})...)
	c.cudaTemperature(d)
	// The attention form (templates/attention.cu.tmpl) with RoPE's term;
	// M-RoPE's rotates at the ids its launchers take (qids, kids).
	var err error
	if c.MRoPE != nil {
		err = d.AddMRoPEAttention(s.HeadDim)
	} else {
		err = d.AddAttention("rope", s.HeadDim, c.RuntimeSwitch())
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}
