package bias

import (
	"fmt"
	"strconv"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/internal/emit"
)

// cudaData is what templates/bias.cu.tmpl sees.
type cudaData struct {
	cuda.Common
	Heads, NumBuckets, BucketSpan int
	ALiBi, Causal                 bool
	Slopes                        []string
	SlopeDoc, BucketRule          string
	BucketMap                     []int
}

// CUDAFiles returns <name>.cu and <name>.cuh (nil without the cuda target).
func (c *Consts) CUDAFiles() ([]emit.File, error) {
	return cuda.Files(c.Spec, Family.Name, func(b cuda.Common) (any, error) { return c.cudaData(b) })
}

func (c *Consts) cudaData(b cuda.Common) (*cudaData, error) {
	s := c.Spec
	d := &cudaData{Common: b}
	T := d.Store
	d.Reductions, d.Heads = true, s.Heads
	d.Consts = []cuda.Define{{Name: "HEADS", Value: strconv.Itoa(s.Heads)}}
	tab := []string{}
	if !isRPE(s) {
		if len(c.Slopes) != s.Heads {
			return nil, fmt.Errorf("%d slopes, want heads = %d", len(c.Slopes), s.Heads)
		}
		d.ALiBi, d.Causal = true, isCausal(s)
		for _, v := range c.Slopes {
			d.Slopes = append(d.Slopes, cuda.Float32Lit(v))
		}
		d.SlopeDoc = "get_slopes with max_bias " + strconv.FormatFloat(s.MaxBias, 'g', -1, 64)
		if len(s.Slopes) > 0 {
			d.SlopeDoc = "explicit slopes of the spec"
		}
	} else {
		if c.NumBuckets < 1 || len(c.BucketMap) != 2*c.BucketSpan+1 {
			return nil, fmt.Errorf("bucket map of %d entries for span %d", len(c.BucketMap), c.BucketSpan)
		}
		for _, b := range c.BucketMap {
			if b < 0 || b >= c.NumBuckets {
				return nil, fmt.Errorf("bucket %d outside [0, %d)", b, c.NumBuckets)
			}
		}
		d.NumBuckets, d.BucketSpan, d.BucketMap = c.NumBuckets, c.BucketSpan, c.BucketMap
		d.Consts = append(d.Consts, cuda.Define{Name: "BUCKETS", Value: strconv.Itoa(c.NumBuckets)})
		if b := s.Buckets; b != nil {
			d.BucketRule = fmt.Sprintf("T5 (Hugging Face T5Attention._relative_position_bucket; %d buckets, max_distance %d, bidirectional %v)", b.Num, b.MaxDistance, b.Bidirectional)
		} else {
			d.BucketRule = fmt.Sprintf("clamp (Shaw et al. 2018; r_max %d)", s.RMax)
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
		return append(p, cuda.Stream)
	}
	d.AddLauncher("add_bias", "AddBias: scores[HEADS][lq][lk] += bias; query i sits at position q_offset+i, key j at j."+mask+tabDoc,
		params(T+" *scores")...)
	d.AddLauncher("softmax", "Softmax: fused scale·scores + bias, mask, row-max-subtracted softmax over keys, in place (masked keys and empty rows give 0)."+tabDoc,
		params(T+" *scores", "float scale")...)
	d.AddLauncher("bias", "Bias: dst[HEADS][lq][lk] = the bias, unmasked."+tabDoc,
		params(T+" *dst")...)
	// The position forms: qpos[lq] and kpos[lk] (device int32; kpos < 0 is a
	// padding key), heads [h0, h0+nh).
	pos := func(first string, extra ...string) []string {
		p := append([]string{first}, tab...)
		p = append(p, "const int *qpos", "const int *kpos", "int lq", "int lk", "int h0", "int nh")
		p = append(p, extra...)
		return append(p, cuda.Stream)
	}
	posDoc := " scores[nh][lq][lk] for heads [h0, h0+nh); query i at qpos[i] (≥ 0, not checked), key j at kpos[j] (< 0: padding, masked)." + tabDoc
	d.AddLauncher("add_bias_pos", "AddBiasPos: scores += bias; masked keys get −Inf."+posDoc,
		pos(T+" *scores")...)
	d.AddLauncher("softmax_pos", "SoftmaxPos: the position form of softmax (masked keys and empty rows give 0)."+posDoc,
		pos(T+" *scores", "float scale")...)
	d.AddLauncher("bias_pos", "BiasPos: dst = the bias, 0 on padding keys."+posDoc,
		pos(T+" *dst")...)
	if s.HeadDim > 0 {
		// The attention form (templates/attention.cu.tmpl), as the Go
		// package has it when the spec gives head_dim.
		fam := "alibi"
		if !d.ALiBi {
			fam = "rpe_bias"
		}
		if err := d.AddAttention(fam, s.HeadDim, false); err != nil {
			return nil, err
		}
	}
	return d, nil
}
