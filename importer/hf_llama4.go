package importer

// Llama 4 text models (transformers models/llama4): RoPE on the layers
// with no_rope_layers[i] = 1, none on the others (NoPE, "iRoPE"). The
// rotation multiplies consecutive pairs as complex numbers
// (modeling_llama4.py apply_rotary_emb: view_as_complex of
// reshape(..., -1, 2)): the interleaved layout.

import (
	"encoding/json"
	"fmt"

	"github.com/posenc/posenc/spec"
)

// Llama4TextConfig class defaults (configuration_llama4.py).
const (
	llama4Source    = "transformers models/llama4/configuration_llama4.py"
	llama4NumLayers = 48 // num_hidden_layers
	llama4Interval  = 4  // no_rope_layer_interval: every 4th layer is NoPE
)

// llama4Family is Llama 4's RoPE layers.
var llama4Family = &ropeFamily{
	source:      llama4Source,
	layout:      spec.LayoutInterleaved,
	layoutWhy:   "modeling_llama4.py apply_rotary_emb rotates consecutive pairs as complex numbers: pairs (2i, 2i+1)",
	theta:       500000, // Llama4TextConfig(rope_theta=500000)
	thetaKeys:   llamaTheta,
	hiddenKeys:  llamaHidden,
	headsKeys:   llamaHeads,
	maxPosKeys:  llamaMaxPos,
	partialKeys: llamaPart,
	partial:     1,
	headDim:     128, // Llama4TextConfig(head_dim=128)
	handles:     []string{"no_rope_layers", "no_rope_layer_interval"},
}

// hfLlama4 imports the RoPE layers of a llama4_text config as one spec.
// The NoPE layers are described in comments; when they tune their
// attention temperature (attn_temperature_tuning, default true) the spec
// gets attn_temperature with the config's floor_scale and attn_scale, so
// that the generated package exports ScaleQ for those layers' queries.
func hfLlama4(name, mt string, cfg obj) ([]Spec, error) {
	rope, nope, err := llama4Layers(cfg)
	if err != nil {
		return nil, err
	}
	if len(rope) == 0 {
		return nil, cfg.errf("no_rope_layers", "no layer uses RoPE; there is no rotary spec to write")
	}
	notes := []string{fmt.Sprintf("Llama 4 RoPE layers %s (no_rope_layers[i] = 1)", layerList(rope))}
	var temp []kv
	if len(nope) > 0 {
		notes = append(notes, fmt.Sprintf("layers %s are NoPE: no positional encoding, not part of this spec", layerList(nope)))
		tuning, floor, scale, err := llama4Temperature(cfg)
		if err != nil {
			return nil, err
		}
		if tuning {
			notes = append(notes, fmt.Sprintf("NoPE layers scale their queries by log1p(floor((pos+1)/floor_scale))·attn_scale + 1 with floor_scale %d, attn_scale %s "+
				"(Llama4TextAttention, attn_temperature_tuning): attn_temperature below, ScaleQ in the generated package", floor, fmtNum(scale)))
			temp = []kv{{key: "floor_scale", val: fmt.Sprint(floor)}, {key: "attn_scale", val: fmtNum(scale)}}
		}
	}
	if err := checkName(hfSource, name); err != nil {
		return nil, err
	}
	d := &doc{}
	d.note("imported from Hugging Face config.json (model_type %s)", mt)
	for _, n := range notes {
		d.note("%s", n)
	}
	d.set("name", name)
	if err := hfRoPE(cfg, llama4Family, d); err != nil {
		return nil, err
	}
	if temp != nil {
		d.block("attn_temperature", temp...)
	}
	y, err := finish(hfSource, name, d)
	if err != nil {
		return nil, err
	}
	return []Spec{{Name: name, YAML: y}}, nil
}

// llama4Layers splits the layers into RoPE and NoPE ones: config
// no_rope_layers when non-empty (1 = RoPE, 0 = NoPE), else
// Llama4TextConfig's default, layer i uses RoPE when
// (i+1) % no_rope_layer_interval != 0.
func llama4Layers(cfg obj) (rope, nope []int, err error) {
	if list, ok := cfg.m["no_rope_layers"].([]any); ok && len(list) > 0 {
		if len(list) > maxLayers {
			return nil, nil, cfg.errf("no_rope_layers", "has %d entries, more than the %d allowed (one per layer)", len(list), maxLayers)
		}
		for i, it := range list {
			n, ok := it.(json.Number)
			if !ok || (n.String() != "0" && n.String() != "1") {
				return nil, nil, cfg.errf("no_rope_layers", "entry %d must be 0 (NoPE) or 1 (RoPE), got %s", i, jsonKind(it))
			}
			if n.String() == "1" {
				rope = append(rope, i)
			} else {
				nope = append(nope, i)
			}
		}
		return rope, nope, nil
	} else if cfg.has("no_rope_layers") && !ok {
		return nil, nil, cfg.errf("no_rope_layers", "must be a list of 0 and 1, got %s", jsonKind(cfg.m["no_rope_layers"]))
	}
	n, interval := llama4NumLayers, llama4Interval
	if cfg.has("num_hidden_layers") {
		if n, err = cfg.integerIn("num_hidden_layers", 1, maxLayers); err != nil {
			return nil, nil, err
		}
	}
	if cfg.has("no_rope_layer_interval") {
		if interval, err = cfg.integer("no_rope_layer_interval", 1); err != nil {
			return nil, nil, err
		}
	}
	for i := range n {
		if (i+1)%interval != 0 {
			rope = append(rope, i)
		} else {
			nope = append(nope, i)
		}
	}
	return rope, nope, nil
}

// llama4Temperature reports whether the NoPE layers tune their attention
// temperature (attn_temperature_tuning, truthy by Python's rules, default
// true) and with which floor_scale and attn_scale (Llama4TextConfig
// defaults 8192 and 0.1). floor_scale must be a whole number ≥ 1 (posenc
// floors (pos+1)/floor_scale exactly in integers) and attn_scale > 0.
func llama4Temperature(cfg obj) (on bool, floor int, scale float64, err error) {
	on = true
	switch v := cfg.m["attn_temperature_tuning"].(type) {
	case bool:
		on = v
	case json.Number:
		on = v.String() != "0" && v.String() != "0.0"
	}
	floor, scale = 8192, 0.1
	if !on {
		return false, floor, scale, nil
	}
	if cfg.has("floor_scale") {
		if floor, err = cfg.integer("floor_scale", 1); err != nil {
			return false, 0, 0, err
		}
	}
	if cfg.has("attn_scale") {
		if scale, err = cfg.positive("attn_scale"); err != nil {
			return false, 0, 0, err
		}
	}
	return true, floor, scale, nil
}
