package importer

// Multimodal RoPE models: Qwen2-VL, Qwen2.5-VL and Qwen3-VL (text: M-RoPE
// over the t, h, w position ids; vision: 2D RoPE over patch rows and
// columns). Pixtral's vision encoder is in hf_pixtral.go. The spec keys are
// mrope_section, mrope_interleaved and mrope_freqs (spec/mrope.go).

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/posenc/posenc/spec"
)

// qwenVLText describes the text rotary of one multimodal Qwen model type.
type qwenVLText struct {
	dir         string  // transformers models/<dir>
	theta       float64 // the text config's class default rope_theta
	interleaved bool    // Qwen3-VL's apply_interleaved_mrope
	defSection  []int   // class default mrope_section (nil: required)
	vision      string  // vision_config key of the embedding width
	posEmbed    bool    // the vision tower also adds learned absolute embeddings (Qwen3-VL)
}

// qwenVLTypes are the model types hfQwenVL imports.
var qwenVLTypes = map[string]qwenVLText{
	// Qwen2VLTextConfig(rope_theta=1000000.0); the attention reads
	// self.rope_scaling["mrope_section"] (no default).
	"qwen2_vl": {dir: "qwen2_vl", theta: 1e6, vision: "embed_dim"},
	// Qwen2_5_VLTextConfig(rope_theta=1000000.0); vision_config.hidden_size.
	"qwen2_5_vl": {dir: "qwen2_5_vl", theta: 1e6, vision: "hidden_size"},
	// Qwen3VLTextConfig(rope_theta=5000000.0); Qwen3VLTextRotaryEmbedding:
	// rope_scaling.get("mrope_section", [24, 20, 20]), always interleaved.
	// Qwen3VLVisionModel: head_dim = hidden_size // num_heads,
	// Qwen3VLVisionRotaryEmbedding(head_dim // 2), plus pos_embed.
	"qwen3_vl": {dir: "qwen3_vl", theta: 5e6, interleaved: true, defSection: []int{24, 20, 20}, vision: "hidden_size", posEmbed: true},
}

// hfQwenVL imports a qwen2_vl, qwen2_5_vl or qwen3_vl config: NAME, the
// text model's M-RoPE, and NAME_vision, the vision tower's 2D RoPE, when
// the config has a vision_config. The text parameters are read from
// text_config when present (transformers ≥ 4.52), else from the top level.
// A vision_config on its own (it has the same model_type: no text_config,
// no num_attention_heads, but num_heads) gives the one vision spec NAME.
func hfQwenVL(name, mt string, cfg obj) ([]Spec, error) {
	kind := qwenVLTypes[mt]
	if !cfg.has("text_config") && !cfg.has("num_attention_heads") {
		if cfg.has("num_heads") {
			v, err := qwenVisionSpec(name, mt+" vision_config", cfg, kind)
			if err != nil {
				return nil, err
			}
			return []Spec{v}, nil
		}
		if mt == "qwen3_vl" {
			return nil, cfg.errf("text_config", "required for model_type qwen3_vl: the language model's config (a vision_config on its own has num_heads)")
		}
	}
	text := cfg
	if cfg.has("text_config") {
		var err error
		if text, err = cfg.object("text_config"); err != nil {
			return nil, err
		}
	}
	key := text.first("rope_scaling", "rope_parameters")
	if key == "" {
		if kind.defSection == nil {
			return nil, text.errf("rope_scaling", "required for model_type %s: its mrope_section splits the rotary pairs among the t, h, w positions", mt)
		}
		text = withRoPE(text, "rope_scaling", map[string]any{"rope_type": "default"})
		key = "rope_scaling"
	}
	rp, err := text.object(key)
	if err != nil {
		return nil, err
	}
	section := kind.defSection
	secFrom := "class default in transformers models/" + kind.dir
	if rp.has("mrope_section") {
		if section, err = intList(rp, "mrope_section"); err != nil {
			return nil, err
		}
		secFrom = "config " + rp.field("mrope_section")
	} else if section == nil {
		return nil, rp.errf("mrope_section", "required for model_type %s (apply_multimodal_rotary_pos_emb reads it)", mt)
	}
	var notes []string
	if rp.has("mrope_interleaved") {
		v, err := rp.boolean("mrope_interleaved")
		if err != nil {
			return nil, err
		}
		if v != kind.interleaved {
			notes = append(notes, fmt.Sprintf("%s %v is not read: transformers' %s always uses %s", rp.field("mrope_interleaved"), v, kind.dir, layoutName(kind.interleaved)))
		}
	}
	// The rope object without the M-RoPE keys, which hfScaling does not
	// know; Qwen2VLConfig renames rope type "mrope" to "default".
	stripped := map[string]any{}
	for k, v := range rp.m {
		if k == "mrope_section" || k == "mrope_interleaved" {
			continue
		}
		if (k == "type" || k == "rope_type") && v == "mrope" {
			v = "default"
		}
		stripped[k] = v
	}
	text = withRoPE(text, key, stripped)

	how := "consecutive sections (apply_multimodal_rotary_pos_emb: cos.split(mrope_section·2), chunk j from axis j%3)"
	if kind.interleaved {
		how = "interleaved (apply_interleaved_mrope: h at pairs 1, 4, … below 3·section[1], w at 2, 5, … below 3·section[2], every other pair, the tail included, t — as transformers and vLLM; ggml leaves the tail unrotated)"
	}
	d := &doc{}
	d.note("imported from Hugging Face config.json (model_type %s)", mt)
	d.note("multimodal RoPE: mrope_section %s (%s) over the t, h, w position ids of get_rope_index, %s", intsYAML(section), secFrom, how)
	for _, n := range notes {
		d.note("%s", n)
	}
	if err := checkName(hfSource, name); err != nil {
		return nil, err
	}
	d.set("name", name)
	if err := hfRoPE(text, llamaLike(kind.dir, kind.theta, 1), d); err != nil {
		return nil, err
	}
	d.set("mrope_section", intsYAML(section))
	if kind.interleaved {
		d.setBool("mrope_interleaved", true)
	}
	y, err := finish(hfSource, name, d)
	if err != nil {
		return nil, err
	}
	specs := []Spec{{Name: name, YAML: y}}
	if cfg.has("vision_config") {
		vc, err := cfg.object("vision_config")
		if err != nil {
			return nil, err
		}
		v, err := qwenVisionSpec(name+"_vision", mt, vc, kind)
		if err != nil {
			return nil, err
		}
		specs = append(specs, v)
	}
	return specs, nil
}

// qwenVisionSpec imports the vision tower vc of Qwen2-VL, Qwen2.5-VL or
// Qwen3-VL: its vision rotary embedding of dim head_dim/2 with the fixed
// θ = 10000, gathered by rot_pos_emb at the patch's row id (first
// head_dim/4 pairs) and column id (last head_dim/4 pairs): mrope_section
// [head_dim/4, head_dim/4] with mrope_freqs per_axis.
func qwenVisionSpec(name, mt string, vc obj, kind qwenVLText) (Spec, error) {
	if err := checkName(hfSource, name); err != nil {
		return Spec{}, err
	}
	for _, k := range []string{kind.vision, "num_heads"} {
		if !vc.has(k) {
			return Spec{}, vc.errf(k, "required for the %s vision tower: head_dim = %s / num_heads", kind.dir, kind.vision)
		}
	}
	dim, err := vc.integer(kind.vision, 1)
	if err != nil {
		return Spec{}, err
	}
	heads, err := vc.integerIn("num_heads", 1, maxHeads)
	if err != nil {
		return Spec{}, err
	}
	if dim%heads != 0 || (dim/heads)%4 != 0 || dim/heads > spec.MaxDim {
		return Spec{}, vc.errf(kind.vision, "%d / num_heads %d must be a head_dim divisible by 4, at most %d (two sections of head_dim/4 pairs)", dim, heads, spec.MaxDim)
	}
	hd := dim / heads
	d := &doc{}
	d.note("imported from Hugging Face config.json (model_type %s): the vision tower", mt)
	d.note("head_dim %d = %s %d / num_heads %d", hd, vc.field(kind.vision), dim, heads)
	d.note("2D RoPE: the vision rotary embedding of dim head_dim/2 = %d (theta 10000) gathered by rot_pos_emb at the row id (pairs 0..%d) and the column id (pairs %d..%d); positions (row, column) per patch", hd/2, hd/4-1, hd/4, hd/2-1)
	if kind.posEmbed {
		d.note("not in this spec: the tower also adds learned absolute embeddings (pos_embed, num_position_embeddings entries, bilinearly interpolated to the patch grid) to the patches before its blocks")
	}
	d.set("name", name)
	d.set("encoding", "rope")
	d.setInt("head_dim", hd)
	d.set("layout", "half")
	d.setNum("base", 10000)
	d.set("mrope_section", intsYAML([]int{hd / 4, hd / 4}))
	d.set("mrope_freqs", "per_axis")
	y, err := finish(hfSource, name, d)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Name: name, YAML: y}, nil
}

// withRoPE returns cfg with its key replaced by the rope object m.
func withRoPE(cfg obj, key string, m map[string]any) obj {
	c := make(map[string]any, len(cfg.m)+1)
	for k, v := range cfg.m {
		c[k] = v
	}
	c[key] = m
	return obj{path: cfg.path, m: c}
}

// intList reads mrope_section: a list of positive integers, at most
// maxSections.
func intList(o obj, key string) ([]int, error) {
	list, err := o.list(key, "integers", maxSections, "one per position axis")
	if err != nil {
		return nil, err
	}
	out := make([]int, len(list))
	for i, it := range list {
		n, ok := it.(json.Number)
		v, err := n.Int64()
		if !ok || err != nil || v < 1 || v > 1<<20 {
			return nil, o.errf(fmt.Sprintf("%s[%d]", key, i), "must be an integer ≥ 1, got %s", jsonKind(it))
		}
		out[i] = int(v)
	}
	return out, nil
}

// intsYAML formats a flow list of integers.
func intsYAML(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// layoutName names an M-RoPE section layout.
func layoutName(interleaved bool) string {
	if interleaved {
		return "interleaved sections"
	}
	return "consecutive sections"
}
