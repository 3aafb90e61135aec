package importer

import (
	"sort"
	"strings"
)

// modelAliases maps legacy model_type values to the type transformers
// loads them as (Falcon's pre-integration RefinedWeb configs).
var modelAliases = map[string]string{
	"RefinedWeb":      "falcon",
	"RefinedWebModel": "falcon",
}

// otherModels are the non-RoPE model types FromHF understands.
var otherModels = []string{"bert", "bloom", "mpt", "mt5", "t5"}

// FromHF converts a Hugging Face config.json into posenc spec YAML named
// name (a valid spec name, see PackageName). It understands the RoPE model
// types in ropeFamilies (Llama, Mistral, Mixtral, Qwen2/3, Phi-3, Gemma,
// GPT-NeoX, GPT-J, Falcon, GPT-OSS, …) including every rope_scaling /
// rope_parameters type of transformers' modeling_rope_utils.py, the ALiBi
// models BLOOM, MPT and Falcon with alibi: true, T5's bucketed relative bias
// and BERT's learned absolute embeddings, and through hf_multi.go Llama 4,
// DeepSeek V2/V3, Ministral 3 and a vision tower's config on its own
// (pixtral, a Qwen-VL vision_config); a config that needs several specs
// (Gemma 3, the multimodal llava, mistral3 and Qwen-VL configs) is an error
// naming model_type: FromHFSpecs returns them all. The YAML starts
// with the comment
// "# imported from Hugging Face config.json (model_type X)" followed by
// comments that say where each value came from.
func FromHF(name string, configJSON []byte) ([]byte, error) {
	if err := checkName(hfSource, name); err != nil {
		return nil, err
	}
	cfg, err := decodeConfig(configJSON)
	if err != nil {
		return nil, err
	}
	if !cfg.has("model_type") {
		return nil, cfg.errf("model_type", "required: the model family (e.g. llama, qwen2, gpt_neox, bloom, t5, bert)")
	}
	mt, err := cfg.str("model_type")
	if err != nil {
		return nil, err
	}
	if imp, ok := multiImporters[mt]; ok {
		return singleFromMulti(imp, name, mt, cfg)
	}
	typ := mt
	if a, ok := modelAliases[mt]; ok {
		typ = a
	}
	d := &doc{}
	d.note("imported from Hugging Face config.json (model_type %s)", mt)
	d.set("name", name)
	switch typ {
	case "bloom":
		err = hfBloom(cfg, d)
	case "mpt":
		err = hfMPT(cfg, d)
	case "t5", "mt5":
		err = hfT5(cfg, d)
	case "bert":
		err = hfBERT(cfg, d)
	case "falcon":
		alibi := false
		if cfg.has("alibi") {
			if alibi, err = cfg.boolean("alibi"); err != nil {
				return nil, err
			}
		}
		if alibi {
			err = hfFalconALiBi(cfg, d)
		} else {
			err = hfRoPE(cfg, falconFamily, d)
		}
	default:
		fam, ok := ropeFamilies[typ]
		if !ok {
			return nil, cfg.errf("model_type", "unsupported model type %s; supported: %s", quoteInput(mt), supportedModels())
		}
		err = hfRoPE(cfg, fam, d)
	}
	if err != nil {
		return nil, err
	}
	return finish(hfSource, name, d)
}

// supportedModels lists the model types FromHF accepts, sorted.
func supportedModels() string {
	var names []string
	for k := range ropeFamilies {
		names = append(names, k)
	}
	for k := range multiImporters {
		names = append(names, k)
	}
	names = append(names, otherModels...)
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// hfHeads reads the attention head count from the first present key.
func hfHeads(cfg obj, keys []string) (int, string, error) {
	k := cfg.first(keys...)
	if k == "" {
		return 0, "", cfg.errf(keys[0], "required: the number of attention heads")
	}
	n, err := cfg.integerIn(k, 1, maxHeads)
	return n, k, err
}
