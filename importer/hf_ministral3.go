package importer

// Ministral 3 (model_type ministral3; the text_config of Ministral-3's
// mistral3 configs, and Devstral 2 at the top level): Mistral's rotate_half
// RoPE with YaRN in rope_parameters, whose llama_4_scaling_beta also makes
// Ministral3Attention scale the queries by position after the rotation.

import (
	"encoding/json"
	"fmt"
)

// ministral3Family: Ministral3Config(head_dim=128); its default
// rope_parameters carry rope_theta 1e6.
var ministral3Family = func() *ropeFamily {
	f := llamaLike("ministral3", 1e6, 1)
	f.headDim = 128
	return f
}()

// ministral3DefaultRoPE is Ministral3Config's rope_parameters when the
// config has none (its max_position_embeddings entry is left out: the
// importer drops it anyway).
func ministral3DefaultRoPE() map[string]any {
	return map[string]any{
		"type": "yarn", "rope_theta": json.Number("1000000"), "factor": json.Number("16"),
		"original_max_position_embeddings": json.Number("16384"),
		"beta_fast":                        json.Number("32"), "beta_slow": json.Number("1"),
		"mscale_all_dim": json.Number("1"), "mscale": json.Number("1"),
		"llama_4_scaling_beta": json.Number("0.1"),
	}
}

// hfMinistral3 imports a ministral3 config: NAME, the text RoPE, and
// NAME_vision when the config also has a (Pixtral) vision_config.
func hfMinistral3(name, mt string, cfg obj) ([]Spec, error) {
	vision, notes, err := wrapperVision(name, mt, cfg, "pixtral")
	if err != nil {
		return nil, err
	}
	text, err := ministral3Spec(name, mt, cfg, notes...)
	if err != nil {
		return nil, err
	}
	return append([]Spec{text}, vision...), nil
}

// ministral3Spec imports the ministral3 text model cfg as the spec name.
// llama_4_scaling_beta and a max_position_embeddings inside
// rope_parameters are taken out before hfRoPE reads the rest (transformers
// leaves them out of its RoPE validation too); the query scaling they
// describe is noted, not part of the spec.
func ministral3Spec(name, mt string, cfg obj, notes ...string) (Spec, error) {
	if cfg.has("rope_scaling") && cfg.has("rope_parameters") {
		return Spec{}, cfg.errf("rope_parameters", "both rope_scaling and rope_parameters are given; a config has one or the other")
	}
	key := cfg.first("rope_parameters", "rope_scaling")
	var m map[string]any
	path := cfg.field("rope_parameters")
	if key == "" {
		key = "rope_parameters"
		m = ministral3DefaultRoPE()
		if cfg.has("rope_theta") {
			delete(m, "rope_theta") // hfRoPE reads the config's own
		}
		notes = append(notes, "rope_parameters: Ministral3Config's default (yarn ×16 over 16384 positions, theta 1e6, beta_fast 32, beta_slow 1, mscale = mscale_all_dim = 1, llama_4_scaling_beta 0.1)")
	} else {
		rp, err := cfg.object(key)
		if err != nil {
			return Spec{}, err
		}
		path = rp.path
		m = make(map[string]any, len(rp.m))
		for k, v := range rp.m {
			m[k] = v
		}
	}
	rp := obj{path: path, m: m}
	// Ministral3Attention reads both with rope_parameters.get(...) and
	// fails without them.
	for _, k := range []string{"llama_4_scaling_beta", "original_max_position_embeddings"} {
		if !rp.has(k) {
			return Spec{}, rp.errf(k, "required for model_type ministral3: Ministral3Attention scales the queries by 1 + llama_4_scaling_beta·ln(1 + ⌊pos / original_max_position_embeddings⌋)")
		}
	}
	beta, err := rp.num("llama_4_scaling_beta")
	if err != nil {
		return Spec{}, err
	}
	orig, err := rp.integer("original_max_position_embeddings", 1)
	if err != nil {
		return Spec{}, err
	}
	notes = append(notes, fmt.Sprintf("not in this spec: after RoPE, Ministral3Attention multiplies the queries by 1 + llama_4_scaling_beta %s · ln(1 + ⌊pos / original_max_position_embeddings %d⌋) (pos from 0; attn_temperature floors (pos+1) and does not match); scale q yourself", fmtNum(beta), orig))
	delete(m, "llama_4_scaling_beta")
	if _, ok := m["max_position_embeddings"]; ok {
		delete(m, "max_position_embeddings")
		notes = append(notes, fmt.Sprintf("%s.max_position_embeddings is not read (transformers skips it in RoPE validation)", path))
	}
	return ropeSpec(name, mt, withRoPE(cfg, key, m), ministral3Family, notes...)
}
