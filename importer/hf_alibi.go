package importer

// ALiBi models: BLOOM, Falcon with alibi: true and MPT. alibiDoc is shared
// with the GGUF importer.

import "github.com/posenc/posenc/spec"

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
	return hfBloomALiBi(cfg, d, []string{"n_head", "num_attention_heads"},
		"ALiBi: modeling_bloom.py build_alibi_tensor, slopes 2^(-8i/n) (max_bias 8); causal decoder")
}

// hfFalconALiBi imports Falcon with alibi: true (e.g. falcon-rw-1b):
// modeling_falcon.py's build_alibi_tensor is BLOOM's, max_bias 8.
func hfFalconALiBi(cfg obj, d *doc) error {
	return hfBloomALiBi(cfg, d, falconFamily.headsKeys,
		"ALiBi: config alibi true; modeling_falcon.py build_alibi_tensor (BLOOM's), slopes 2^(-8i/n) (max_bias 8); causal decoder")
}

// hfBloomALiBi writes BLOOM's ALiBi (max_bias 8) with the head count read
// from the first of headsKeys present, and source as the provenance note.
func hfBloomALiBi(cfg obj, d *doc, headsKeys []string, source string) error {
	heads, k, err := hfHeads(cfg, headsKeys)
	if err != nil {
		return err
	}
	d.note("%s", source)
	d.note("heads %d: config %s", heads, k)
	alibiDoc(d, heads, 8)
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
	return nil
}
