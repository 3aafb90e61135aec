package importer

// Configs that need more than one spec, or a rotary sub-head other than
// head_dim: Gemma 3 (two RoPE bases), Llama 4 (RoPE and NoPE layers) and
// DeepSeek V2/V3 (multi-head latent attention). FromHFSpecs returns every
// spec of such a config; FromHF keeps returning exactly one.

import (
	"fmt"
	"strings"
)

// Spec is one imported spec: its name and its YAML text (which spec.Parse
// accepts).
type Spec struct {
	Name string
	YAML []byte
}

// multiImporter imports one of the model types of multiImporters from its
// (text) config; mt is the config's model_type, for the header comment.
type multiImporter func(name, mt string, cfg obj) ([]Spec, error)

// multiImporters are the model types handled here. The multimodal wrappers
// (gemma3, llama4) read their text_config.
var multiImporters = map[string]multiImporter{
	"gemma3_text": hfGemma3,
	"gemma3":      textConfig("gemma3_text", hfGemma3),
	"llama4_text": hfLlama4,
	"llama4":      textConfig("llama4_text", hfLlama4),
	"deepseek_v2": hfDeepSeek,
	"deepseek_v3": hfDeepSeek,
	// hf_qwen2vl.go: multimodal RoPE.
	"qwen2_vl":   hfQwenVL,
	"qwen2_5_vl": hfQwenVL,
	"qwen3_vl":   hfQwenVL,
	"pixtral":    hfPixtral,
	// hf_llava.go, hf_ministral3.go: a text_config and a Pixtral vision_config.
	"llava":      hfWrapper,
	"mistral3":   hfWrapper,
	"ministral3": hfMinistral3,
}

// FromHFSpecs converts a Hugging Face config.json into every spec the
// model's positional encoding needs, each named after name:
//
//   - gemma3 / gemma3_text: <name>_local (sliding-window layers:
//     rope_local_base_freq, no scaling) and <name>_global (full-attention
//     layers: rope_theta and rope_scaling), as Gemma3TextModel's
//     rotary_emb_local and rotary_emb (transformers 5: rope_parameters
//     keyed by sliding_attention / full_attention);
//   - llama4 / llama4_text: <name>, the RoPE layers (no_rope_layers[i] = 1);
//     the NoPE layers have no positional encoding (their attention
//     temperature tuning is noted in the YAML, not computed);
//   - deepseek_v2 / deepseek_v3: <name>, the rotary sub-head of multi-head
//     latent attention (head_dim = qk_rope_head_dim);
//   - qwen2_vl / qwen2_5_vl / qwen3_vl: <name>, the text model's M-RoPE
//     (mrope_section; interleaved for Qwen3-VL), and <name>_vision, the
//     vision tower's 2D RoPE; a vision_config alone gives the vision spec
//     <name> (hf_qwen2vl.go); pixtral: <name>, the vision encoder's 2D
//     RoPE (hf_pixtral.go);
//   - llava / mistral3: <name> from text_config and <name>_vision from a
//     pixtral vision_config (hf_llava.go); ministral3: <name>, YaRN, plus
//     <name>_vision with a vision_config (hf_ministral3.go);
//   - every other model type: the one spec FromHF returns, named name.
func FromHFSpecs(name string, configJSON []byte) ([]Spec, error) {
	if err := checkName(hfSource, name); err != nil {
		return nil, err
	}
	cfg, err := decodeConfig(configJSON)
	if err != nil {
		return nil, err
	}
	if imp, mt, ok := multiFor(cfg); ok {
		return imp(name, mt, cfg)
	}
	y, err := FromHF(name, configJSON)
	if err != nil {
		return nil, err
	}
	return []Spec{{Name: name, YAML: y}}, nil
}

// multiFor returns the importer of cfg's model_type when it is one of
// multiImporters.
func multiFor(cfg obj) (multiImporter, string, bool) {
	mt, ok := cfg.m["model_type"].(string)
	if !ok {
		return nil, "", false
	}
	imp, ok := multiImporters[mt]
	return imp, mt, ok
}

// singleFromMulti is FromHF's answer for a model type of multiImporters:
// its spec when there is exactly one, else an error listing the specs.
func singleFromMulti(imp multiImporter, name, mt string, cfg obj) ([]byte, error) {
	specs, err := imp(name, mt, cfg)
	if err != nil {
		return nil, err
	}
	if len(specs) != 1 {
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = s.Name
		}
		return nil, cfg.errf("model_type", "%s needs %d specs (%s); use FromHFSpecs (posenc import-hf writes them all)", mt, len(specs), strings.Join(names, ", "))
	}
	return specs[0].YAML, nil
}

// textConfig wraps an importer so that it reads the multimodal config's
// text_config, whose model_type (when given) must be want.
func textConfig(want string, imp multiImporter) multiImporter {
	return func(name, mt string, cfg obj) ([]Spec, error) {
		if !cfg.has("text_config") {
			return nil, cfg.errf("text_config", "required for model_type %s: the language model's config", mt)
		}
		tc, err := cfg.object("text_config")
		if err != nil {
			return nil, err
		}
		if tc.has("model_type") {
			got, err := tc.str("model_type")
			if err != nil {
				return nil, err
			}
			if got != want {
				return nil, tc.errf("model_type", "is %s; model_type %s has a %s text_config", quoteInput(got), mt, want)
			}
		}
		return imp(name, mt+" text_config", tc)
	}
}

// ropeSpec imports one RoPE spec called name from cfg with family fam;
// notes come after the header comment.
func ropeSpec(name, mt string, cfg obj, fam *ropeFamily, notes ...string) (Spec, error) {
	if err := checkName(hfSource, name); err != nil {
		return Spec{}, err
	}
	d := &doc{}
	d.note("imported from Hugging Face config.json (model_type %s)", mt)
	for _, n := range notes {
		d.note("%s", n)
	}
	d.set("name", name)
	if err := hfRoPE(cfg, fam, d); err != nil {
		return Spec{}, err
	}
	y, err := finish(hfSource, name, d)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Name: name, YAML: y}, nil
}

// layerList formats layer indices for a comment.
func layerList(layers []int) string {
	parts := make([]string, len(layers))
	for i, l := range layers {
		parts[i] = fmt.Sprint(l)
	}
	return strings.Join(parts, ", ")
}
