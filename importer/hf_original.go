package importer

import "fmt"

// classOriginal holds the original_max_position_embeddings a configuration
// class defines as an attribute even when config.json omits it:
// Phi3Config(original_max_position_embeddings=4096). transformers reads it
// like a top-level key of config.json.
var classOriginal = map[string]int{"phi3": 4096}

// hfOriginal returns the pre-training context length of rope_type llama3,
// yarn and longrope, and where it came from, as transformers 5's
// RotaryEmbeddingConfigMixin.standardize_rope_params resolves it before
// _compute_llama3_parameters, _compute_yarn_parameters and
// _compute_longrope_parameters read rope_parameters'
// original_max_position_embeddings: a top-level
// original_max_position_embeddings (a key of config.json, or the class
// default of classOriginal) replaces rope_parameters' own; otherwise
// rope_parameters' own; otherwise max_position_embeddings.
func hfOriginal(cfg, rp obj, rt, mpeKey string, mpe int) (int, string, error) {
	const key = "original_max_position_embeddings"
	top, topFrom := 0, ""
	if cfg.has(key) {
		v, err := cfg.integer(key, 1)
		if err != nil {
			return 0, "", err
		}
		top, topFrom = v, "config "+key+" (top level; transformers' standardize_rope_params gives it priority)"
	} else if mt, _ := cfg.m["model_type"].(string); classOriginal[mt] > 0 {
		top, topFrom = classOriginal[mt], fmt.Sprintf("the %s configuration class's default %s %d (config.json has none)", mt, key, classOriginal[mt])
	}
	if rp.has(key) {
		v, err := rp.integer(key, 1)
		if err != nil {
			return 0, "", err
		}
		if top == 0 {
			return v, "config " + rp.field(key), nil
		}
		if v != top {
			topFrom += "; " + rp.field(key) + fmt.Sprintf(" %d is overridden", v)
		}
	}
	if top > 0 {
		return top, topFrom, nil
	}
	if mpeKey != "" {
		return mpe, "config " + mpeKey + " (transformers' fallback when " + rp.path + " has no " + key + ")", nil
	}
	return 0, "", rp.errf(key, "required for rope_type %s (the pre-training context length), or max_position_embeddings", rt)
}
