package importer

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// ggufT5 imports the T5 encoder's bucketed relative bias: heads from
// attention.head_count, buckets from attention.relative_buckets_count
// (llama.cpp default 32); llama.cpp's llama_relative_position_bucket fixes
// max_distance at 128; head_dim from attention.key_length (T5's d_kv), as
// ggufAttnHeadDim reads it.
func ggufT5(m ggufMeta, d *doc) error {
	heads, err := ggufHeads(m)
	if err != nil {
		return err
	}
	num, from := 32, "llama.cpp default"
	if m.has("attention.relative_buckets_count") {
		if num, err = m.integer("attention.relative_buckets_count", 1); err != nil {
			return err
		}
		from = m.key("attention.relative_buckets_count")
	}
	d.note("T5 relative attention bias of the encoder self-attention (bidirectional: true); buckets.num %d: %s; max_distance 128 (fixed in llama.cpp)", num, from)
	d.set("encoding", spec.RPEBias)
	d.setInt("heads", heads)
	d.block("buckets",
		kv{key: "num", val: fmt.Sprint(num)},
		kv{key: "max_distance", val: "128"},
		kv{key: "bidirectional", val: "true"})
	// convert_hf_to_gguf.py writes d_kv as attention.key_length.
	return ggufAttnHeadDim(m, d, heads)
}
