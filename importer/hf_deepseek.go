package importer

// DeepSeek V2 and V3 (multi-head latent attention): RoPE turns only the
// qk_rope_head_dim-wide rotary part of each query head (q_pe, split off
// after the qk_nope_head_dim part) and the shared rotary key k_pe
// (transformers models/deepseek_v2, deepseek_v3; DeepSeek's
// inference/model.py). The spec's head_dim is that rotary part.

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/spec"
)

// deepseekFamily returns the RoPE family of a DeepSeek V2/V3 config.
// The pairs are consecutive dims (2i, 2i+1):
//   - V2 (transformers DeepseekV2 apply_rotary_emb) and DeepSeek's own
//     code multiply them as complex numbers: exactly the interleaved layout;
//   - transformers' DeepseekV3 with rope_interleave (the default) first
//     de-interleaves q_pe and k_pe (apply_rotary_pos_emb_interleave:
//     view(d/2, 2).transpose) and then applies rotate_half: the same
//     rotation of the same pairs, its output stored de-interleaved. The
//     permutation is the same for queries and keys, so every q·k score
//     equals the interleaved layout's; rope_interleave false rotates
//     (i, i+d/2) pairs: the half layout.
func deepseekFamily(mt string, interleave bool) *ropeFamily {
	f := llamaLike(mt, 10000, 1) // DeepseekV2Config/DeepseekV3Config(rope_theta=10000)
	f.headDimKey = "qk_rope_head_dim"
	f.headDim = 64 // qk_rope_head_dim=64
	f.handles = []string{"qk_rope_head_dim", "rope_interleave"}
	f.partialKeys = nil
	if interleave {
		f.layout = spec.LayoutInterleaved
		f.layoutWhy = "DeepSeek rotates consecutive pairs (2i, 2i+1) of q_pe and k_pe (complex multiply; transformers' V3 rope_interleave permutes them to rotate_half order, which leaves q·k unchanged)"
	} else {
		f.layoutWhy = "rope_interleave false: transformers' DeepseekV3 applies rotate_half to q_pe and k_pe: pairs (i, i+R/2)"
	}
	return f
}

// hfDeepSeek imports a deepseek_v2 / deepseek_v3 config as one spec of
// the rotary sub-head.
func hfDeepSeek(name, mt string, cfg obj) ([]Spec, error) {
	interleave := true
	if cfg.has("rope_interleave") {
		var err error
		if interleave, err = cfg.boolean("rope_interleave"); err != nil {
			return nil, err
		}
		if !interleave && mt == "deepseek_v2" {
			return nil, cfg.errf("rope_interleave", "false is not read by transformers' DeepseekV2, which always rotates consecutive pairs")
		}
	}
	notes := []string{"DeepSeek multi-head latent attention: this spec rotates the qk_rope_head_dim part of each query head (after qk_nope_head_dim) and the shared key k_pe; the other dims carry no position"}
	if n := deepseekSoftmaxNote(cfg); n != "" {
		notes = append(notes, n)
	}
	s, err := ropeSpec(name, mt, cfg, deepseekFamily(mt, interleave), notes...)
	if err != nil {
		return nil, err
	}
	return []Spec{s}, nil
}

// deepseekSoftmaxNote states the attention softmax scale of a YaRN-scaled
// DeepSeek model, which is not part of the spec: DeepSeek's reference code
// (inference/model.py, and its V2 modeling_deepseek.py), transformers'
// DeepseekV3Attention and vLLM use qk_head_dim^−0.5 · mscale², mscale =
// yarn_get_mscale(factor, mscale_all_dim) = 0.1·mscale_all_dim·ln(factor)+1;
// transformers' DeepseekV2Attention uses qk_head_dim^−0.5 alone. The
// generated package exports the value as SoftmaxScale(qk_head_dim).
func deepseekSoftmaxNote(cfg obj) string {
	rp, err := cfg.object(cfg.first("rope_scaling", "rope_parameters"))
	if err != nil || !rp.has("mscale_all_dim") || !rp.has("factor") {
		return ""
	}
	ma, err1 := rp.num("mscale_all_dim")
	f, err2 := rp.num("factor")
	if err1 != nil || err2 != nil || ma == 0 {
		return ""
	}
	m := 1.0
	if f > 1 {
		m = 0.1*ma*math.Log(f) + 1
	}
	qk := 0
	nope, rope := 128, 64 // class defaults qk_nope_head_dim, qk_rope_head_dim
	if cfg.has("qk_nope_head_dim") {
		if v, err := cfg.integer("qk_nope_head_dim", 1); err == nil {
			nope = v
		}
	}
	if cfg.has("qk_rope_head_dim") {
		if v, err := cfg.integer("qk_rope_head_dim", 1); err == nil {
			rope = v
		}
	}
	qk = nope + rope
	return fmt.Sprintf("softmax scale (not part of this spec): DeepSeek's reference code, transformers' DeepseekV3Attention and vLLM use qk_head_dim^-0.5 · mscale² = %d^-0.5 · %s² = %s, mscale = yarn_get_mscale(factor %s, mscale_all_dim %s); transformers' DeepseekV2Attention omits mscale²; the generated package's SoftmaxScale(%d) returns it",
		qk, fmtNum(m), fmtNum(math.Pow(float64(qk), -0.5)*m*m), fmtNum(f), fmtNum(ma), qk)
}
