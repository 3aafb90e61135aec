package importer

// Pixtral's vision encoder (PixtralVisionConfig, model_type pixtral): 2D
// RoPE over patch rows and columns. It is the vision_config of Pixtral-12B
// (llava) and of Mistral 3 / Ministral 3 (mistral3), see hf_llava.go.

import "github.com/posenc/posenc/spec"

// PixtralVisionConfig class defaults.
const (
	pixtralHidden = 1024
	pixtralHeads  = 16
	pixtralImage  = 1024
	pixtralPatch  = 16
	pixtralTheta  = 10000.0
)

// hfPixtral imports a Pixtral vision config on its own (model_type
// pixtral) as the one spec name.
func hfPixtral(name, mt string, cfg obj) ([]Spec, error) {
	s, err := pixtralSpec(name, mt, cfg)
	if err != nil {
		return nil, err
	}
	return []Spec{s}, nil
}

// pixtralSpec imports a Pixtral vision config: PixtralRotaryEmbedding gives
// the rows freqs[::2] and the columns freqs[1::2] of
// 1/θ^(arange(0, head_dim, 2)/head_dim), concatenated, then rotate_half:
// mrope_section [head_dim/4, head_dim/4] with mrope_freqs alternate. Patch
// rows and columns are below image_size/patch_size, the table size. Absent
// keys take PixtralVisionConfig's defaults.
func pixtralSpec(name, mt string, cfg obj) (Spec, error) {
	if err := checkName(hfSource, name); err != nil {
		return Spec{}, err
	}
	hd, hdFrom, err := pixtralHeadDim(cfg)
	if err != nil {
		return Spec{}, err
	}
	if hd%4 != 0 || hd > spec.MaxDim {
		key := "head_dim"
		if !cfg.has(key) {
			key = "hidden_size"
		}
		return Spec{}, cfg.errf(key, "head_dim %d must be a multiple of 4 up to %d: Pixtral gives half of the head_dim/2 frequencies to rows, half to columns", hd, spec.MaxDim)
	}
	theta, thetaFrom, err := pixtralBase(cfg)
	if err != nil {
		return Spec{}, err
	}
	img, patch := pixtralImage, pixtralPatch
	if cfg.has("image_size") {
		if img, err = cfg.integer("image_size", 1); err != nil {
			return Spec{}, err
		}
	}
	if cfg.has("patch_size") {
		if patch, err = cfg.integer("patch_size", 1); err != nil {
			return Spec{}, err
		}
	}
	side := img / patch
	if side < 1 {
		return Spec{}, cfg.errf("image_size", "%d is smaller than patch_size %d: no patch fits", img, patch)
	}
	d := &doc{}
	d.note("imported from Hugging Face config.json (model_type %s): the vision encoder", mt)
	d.note("head_dim %d: %s", hd, hdFrom)
	d.note("base %s: %s", fmtNum(theta), thetaFrom)
	d.note("2D RoPE: PixtralRotaryEmbedding, freqs = 1/theta^(arange(0, %d, 2)/%d); rows turn pairs 0..%d by freqs[::2], columns pairs %d..%d by freqs[1::2]; rotate_half", hd, hd, hd/4-1, hd/4, hd/2-1)
	d.note("max_position %d = image_size %d / patch_size %d (patches per side)", side, img, patch)
	d.set("name", name)
	d.set("encoding", "rope")
	d.setInt("head_dim", hd)
	d.set("layout", "half")
	d.setNum("base", theta)
	d.setInt("max_position", side)
	d.set("mrope_section", intsYAML([]int{hd / 4, hd / 4}))
	d.set("mrope_freqs", "alternate")
	y, err := finish(hfSource, name, d)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Name: name, YAML: y}, nil
}

// pixtralHeadDim reads head_dim, else hidden_size / num_attention_heads
// (class defaults 1024 and 16), and says where it came from.
func pixtralHeadDim(cfg obj) (int, string, error) {
	if cfg.has("head_dim") {
		hd, err := cfg.integerIn("head_dim", 1, maxInt)
		return hd, "config " + cfg.field("head_dim"), err
	}
	hidden, heads := pixtralHidden, pixtralHeads
	var err error
	if cfg.has("hidden_size") {
		if hidden, err = cfg.integer("hidden_size", 1); err != nil {
			return 0, "", err
		}
	}
	if cfg.has("num_attention_heads") {
		if heads, err = cfg.integerIn("num_attention_heads", 1, maxHeads); err != nil {
			return 0, "", err
		}
	}
	if hidden%heads != 0 {
		return 0, "", cfg.errf("hidden_size", "%d is not divisible by num_attention_heads %d, so head_dim is undefined", hidden, heads)
	}
	return hidden / heads, "hidden_size / num_attention_heads (PixtralVisionConfig defaults 1024 and 16 for absent keys)", nil
}

// pixtralBase reads θ: rope_parameters.rope_theta (transformers 5, whose
// rope_type must be default), else rope_theta, else 10000.
func pixtralBase(cfg obj) (float64, string, error) {
	src, key := cfg, cfg.first("rope_theta")
	if cfg.has("rope_parameters") {
		rp, err := cfg.object("rope_parameters")
		if err != nil {
			return 0, "", err
		}
		if tk := rp.first("rope_type", "type"); tk != "" {
			if rt, err := rp.str(tk); err != nil || rt != "default" {
				return 0, "", rp.errf(tk, "must be \"default\": PixtralRotaryEmbedding applies no RoPE scaling")
			}
		}
		if rp.has("rope_theta") {
			if err := sameNumber(cfg, key, rp, "rope_theta"); err != nil {
				return 0, "", err
			}
			src, key = rp, "rope_theta"
		}
	}
	if key == "" {
		return pixtralTheta, "class default of PixtralVisionConfig", nil
	}
	theta, err := src.num(key)
	if err != nil {
		return 0, "", err
	}
	if !(theta > 1) {
		return 0, "", src.errf(key, "must be > 1, got %v", theta)
	}
	return theta, "config " + src.field(key), nil
}
