package importer

// Multimodal wrappers whose text_config is an ordinary RoPE language model
// and whose vision_config is a separate vision tower: llava (Pixtral-12B as
// released: a mistral text_config and a pixtral vision_config) and mistral3
// (Mistral Small 3.1, Ministral 3).

import (
	"fmt"
	"sort"
	"strings"
)

// wrapperDefaults are, per wrapper model type, the model types its config
// class assumes for a text_config / vision_config without one (LlavaConfig:
// llama and clip_vision_model; Mistral3Config: mistral and pixtral).
var wrapperDefaults = map[string][2]string{
	"llava":    {"llama", "clip_vision_model"},
	"mistral3": {"mistral", "pixtral"},
}

// hfWrapper imports a llava or mistral3 config: NAME from text_config (a
// model type of ropeFamilies, or ministral3) and NAME_vision from a pixtral
// vision_config; other vision towers are noted and not imported.
func hfWrapper(name, mt string, cfg obj) ([]Spec, error) {
	def := wrapperDefaults[mt]
	if !cfg.has("text_config") {
		return nil, cfg.errf("text_config", "required for model_type %s: the language model's config", mt)
	}
	tc, err := cfg.object("text_config")
	if err != nil {
		return nil, err
	}
	typ := def[0]
	if tc.has("model_type") {
		if typ, err = tc.str("model_type"); err != nil {
			return nil, err
		}
	}
	fam, ok := ropeFamilies[typ]
	if !ok && typ != "ministral3" {
		return nil, tc.errf("model_type", "is %s; posenc imports a %s text_config of model type ministral3 or %s", quoteInput(typ), mt, ropeTypeList())
	}
	vision, notes, err := wrapperVision(name, mt, cfg, def[1])
	if err != nil {
		return nil, err
	}
	tmt := mt + " text_config " + typ
	var text Spec
	if typ == "ministral3" {
		text, err = ministral3Spec(name, tmt, tc, notes...)
	} else {
		text, err = ropeSpec(name, tmt, tc, fam, notes...)
	}
	if err != nil {
		return nil, err
	}
	return append([]Spec{text}, vision...), nil
}

// wrapperVision imports cfg's vision_config (of model type def when it
// names none) as NAME_vision when it is Pixtral's rotary tower. Without a
// vision_config, or with another tower, it returns no spec and a note for
// the text spec.
func wrapperVision(name, mt string, cfg obj, def string) ([]Spec, []string, error) {
	if !cfg.has("vision_config") {
		if mt == "ministral3" {
			return nil, nil, nil
		}
		return nil, []string{"no vision_config: the vision tower is not imported"}, nil
	}
	vc, err := cfg.object("vision_config")
	if err != nil {
		return nil, nil, err
	}
	typ := def
	if vc.has("model_type") {
		if typ, err = vc.str("model_type"); err != nil {
			return nil, nil, err
		}
	}
	if typ != "pixtral" {
		return nil, []string{fmt.Sprintf("the vision tower (vision_config model_type %s) is not imported: posenc imports Pixtral's rotary tower; CLIP and SigLIP towers add learned absolute position embeddings", quoteInput(typ))}, nil
	}
	s, err := pixtralSpec(name+"_vision", mt+" vision_config", vc)
	if err != nil {
		return nil, nil, err
	}
	return []Spec{s}, nil, nil
}

// ropeTypeList lists the model types of ropeFamilies, sorted.
func ropeTypeList() string {
	names := make([]string, 0, len(ropeFamilies))
	for k := range ropeFamilies {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
