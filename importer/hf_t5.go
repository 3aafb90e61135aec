package importer

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// hfT5 imports T5 / mT5: T5Config(num_heads, relative_attention_num_buckets
// =32, relative_attention_max_distance=128). The spec describes the
// encoder's self-attention, whose _relative_position_bucket is
// bidirectional; decoder self-attention uses the same table rule with
// bidirectional=False.
func hfT5(cfg obj, d *doc) error {
	heads, k, err := hfHeads(cfg, []string{"num_heads", "num_attention_heads"})
	if err != nil {
		return err
	}
	num, numFrom := 32, "T5Config default"
	if cfg.has("relative_attention_num_buckets") {
		if num, err = cfg.integer("relative_attention_num_buckets", 1); err != nil {
			return err
		}
		numFrom = "config relative_attention_num_buckets"
	}
	maxDist, distFrom := 128, "T5Config default"
	if cfg.has("relative_attention_max_distance") {
		if maxDist, err = cfg.integer("relative_attention_max_distance", 1); err != nil {
			return err
		}
		distFrom = "config relative_attention_max_distance"
	}
	d.note("T5 relative attention bias of the encoder self-attention (bidirectional: true); the decoder's self-attention uses bidirectional: false")
	d.note("heads %d: config %s; buckets.num %d: %s; buckets.max_distance %d: %s", heads, k, num, numFrom, maxDist, distFrom)
	d.set("encoding", spec.RPEBias)
	d.setInt("heads", heads)
	d.block("buckets",
		kv{key: "num", val: fmt.Sprint(num)},
		kv{key: "max_distance", val: fmt.Sprint(maxDist)},
		kv{key: "bidirectional", val: "true"})
	// head_dim: T5Attention.key_value_proj_dim = config.d_kv, independent of
	// d_model / num_heads (T5-11B: d_model 1024, 128 heads of d_kv 128).
	dkv, dkvFrom := 64, "T5Config default d_kv"
	if cfg.has("d_kv") {
		if dkv, err = cfg.integerIn("d_kv", 1, spec.MaxAttentionHeadDim); err != nil {
			return err
		}
		dkvFrom = "config d_kv"
	}
	d.note("head_dim %d: %s (T5Attention.key_value_proj_dim)", dkv, dkvFrom)
	d.setInt("head_dim", dkv)
	return nil
}
