package spec

// Key tables: the encodings, scaling types and dtypes a spec may name, and
// the YAML keys each encoding and scaling type allows.

// Encodings lists every encoding name, in the order docs/spec.md and
// docs/design list them.
var Encodings = []string{RoPE, ALiBi, RPEBias, Sinusoidal, Learned, Algebraic, Binary, Mixture, RPEFull, XL}

// ScalingTypes lists every RoPE scaling type.
var ScalingTypes = []string{ScaleLinear, ScaleNTK, ScaleDynamic, ScaleYaRN, ScaleLlama3, ScaleLongRoPE}

// DTypes lists the storage types a spec may ask for.
var DTypes = []string{"f32", "f16", "bf16"}

// commonKeys are allowed for every encoding.
var commonKeys = []string{"name", "encoding", "targets", "dtype"}

// encodingKeys are the keys, beyond commonKeys, that belong to each encoding.
var encodingKeys = map[string][]string{
	RoPE:       {"head_dim", "rotary_dim", "layout", "base", "max_position", "scaling", "mrope_section", "mrope_interleaved", "mrope_freqs", "attn_temperature"},
	ALiBi:      {"heads", "max_bias", "slopes", "causal", "head_dim"},
	RPEBias:    {"heads", "r_max", "buckets", "head_dim"},
	Sinusoidal: {"d_model", "max_len", "base"},
	Learned:    {"d_model", "max_len"},
	Algebraic:  {"d_model", "max_len"},
	Binary:     {"d_model", "max_len"},
	Mixture:    {"d_model", "max_len"},
	RPEFull:    {"head_dim", "r_max"},
	XL:         {"head_dim", "base"},
}

// allTopKeys is every key a spec may have at the top level, for some encoding.
var allTopKeys = []string{
	"name", "encoding", "targets", "dtype",
	"head_dim", "rotary_dim", "layout", "base", "max_position", "scaling",
	"mrope_section", "mrope_interleaved", "mrope_freqs", "attn_temperature",
	"heads", "max_bias", "slopes", "causal", "r_max", "buckets",
	"d_model", "max_len",
}

// scalingKeys are the keys, beyond "type" and "factor", each scaling type uses.
var scalingKeys = map[string][]string{
	ScaleLinear:   nil,
	ScaleNTK:      nil,
	ScaleDynamic:  {"original_max_position"},
	ScaleYaRN:     {"original_max_position", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"},
	ScaleLlama3:   {"original_max_position", "low_freq_factor", "high_freq_factor"},
	ScaleLongRoPE: {"original_max_position", "attention_factor", "short_factor", "long_factor"},
}

// allScalingKeys is every key a scaling mapping may have, for some type.
var allScalingKeys = []string{
	"type", "factor", "original_max_position", "low_freq_factor", "high_freq_factor",
	"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
	"truncate", "short_factor", "long_factor",
}

// bucketKeys are the keys of an rpe_bias buckets mapping.
var bucketKeys = []string{"num", "max_distance", "bidirectional"}
