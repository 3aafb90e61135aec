package importer

// ALiBi models: BLOOM, Falcon with alibi: true and MPT. alibiDoc is shared
// with the GGUF importer.

import (
	"fmt"
	"strings"

	"github.com/posenc/posenc/spec"
)

// bloomWidth are BloomConfig's and FalconConfig's width keys: both take a
// legacy n_embed that overrides hidden_size.
var bloomWidth = []string{"n_embed", "hidden_size"}

// alibiDoc writes a causal ALiBi spec with the paper's slopes for maxBias.
func alibiDoc(d *doc, heads int, maxBias float64) {
	d.set("encoding", spec.ALiBi)
	d.setInt("heads", heads)
	d.setNum("max_bias", maxBias)
	d.setBool("causal", true)
}

// hfBloom imports BLOOM: BloomConfig(n_head), attribute_map
// num_attention_heads→n_head. modeling_bloom.py build_alibi_tensor uses
// slopes 2^(−8i/n) (base 2^(−2^(−(log2 n − 3)))) with the paper's
// interleaved rule for the heads beyond the largest power of two: max_bias 8.
func hfBloom(cfg obj, d *doc) error {
	return hfBloomALiBi(cfg, d, []string{"n_head", "num_attention_heads"}, "modeling_bloom.py",
		"ALiBi: modeling_bloom.py build_alibi_tensor, slopes 2^(-8i/n) (max_bias 8); causal decoder")
}

// hfFalconALiBi imports Falcon with alibi: true (e.g. falcon-rw-1b):
// modeling_falcon.py's build_alibi_tensor is BLOOM's, max_bias 8.
func hfFalconALiBi(cfg obj, d *doc) error {
	return hfBloomALiBi(cfg, d, falconFamily.headsKeys, "modeling_falcon.py",
		"ALiBi: config alibi true; modeling_falcon.py build_alibi_tensor (BLOOM's), slopes 2^(-8i/n) (max_bias 8); causal decoder")
}

// hfBloomALiBi writes BLOOM's ALiBi (max_bias 8) with the head count read
// from the first of headsKeys present, head_dim from the width (modeling
// names the modeling file that divides it), and source as the provenance
// note.
func hfBloomALiBi(cfg obj, d *doc, headsKeys []string, modeling, source string) error {
	heads, k, err := hfHeads(cfg, headsKeys)
	if err != nil {
		return err
	}
	d.note("%s", source)
	d.note("heads %d: config %s", heads, k)
	alibiDoc(d, heads, 8)
	return hfWidthHeadDim(cfg, d, bloomWidth, heads, k, modeling)
}

// hfWidthHeadDim writes the optional head_dim of an ALiBi spec (the head
// size of the attention form): width / heads, as the modeling code's
// attention computes it (hidden_size // num_heads, refusing a remainder),
// with width the first of widthKeys present and heads read from headsKey.
// A config head_dim, which these models' code does not read, must agree
// with it; with no width key it alone gives head_dim. A config with neither
// imports without head_dim (no attention form), saying so in a comment.
func hfWidthHeadDim(cfg obj, d *doc, widthKeys []string, heads int, headsKey, modeling string) error {
	wk := cfg.first(widthKeys...)
	hd, from := 0, ""
	if wk != "" {
		width, err := cfg.integer(wk, 1)
		if err != nil {
			return err
		}
		if width%heads != 0 {
			return cfg.errf(wk, "%s %d is not divisible by %s %d, so head_dim is undefined (%s's attention refuses it)", wk, width, headsKey, heads, modeling)
		}
		hd, from = width/heads, fmt.Sprintf(" = %s %d / %s %d (%s's attention head size)", wk, width, headsKey, heads, modeling)
		if hd > spec.MaxAttentionHeadDim {
			return cfg.errf(wk, "head_dim %s / %s = %d exceeds %d", wk, headsKey, hd, spec.MaxAttentionHeadDim)
		}
	}
	if cfg.has("head_dim") {
		given, err := cfg.integerIn("head_dim", 1, spec.MaxAttentionHeadDim)
		if err != nil {
			return err
		}
		if wk != "" && given != hd {
			return cfg.errf("head_dim", "%d disagrees with %s / %s = %d, the head size %s uses", given, wk, headsKey, hd, modeling)
		}
		if wk == "" {
			hd, from = given, ": config head_dim"
		}
	}
	if hd == 0 {
		d.note("no head_dim: the config has no %s (the spec has no attention form)", strings.Join(widthKeys, " or "))
		return nil
	}
	d.note("head_dim %d%s", hd, from)
	d.setInt("head_dim", hd)
	return nil
}

// hfMPT imports MPT: MptConfig(n_heads, attn_config=MptAttentionConfig(
// alibi, alibi_bias_max=8, prefix_lm)). transformers' modeling_mpt.py
// always builds the ALiBi bias (build_mpt_alibi_tensor with
// alibi_bias_max); its non-power-of-two rule (slopes of the next power of
// two, odd then even) yields the same slopes as the paper's rule.
func hfMPT(cfg obj, d *doc) error {
	heads, k, err := hfHeads(cfg, []string{"n_heads", "num_attention_heads"})
	if err != nil {
		return err
	}
	maxBias := 8.0
	from := "MptAttentionConfig default alibi_bias_max 8"
	if cfg.has("attn_config") {
		ac, err := cfg.object("attn_config")
		if err != nil {
			return err
		}
		if ac.has("alibi") {
			on, err := ac.boolean("alibi")
			if err != nil {
				return err
			}
			if !on {
				return ac.errf("alibi", "is false: this MPT variant does not use ALiBi, and posenc imports only ALiBi MPT configs")
			}
		}
		for _, bad := range []string{"prefix_lm", "rope"} {
			if ac.has(bad) {
				on, err := ac.boolean(bad)
				if err != nil {
					return err
				}
				if on {
					return ac.errf(bad, "is true: not supported (prefix-LM masking / RoPE change the positional scheme)")
				}
			}
		}
		if ac.has("alibi_bias_max") {
			if maxBias, err = ac.positive("alibi_bias_max"); err != nil {
				return err
			}
			from = "config attn_config.alibi_bias_max"
		}
	}
	d.note("ALiBi: modeling_mpt.py build_mpt_alibi_tensor; max_bias %s: %s; causal decoder", fmtNum(maxBias), from)
	d.note("heads %d: config %s", heads, k)
	alibiDoc(d, heads, maxBias)
	// MptConfig attribute_map hidden_size→d_model; MptAttention.head_dim =
	// hidden_size // n_heads.
	return hfWidthHeadDim(cfg, d, []string{"d_model", "hidden_size"}, heads, k, "modeling_mpt.py")
}
