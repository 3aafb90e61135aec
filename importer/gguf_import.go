package importer

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/posenc/posenc/spec"
)

// Which pairs llama.cpp rotates, per GGUF general.architecture, from
// llama.cpp src/llama-model.cpp llama_model_rope_type():
//
//   - LLAMA_ROPE_TYPE_NORM ("normal") rotates consecutive pairs (2i, 2i+1).
//     convert_hf_to_gguf.py permutes the Q and K weights of these models
//     (LlamaModel.permute) so that Hugging Face's rotate_half pairs
//     (i, i+R/2) land next to each other. Against the tensors stored in the
//     GGUF file the rotation is therefore interleaved, and that is the
//     layout posenc must use to rotate queries and keys computed from them.
//   - LLAMA_ROPE_TYPE_NEOX rotates (i, i+R/2) on unpermuted weights: half.
//
// Architectures missing from both lists (MROPE/IMROPE multimodal RoPE,
// per-layer bases, architectures without RoPE that are not handled below)
// are refused rather than guessed.
var ggufNormArch = map[string]bool{
	"llama": true, "deci": true, "baichuan": true, "plamo": true, "orion": true,
	"internlm2": true, "minicpm": true, "xverse": true, "command-r": true,
	"cohere2": true, "olmo": true, "arctic": true, "deepseek": true,
	"granite": true, "granitemoe": true, "chameleon": true,
}

var ggufNeoxArch = map[string]bool{
	"falcon": true, "grok": true, "dbrx": true, "stablelm": true, "bitnet": true,
	"qwen": true, "qwen2": true, "qwen2moe": true, "qwen3": true, "qwen3moe": true,
	"olmo2": true, "olmoe": true, "phi2": true, "phi3": true, "phimoe": true,
	"gemma": true, "gemma2": true, "starcoder2": true, "gptneox": true,
	"codeshell": true, "nemotron": true, "exaone": true,
}

// ggufRefusedArch explains architectures that use RoPE in a way one spec
// cannot describe.
var ggufRefusedArch = map[string]string{
	"gemma3":    "sliding-window layers use a second RoPE base (10000, hard-coded in llama.cpp) besides rope.freq_base",
	"qwen2vl":   "multimodal RoPE (LLAMA_ROPE_TYPE_MROPE) rotates sections by separate position ids",
	"deepseek2": "multi-head latent attention rotates a separate RoPE sub-head with YaRN log-multiplier scaling",
	"llama4":    "some layers use no RoPE and others chunked attention",
}

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

// ggufMeta reads typed metadata values of one header.
type ggufMeta struct {
	h    *ggufHeader
	arch string
}

// key is "<arch>.suffix".
func (m ggufMeta) key(suffix string) string { return m.arch + "." + suffix }

func (m ggufMeta) has(suffix string) bool {
	_, ok := m.h.kv[m.key(suffix)]
	return ok
}

// integer reads an integer-typed value in [lo, maxInt].
func (m ggufMeta) integer(suffix string, lo int) (int, error) {
	k := m.key(suffix)
	var v float64
	switch x := m.h.kv[k].(type) {
	case uint64:
		if x > maxInt {
			return 0, ggufErr(k, "%d exceeds %d", x, maxInt)
		}
		v = float64(x)
	case int64:
		v = float64(x)
	default:
		return 0, ggufErr(k, "must be an integer, got %s", ggufKind(m.h.kv[k]))
	}
	if v < float64(lo) || v > maxInt {
		return 0, ggufErr(k, "must be in [%d, %d], got %v", lo, maxInt, v)
	}
	return int(v), nil
}

// number reads a finite float (or integer) value.
func (m ggufMeta) number(suffix string) (float64, error) {
	k := m.key(suffix)
	var v float64
	switch x := m.h.kv[k].(type) {
	case float64:
		v = x
	case uint64:
		v = float64(x)
	case int64:
		v = float64(x)
	default:
		return 0, ggufErr(k, "must be a number, got %s", ggufKind(m.h.kv[k]))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, ggufErr(k, "must be finite, got %v", v)
	}
	return v, nil
}

// positive reads a number > 0.
func (m ggufMeta) positive(suffix string) (float64, error) {
	v, err := m.number(suffix)
	if err == nil && !(v > 0) {
		err = ggufErr(m.key(suffix), "must be > 0, got %v", v)
	}
	return v, err
}

// ggufKind describes a metadata value for messages.
func ggufKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing (key absent)"
	case uint64, int64:
		return fmt.Sprintf("the integer %v", x)
	case float64:
		return fmt.Sprintf("the float %v", x)
	case bool:
		return fmt.Sprintf("the bool %v", x)
	case string:
		return fmt.Sprintf("the string %q", x)
	case ggufLongString:
		return fmt.Sprintf("a %d-byte string", x.n)
	case ggufArrayValue:
		return fmt.Sprintf("an array of %d %s", x.count, ggufTypeNames[x.elem])
	}
	return fmt.Sprintf("%T", v)
}

// FromGGUF converts the metadata header of a GGUF file (ggml docs/gguf.md,
// versions 2 and 3) into posenc spec YAML named name. It reads the header
// up to and including the tensor infos and never the tensor data, so r
// may be a file, a pipe or the first megabytes of a download. RoPE
// architectures become rope specs with the layout llama.cpp uses for the
// stored tensors (see ggufNormArch); bloom and mpt become ALiBi, t5 and
// t5encoder the T5 bucketed bias, bert learned absolute embeddings. The
// YAML starts with "# imported from GGUF metadata (general.architecture X)".
func FromGGUF(name string, r io.Reader) ([]byte, error) {
	if err := checkName(ggufSource, name); err != nil {
		return nil, err
	}
	h, err := readGGUFHeader(r)
	if err != nil {
		return nil, err
	}
	av, ok := h.kv["general.architecture"]
	if !ok {
		return nil, ggufErr("general.architecture", "required: the model architecture")
	}
	arch, ok := av.(string)
	if !ok || arch == "" {
		return nil, ggufErr("general.architecture", "must be a non-empty string, got %s", ggufKind(av))
	}
	m := ggufMeta{h: h, arch: arch}
	d := &doc{}
	d.note("imported from GGUF metadata (general.architecture %s)", arch)
	d.set("name", name)
	switch {
	case arch == "bloom" || arch == "mpt":
		err = ggufALiBi(m, d)
	case arch == "t5" || arch == "t5encoder":
		err = ggufT5(m, d)
	case arch == "bert":
		err = ggufBERT(m, d)
	case ggufNormArch[arch]:
		err = ggufRoPE(m, spec.LayoutInterleaved, d)
	case ggufNeoxArch[arch]:
		err = ggufRoPE(m, spec.LayoutHalf, d)
	case ggufRefusedArch[arch] != "":
		err = ggufErr("general.architecture", "%q is not supported: %s", arch, ggufRefusedArch[arch])
	default:
		err = ggufErr("general.architecture", "unsupported architecture %q; supported: %s", arch, ggufSupported())
	}
	if err != nil {
		return nil, err
	}
	return finish(ggufSource, name, d)
}

// ggufSupported lists the architectures FromGGUF accepts, sorted.
func ggufSupported() string {
	names := []string{"bert", "bloom", "mpt", "t5", "t5encoder"}
	for k := range ggufNormArch {
		names = append(names, k)
	}
	for k := range ggufNeoxArch {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ggufHeads reads <arch>.attention.head_count (a scalar; per-layer arrays
// are refused).
func ggufHeads(m ggufMeta) (int, error) {
	if !m.has("attention.head_count") {
		return 0, ggufErr(m.key("attention.head_count"), "required: the number of attention heads")
	}
	return m.integer("attention.head_count", 1)
}

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
				return ggufErr(t, "llama.cpp applies this model's RoPE scaling (Llama 3.1 rope_type llama3, or LongRoPE factors) through the tensor %s, whose values are tensor data, not header metadata; import the model's Hugging Face config.json instead", t)
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
		return ggufErr(typKey, "RoPE scaling type %q is not supported (posenc imports none, linear and yarn from GGUF metadata)", typ)
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

// ggufALiBi imports bloom and mpt. llama.cpp reads
// <arch>.attention.max_alibi_bias for MPT; for BLOOM it hard-codes
// f_max_alibi_bias = 8 (load_hparams), as BLOOM's build_alibi_tensor does.
func ggufALiBi(m ggufMeta, d *doc) error {
	heads, err := ggufHeads(m)
	if err != nil {
		return err
	}
	maxBias, from := 8.0, "llama.cpp's fixed value for BLOOM"
	if m.has("attention.max_alibi_bias") {
		if maxBias, err = m.positive("attention.max_alibi_bias"); err != nil {
			return err
		}
		from = m.key("attention.max_alibi_bias")
	} else if m.arch != "bloom" {
		return ggufErr(m.key("attention.max_alibi_bias"), "required: without it llama.cpp applies no ALiBi bias")
	}
	d.note("ALiBi, causal decoder; heads %d: %s; max_bias %s: %s", heads, m.key("attention.head_count"), fmtNum(maxBias), from)
	alibiDoc(d, heads, maxBias)
	return nil
}

// ggufT5 imports the T5 encoder's bucketed relative bias: heads from
// attention.head_count, buckets from attention.relative_buckets_count
// (llama.cpp default 32); llama.cpp's llama_relative_position_bucket fixes
// max_distance at 128.
func ggufT5(m ggufMeta, d *doc) error {
	heads, err := ggufHeads(m)
	if err != nil {
		return err
	}
	num, from := 32, "llama.cpp default"
	if m.has("attention.relative_buckets_count") {
		if num, err = m.integer("attention.relative_buckets_count", 1); err != nil {
			return err
		}
		from = m.key("attention.relative_buckets_count")
	}
	d.note("T5 relative attention bias of the encoder self-attention (bidirectional: true); buckets.num %d: %s; max_distance 128 (fixed in llama.cpp)", num, from)
	d.set("encoding", spec.RPEBias)
	d.setInt("heads", heads)
	d.block("buckets",
		kv{key: "num", val: fmt.Sprint(num)},
		kv{key: "max_distance", val: "128"},
		kv{key: "bidirectional", val: "true"})
	return nil
}

// ggufBERT imports BERT's learned absolute position embeddings
// ([context_length][embedding_length], llama.cpp's position_embd tensor).
func ggufBERT(m ggufMeta, d *doc) error {
	for _, k := range []string{"embedding_length", "context_length"} {
		if !m.has(k) {
			return ggufErr(m.key(k), "required for the learned position table")
		}
	}
	dm, err := m.integer("embedding_length", 1)
	if err != nil {
		return err
	}
	if dm > spec.MaxDim {
		return ggufErr(m.key("embedding_length"), "%d exceeds %d", dm, spec.MaxDim)
	}
	ml, err := m.integer("context_length", 1)
	if err != nil {
		return err
	}
	d.note("learned absolute position embeddings: a [context_length %d][embedding_length %d] table given at run time", ml, dm)
	d.set("encoding", spec.Learned)
	d.setInt("d_model", dm)
	d.setInt("max_len", ml)
	return nil
}

// sortedKeys lists a map's keys in byte order.
func sortedKeys(kv map[string]any) []string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
