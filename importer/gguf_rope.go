package importer

// Rotary architectures: head_dim, rotary_dim, base and the
// <arch>.rope.scaling.* metadata.

import (
	"math"
	"strings"

	"github.com/posenc/posenc/spec"
)

// ggufRopeKeys are the <arch>.rope.* keys the importer understands
// (llama.cpp src/llama-arch.cpp LLM_KV_ROPE_*). Any other rope key is an
// error.
var ggufRopeKeys = map[string]bool{
	"rope.freq_base":                       true,
	"rope.dimension_count":                 true,
	"rope.scale_linear":                    true,
	"rope.scaling.type":                    true,
	"rope.scaling.factor":                  true,
	"rope.scaling.original_context_length": true,
	"rope.scaling.attn_factor":             true,
	"rope.scaling.finetuned":               true,
	"rope.scaling.yarn_beta_fast":          true,
	"rope.scaling.yarn_beta_slow":          true,
	"rope.scaling.yarn_ext_factor":         true,
}

// ggufFreqTensors are tensors through which llama.cpp applies per-dimension
// frequency factors (Llama 3.1's rope_freqs from convert_hf_to_gguf.py's
// generate_extra_tensors, LongRoPE's rope_factors_long/short): their
// values are tensor data, not metadata.
var ggufFreqTensors = []string{"rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight"}

// ggufRoPE imports a rotary architecture, following llama.cpp's
// llama_model::load_hparams: n_embd_head_k = attention.key_length or
// embedding_length / head_count; n_rot = rope.dimension_count or
// n_embd_head_k; freq_base default 10000; rope scaling type default
// "linear" with factor rope.scaling.factor (or the older rope.scale_linear).
func ggufRoPE(m ggufMeta, layout string, d *doc) error {
	for _, k := range sortedKeys(m.h.kv) {
		if rest, ok := strings.CutPrefix(k, m.arch+".rope."); ok && !ggufRopeKeys["rope."+rest] {
			return ggufErr(k, "unknown RoPE metadata key; posenc cannot tell what it changes")
		}
	}
	for _, t := range m.h.tensors {
		for _, f := range ggufFreqTensors {
			if t == f || strings.HasSuffix(t, "."+f) {
				return ggufErr(t, "llama.cpp applies this model's RoPE scaling (Llama 3.1 rope_type llama3, or LongRoPE factors) through the tensor %s, whose values are tensor data, not header metadata; import the model's Hugging Face config.json instead", quoteInput(t))
			}
		}
	}
	if m.has("attention.max_alibi_bias") {
		if v, err := m.number("attention.max_alibi_bias"); err != nil || v != 0 {
			return ggufErr(m.key("attention.max_alibi_bias"), "a RoPE architecture with an ALiBi bias is not supported")
		}
	}

	var headDim int
	if m.has("attention.key_length") {
		var err error
		if headDim, err = m.integer("attention.key_length", 1); err != nil {
			return err
		}
		d.note("head_dim %d: %s", headDim, m.key("attention.key_length"))
	} else {
		heads, err := ggufHeads(m)
		if err != nil {
			return err
		}
		if !m.has("embedding_length") {
			return ggufErr(m.key("embedding_length"), "required (with no attention.key_length): divided by the head count to give head_dim")
		}
		embd, err := m.integer("embedding_length", 1)
		if err != nil {
			return err
		}
		if embd%heads != 0 {
			return ggufErr(m.key("embedding_length"), "%d is not divisible by attention.head_count %d", embd, heads)
		}
		headDim = embd / heads
		d.note("head_dim %d = %s %d / %s %d", headDim, m.key("embedding_length"), embd, m.key("attention.head_count"), heads)
	}
	if headDim%2 != 0 || headDim > spec.MaxDim {
		return ggufErr(m.key("attention.key_length"), "head_dim %d must be even and at most %d", headDim, spec.MaxDim)
	}
	rotaryDim := headDim
	if m.has("rope.dimension_count") {
		var err error
		if rotaryDim, err = m.integer("rope.dimension_count", 2); err != nil {
			return err
		}
		if rotaryDim%2 != 0 || rotaryDim > headDim {
			return ggufErr(m.key("rope.dimension_count"), "%d must be even and at most head_dim %d", rotaryDim, headDim)
		}
		if rotaryDim != headDim {
			d.note("rotary_dim %d: %s", rotaryDim, m.key("rope.dimension_count"))
		}
	}
	base, baseFrom := 10000.0, "llama.cpp default (no rope.freq_base)"
	if m.has("rope.freq_base") {
		var err error
		if base, err = m.number("rope.freq_base"); err != nil {
			return err
		}
		if !(base > 1) {
			return ggufErr(m.key("rope.freq_base"), "must be > 1, got %v", base)
		}
		baseFrom = m.key("rope.freq_base")
	}
	d.note("base %s: %s", fmtNum(base), baseFrom)
	if layout == spec.LayoutInterleaved {
		d.note("layout interleaved: llama.cpp LLAMA_ROPE_TYPE_NORM for %s; convert_hf_to_gguf.py permuted Q/K so HF's rotate_half pairs are adjacent in these tensors", m.arch)
	} else {
		d.note("layout half: llama.cpp LLAMA_ROPE_TYPE_NEOX for %s (pairs (i, i+R/2) on unpermuted Q/K)", m.arch)
	}
	d.set("encoding", spec.RoPE)
	d.setInt("head_dim", headDim)
	if rotaryDim != headDim {
		d.setInt("rotary_dim", rotaryDim)
	}
	d.set("layout", layout)
	d.setNum("base", base)
	ctx := 0
	if m.has("context_length") {
		var err error
		if ctx, err = m.integer("context_length", 1); err != nil {
			return err
		}
		mp := capMaxPosition(ctx, rotaryDim, layout)
		if mp < ctx {
			d.note("max_position %d: %s %d capped by the importer (≤ %d positions, table ≤ %d MiB); larger positions are computed exactly", mp, m.key("context_length"), ctx, MaxImportPosition, MaxImportTableBytes>>20)
		} else {
			d.note("max_position %d: %s", mp, m.key("context_length"))
		}
		d.setInt("max_position", mp)
	} else {
		d.note("max_position: no %s; the spec default %d applies", m.key("context_length"), spec.DefaultMaxPosition)
	}
	return ggufScaling(m, ctx, d)
}

// ggufScaling translates llama.cpp's rope scaling metadata.
func ggufScaling(m ggufMeta, ctx int, d *doc) error {
	typ := "linear" // llama.cpp: std::string rope_scaling("linear") unless the key is present
	typKey := m.key("rope.scaling.type")
	if v, ok := m.h.kv[typKey]; ok {
		s, isStr := v.(string)
		if !isStr {
			return ggufErr(typKey, "must be a string, got %s", ggufKind(v))
		}
		typ = s
	}
	factor, factorKey := 0.0, ""
	for _, k := range []string{"rope.scaling.factor", "rope.scale_linear"} {
		if m.has(k) {
			v, err := m.number(k)
			if err != nil {
				return err
			}
			if v < 0 {
				return ggufErr(m.key(k), "must be ≥ 0, got %v", v)
			}
			if v != 0 { // llama.cpp treats 0 as absent
				factor, factorKey = v, m.key(k)
				break
			}
		}
	}
	attnKey := m.key("rope.scaling.attn_factor")
	attn, hasAttn := 1.0, false
	if m.has("rope.scaling.attn_factor") {
		var err error
		if attn, err = m.positive("rope.scaling.attn_factor"); err != nil {
			return err
		}
		hasAttn = attn != 1
	}
	switch typ {
	case "none":
		if hasAttn {
			return ggufErr(attnKey, "an attention factor %v without RoPE scaling is not expressible", attn)
		}
		d.note("scaling: %s none", typKey)
		return nil
	case "linear":
		if hasAttn {
			return ggufErr(attnKey, "an attention factor %v with linear scaling is not expressible", attn)
		}
		if factor == 0 || factor == 1 {
			return nil
		}
		d.note("scaling: linear, factor %s (llama.cpp freq_scale = 1/factor)", factorKey)
		d.sc("type", spec.ScaleLinear)
		d.scNum("factor", factor)
		return nil
	case "yarn":
	default:
		return ggufErr(typKey, "RoPE scaling type %s is not supported (posenc imports none, linear and yarn from GGUF metadata)", quoteInput(typ))
	}
	if factor == 0 {
		return ggufErr(m.key("rope.scaling.factor"), "required for yarn scaling")
	}
	if m.has("rope.scaling.yarn_ext_factor") {
		if v, err := m.number("rope.scaling.yarn_ext_factor"); err != nil || v != 1 {
			return ggufErr(m.key("rope.scaling.yarn_ext_factor"), "only the full YaRN ramp (ext_factor 1) is expressible")
		}
	}
	orig, origFrom := ctx, m.key("context_length")+" (llama.cpp's default for n_ctx_orig_yarn)"
	if m.has("rope.scaling.original_context_length") {
		var err error
		if orig, err = m.integer("rope.scaling.original_context_length", 1); err != nil {
			return err
		}
		origFrom = m.key("rope.scaling.original_context_length")
	} else if ctx == 0 {
		return ggufErr(m.key("rope.scaling.original_context_length"), "required for yarn scaling when context_length is absent")
	}
	d.note("scaling: yarn; factor %s; original_max_position %d: %s", factorKey, orig, origFrom)
	d.sc("type", spec.ScaleYaRN)
	d.scNum("factor", factor)
	d.scInt("original_max_position", orig)
	for _, k := range []string{"beta_fast", "beta_slow"} {
		if m.has("rope.scaling.yarn_" + k) {
			v, err := m.positive("rope.scaling.yarn_" + k)
			if err != nil {
				return err
			}
			d.scNum(k, v)
		}
	}
	if hasAttn {
		// ggml rope_yarn: mscale = attn_factor · (1 + 0.1·ln(1/freq_scale)).
		a := attn
		if factor > 1 {
			a *= 1 + 0.1*math.Log(factor)
		}
		d.note("scaling.attention_factor = %s %v × (1 + 0.1·ln factor), as ggml's rope_yarn scales cos and sin", attnKey, attn)
		d.scNum("attention_factor", a)
	}
	return nil
}
