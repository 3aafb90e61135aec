package importer

// Gemma 3: sliding-window ("local") layers rotate with rope_local_base_freq
// and no scaling, full-attention ("global") layers with rope_theta and
// rope_scaling (transformers models/gemma3/modeling_gemma3.py:
// Gemma3TextModel builds rotary_emb from the config and rotary_emb_local
// from a copy with rope_theta = rope_local_base_freq and rope_scaling
// {"rope_type": "default"}; Gemma3DecoderLayer uses the local one when
// its attention is sliding). Both use rotate_half.
// Gemma3TextConfig class defaults (configuration_gemma3.py).
const (
	gemma3Source    = "transformers models/gemma3/configuration_gemma3.py"
	gemma3NumLayers = 26 // num_hidden_layers
	gemma3Pattern   = 6  // sliding_window_pattern: every 6th layer is global
)

// gemma3Family returns the RoPE family of Gemma 3's local or global layers.
func gemma3Family(local bool) *ropeFamily {
	f := llamaLike("gemma3", 1e6, 1) // Gemma3TextConfig(rope_theta=1_000_000.0)
	f.source = gemma3Source
	f.headDim = 256 // Gemma3TextConfig(head_dim=256)
	f.handles = []string{"rope_local_base_freq"}
	f.layerType = "full_attention"
	if local {
		f.theta = 10000 // Gemma3TextConfig(rope_local_base_freq=10_000.0)
		f.thetaKeys = []string{"rope_local_base_freq"}
		f.dropScaling = "Gemma 3's sliding-window layers use rope_local_base_freq with rope_type default"
		f.layerType = "sliding_attention"
	}
	return f
}

// hfGemma3 imports a gemma3_text config as <name>_local and <name>_global.
func hfGemma3(name, mt string, cfg obj) ([]Spec, error) {
	local, global, err := gemma3Layers(cfg)
	if err != nil {
		return nil, err
	}
	var out []Spec
	if len(local) > 0 {
		s, err := ropeSpec(name+"_local", mt, cfg, gemma3Family(true),
			"Gemma 3 sliding-window (local) layers "+layerList(local)+"; the full-attention layers are in "+name+"_global")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(global) > 0 {
		s, err := ropeSpec(name+"_global", mt, cfg, gemma3Family(false),
			"Gemma 3 full-attention (global) layers "+layerList(global)+"; the sliding-window layers are in "+name+"_local")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// gemma3Layers splits the layers into sliding-window and full-attention
// ones: config layer_types when present, else Gemma3TextConfig's rule,
// layer i is sliding when (i+1) % sliding_window_pattern != 0.
func gemma3Layers(cfg obj) (local, global []int, err error) {
	if cfg.has("layer_types") {
		types, err := stringList(cfg, "layer_types")
		if err != nil {
			return nil, nil, err
		}
		for i, t := range types {
			switch t {
			case "sliding_attention":
				local = append(local, i)
			case "full_attention":
				global = append(global, i)
			default:
				return nil, nil, cfg.errf("layer_types", "entry %d is %s; Gemma 3 layers are sliding_attention or full_attention", i, quoteInput(t))
			}
		}
		return local, global, nil
	}
	n := gemma3NumLayers
	if cfg.has("num_hidden_layers") {
		if n, err = cfg.integerIn("num_hidden_layers", 1, maxLayers); err != nil {
			return nil, nil, err
		}
	}
	pattern := gemma3Pattern
	if k := cfg.first("sliding_window_pattern", "_sliding_window_pattern"); k != "" {
		if pattern, err = cfg.integer(k, 1); err != nil {
			return nil, nil, err
		}
	}
	for i := range n {
		if (i+1)%pattern != 0 {
			local = append(local, i)
		} else {
			global = append(global, i)
		}
	}
	return local, global, nil
}

// stringList reads a list of strings, one per layer (at most maxLayers).
func stringList(o obj, key string) ([]string, error) {
	list, err := o.list(key, "strings", maxLayers, "one per layer")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, it := range list {
		s, ok := it.(string)
		if !ok {
			return nil, o.errf(key, "entry %d must be a string, got %s", i, jsonKind(it))
		}
		out[i] = s
	}
	return out, nil
}
