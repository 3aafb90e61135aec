package importer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/posenc/posenc/spec"
)

// ropeFamily describes how one Hugging Face model type stores its rotary
// embedding in config.json. Field names and class defaults come from
// transformers' models/<type>/configuration_<type>.py; the layout from the
// model's modeling_<type>.py (rotate_half ⇒ half, rotate_every_two ⇒
// interleaved).
type ropeFamily struct {
	source     string   // configuration file the defaults come from
	layout     string   // spec.LayoutHalf or spec.LayoutInterleaved
	layoutWhy  string   // where the layout comes from
	theta      float64  // class default rope_theta
	thetaKeys  []string // config keys holding rope_theta, first wins
	hiddenKeys []string // hidden_size and its aliases
	headsKeys  []string // num_attention_heads and its aliases
	maxPosKeys []string // max_position_embeddings and its aliases
	// partialKeys hold the fraction of head_dim that rotates
	// (partial_rotary_factor; GPT-NeoX's rotary_pct); partial is the class
	// default when none is present.
	partialKeys []string
	partial     float64
	// rotaryDimKey is GPT-J's absolute rotary_dim (null = the whole head).
	rotaryDimKey string
	// noScaling marks models whose HF implementation has no rope_scaling.
	noScaling bool
}

// Common config.json key lists.
var (
	llamaHidden = []string{"hidden_size"}
	llamaHeads  = []string{"num_attention_heads"}
	llamaMaxPos = []string{"max_position_embeddings"}
	llamaTheta  = []string{"rope_theta"}
	llamaPart   = []string{"partial_rotary_factor"}
)

// llamaLike is a RoPE family laid out like Llama: rotate_half, rope_theta,
// hidden_size / num_attention_heads, rope_scaling via modeling_rope_utils.
func llamaLike(model string, theta, partial float64) *ropeFamily {
	return &ropeFamily{
		source:      "transformers models/" + model + "/configuration_" + model + ".py",
		layout:      spec.LayoutHalf,
		layoutWhy:   "modeling_" + model + ".py applies rotate_half: pairs (i, i+R/2)",
		theta:       theta,
		thetaKeys:   llamaTheta,
		hiddenKeys:  llamaHidden,
		headsKeys:   llamaHeads,
		maxPosKeys:  llamaMaxPos,
		partialKeys: llamaPart,
		partial:     partial,
	}
}

// ropeFamilies maps config.json model_type to its RoPE description.
var ropeFamilies = map[string]*ropeFamily{
	"llama":      llamaLike("llama", 10000, 1),
	"mistral":    llamaLike("mistral", 10000, 1),
	"mixtral":    llamaLike("mixtral", 1e6, 1), // MixtralConfig(rope_theta=1e6)
	"qwen2":      llamaLike("qwen2", 10000, 1),
	"qwen2_moe":  llamaLike("qwen2_moe", 10000, 1),
	"qwen3":      llamaLike("qwen3", 10000, 1),
	"qwen3_moe":  llamaLike("qwen3_moe", 10000, 1),
	"phi3":       llamaLike("phi3", 10000, 1),
	"phi":        llamaLike("phi", 10000, 0.5),       // PhiConfig(partial_rotary_factor=0.5)
	"stablelm":   llamaLike("stablelm", 10000, 0.25), // StableLmConfig(partial_rotary_factor=0.25)
	"gemma":      llamaLike("gemma", 10000, 1),
	"gemma2":     llamaLike("gemma2", 10000, 1),
	"starcoder2": llamaLike("starcoder2", 10000, 1),
	"olmo":       llamaLike("olmo", 10000, 1),
	"olmo2":      llamaLike("olmo2", 10000, 1),
	// GptOssConfig(rope_theta=150000.0); modeling_gpt_oss.py's
	// _apply_rotary_emb splits the head with torch.chunk(x, 2): half.
	"gpt_oss": llamaLike("gpt_oss", 150000, 1),
	"falcon":  falconFamily,
	// GPTNeoXConfig(rotary_pct=0.25, rotary_emb_base=10000); newer
	// transformers name them partial_rotary_factor and rope_theta.
	"gpt_neox": {
		source:      "transformers models/gpt_neox/configuration_gpt_neox.py",
		layout:      spec.LayoutHalf,
		layoutWhy:   "modeling_gpt_neox.py applies rotate_half to the first rotary_ndims dims: pairs (i, i+R/2)",
		theta:       10000,
		thetaKeys:   []string{"rope_theta", "rotary_emb_base"},
		hiddenKeys:  llamaHidden,
		headsKeys:   llamaHeads,
		maxPosKeys:  llamaMaxPos,
		partialKeys: []string{"partial_rotary_factor", "rotary_pct"},
		partial:     0.25,
	},
	// GPTJConfig(n_embd, n_head, n_positions, rotary_dim=64), attribute_map
	// hidden_size→n_embd, num_attention_heads→n_head,
	// max_position_embeddings→n_positions; modeling_gptj.py uses
	// rotate_every_two and a fixed base of 10000.
	"gptj": {
		source:       "transformers models/gptj/configuration_gptj.py",
		layout:       spec.LayoutInterleaved,
		layoutWhy:    "modeling_gptj.py applies rotate_every_two: pairs (2i, 2i+1)",
		theta:        10000,
		hiddenKeys:   []string{"n_embd", "hidden_size"},
		headsKeys:    []string{"n_head", "num_attention_heads"},
		maxPosKeys:   []string{"n_positions", "max_position_embeddings"},
		rotaryDimKey: "rotary_dim",
		noScaling:    true,
	},
}

// falconFamily is Falcon's rotary variant (FalconConfig(alibi=False,
// rope_theta=10000.0), attribute_map num_attention_heads→n_head).
var falconFamily = &ropeFamily{
	source:      "transformers models/falcon/configuration_falcon.py",
	layout:      spec.LayoutHalf,
	layoutWhy:   "modeling_falcon.py applies rotate_half: pairs (i, i+R/2)",
	theta:       10000,
	thetaKeys:   llamaTheta,
	hiddenKeys:  llamaHidden,
	headsKeys:   []string{"num_attention_heads", "n_head"},
	maxPosKeys:  llamaMaxPos,
	partialKeys: llamaPart,
	partial:     1,
}

// modelAliases maps legacy model_type values to the type transformers
// loads them as (Falcon's pre-integration RefinedWeb configs).
var modelAliases = map[string]string{
	"RefinedWeb":      "falcon",
	"RefinedWebModel": "falcon",
}

// otherModels are the non-RoPE model types FromHF understands.
var otherModels = []string{"bert", "bloom", "mpt", "mt5", "t5"}

// rejectedKeys are top-level fields that change positional semantics in
// ways one spec cannot express; any RoPE config carrying them is refused.
var rejectedKeys = map[string]string{
	"rope_local_base_freq":   "sliding-window layers use a second RoPE base (Gemma 3); one spec has one base",
	"no_rope_layers":         "some layers use no RoPE at all; one spec describes one encoding",
	"no_rope_layer_interval": "some layers use no RoPE at all; one spec describes one encoding",
	"rope_interleave":        "DeepSeek's rope_interleave re-orders the rotary dims",
	"qk_rope_head_dim":       "multi-head latent attention rotates a separate RoPE sub-head",
}

// FromHF converts a Hugging Face config.json into posenc spec YAML named
// name (a valid spec name, see PackageName). It understands the RoPE model
// types in ropeFamilies (Llama, Mistral, Mixtral, Qwen2/3, Phi-3, Gemma,
// GPT-NeoX, GPT-J, Falcon, GPT-OSS, …) including every rope_scaling /
// rope_parameters type of transformers' modeling_rope_utils.py, the ALiBi
// models BLOOM, MPT and Falcon with alibi: true, T5's bucketed relative bias
// and BERT's learned absolute embeddings. The YAML starts with the comment
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
			return nil, cfg.errf("model_type", "unsupported model type %q; supported: %s", mt, supportedModels())
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
	n, err := cfg.integer(k, 1)
	return n, k, err
}

// hfRoPE imports a rotary model of family fam.
func hfRoPE(cfg obj, fam *ropeFamily, d *doc) error {
	for _, k := range cfg.sortedKeys() {
		if why, bad := rejectedKeys[k]; bad && cfg.has(k) {
			return cfg.errf(k, "not supported: %s", why)
		}
	}
	// The RoPE parameters live in rope_scaling (transformers ≤ 4.x) or
	// rope_parameters (transformers 5, which also moves rope_theta and
	// partial_rotary_factor there).
	var rp *obj
	switch {
	case cfg.has("rope_scaling") && cfg.has("rope_parameters"):
		return cfg.errf("rope_parameters", "both rope_scaling and rope_parameters are given; a config has one or the other")
	case cfg.has("rope_scaling") || cfg.has("rope_parameters"):
		key := "rope_scaling"
		if cfg.has("rope_parameters") {
			key = "rope_parameters"
		}
		if fam.noScaling {
			return cfg.errf(key, "%s's Hugging Face implementation has no RoPE scaling; refusing to guess what it means", cfg.m["model_type"])
		}
		o, err := cfg.object(key)
		if err != nil {
			return err
		}
		rp = &o
	}

	d.set("encoding", spec.RoPE)

	// head_dim: modeling_rope_utils uses getattr(config, "head_dim", None)
	// or hidden_size // num_attention_heads.
	var headDim int
	if cfg.has("head_dim") {
		var err error
		if headDim, err = cfg.integer("head_dim", 1); err != nil {
			return err
		}
		d.note("head_dim %d: config head_dim", headDim)
	} else {
		hk := cfg.first(fam.hiddenKeys...)
		if hk == "" {
			return cfg.errf(fam.hiddenKeys[0], "required (with no head_dim): the model width, divided by the head count to give head_dim")
		}
		hidden, err := cfg.integer(hk, 1)
		if err != nil {
			return err
		}
		heads, nk, err := hfHeads(cfg, fam.headsKeys)
		if err != nil {
			return err
		}
		if hidden%heads != 0 {
			return cfg.errf(hk, "%s %d is not divisible by %s %d, so head_dim is undefined", hk, hidden, nk, heads)
		}
		headDim = hidden / heads
		d.note("head_dim %d = %s %d / %s %d", headDim, hk, hidden, nk, heads)
	}
	if headDim%2 != 0 {
		return cfg.errf("head_dim", "head_dim %d is odd; RoPE rotates pairs of dimensions", headDim)
	}
	if headDim > spec.MaxDim {
		return cfg.errf("head_dim", "head_dim %d exceeds %d", headDim, spec.MaxDim)
	}

	// rotary_dim: GPT-J's absolute rotary_dim, else
	// int(head_dim * partial_rotary_factor) as in modeling_rope_utils.
	rotaryDim := headDim
	switch {
	case fam.rotaryDimKey != "":
		// GPTJConfig(rotary_dim=64): an absent key means 64. An explicit
		// null makes modeling_gptj.py build its table over embed_dim
		// (pos_embd_dim = rotary_dim or embed_dim), which is not a
		// per-head rotation posenc can express.
		v, present := cfg.m[fam.rotaryDimKey]
		switch {
		case !present:
			rotaryDim = 64
			d.note("rotary_dim 64: class default in %s", fam.source)
		case v == nil:
			return cfg.errf(fam.rotaryDimKey, "is null: GPT-J then derives its frequencies from the whole embedding width (embed_dim), not the head; not supported")
		default:
			var err error
			if rotaryDim, err = cfg.integer(fam.rotaryDimKey, 1); err != nil {
				return err
			}
			d.note("rotary_dim %d: config %s", rotaryDim, fam.rotaryDimKey)
		}
		if rotaryDim > headDim {
			return cfg.errf(fam.rotaryDimKey, "%d exceeds head_dim %d", rotaryDim, headDim)
		}
		if rotaryDim%2 != 0 {
			return cfg.errf(fam.rotaryDimKey, "%d is odd; RoPE rotates pairs of dimensions", rotaryDim)
		}
	default:
		src, key := cfg, cfg.first(fam.partialKeys...)
		if rp != nil && rp.has("partial_rotary_factor") {
			if err := sameNumber(cfg, key, *rp, "partial_rotary_factor"); err != nil {
				return err
			}
			src, key = *rp, "partial_rotary_factor"
		}
		factor, from := fam.partial, "class default in "+fam.source
		if key != "" {
			var err error
			if factor, err = src.num(key); err != nil {
				return err
			}
			from = "config " + src.field(key)
		}
		if !(factor > 0 && factor <= 1) {
			return src.errf(key, "must be in (0, 1], got %v", factor)
		}
		if factor != 1 {
			rotaryDim = int(float64(headDim) * factor)
			field := src.field(key)
			if key == "" {
				field = "partial_rotary_factor"
			}
			if rotaryDim < 2 || rotaryDim%2 != 0 {
				return &Error{Source: hfSource, Field: field, Msg: fmt.Sprintf("int(head_dim %d × %v) = %d is not an even rotary dimension ≥ 2; RoPE rotates pairs", headDim, factor, rotaryDim)}
			}
			d.note("rotary_dim %d = int(head_dim %d × %v): %s", rotaryDim, headDim, factor, from)
		}
	}

	// base: rope_theta (or the family's alias), rope_parameters.rope_theta
	// in transformers 5, else the class default.
	base, baseFrom := fam.theta, "class default in "+fam.source
	if fam.rotaryDimKey != "" {
		baseFrom = "fixed in modeling_gptj.py"
	} else {
		src, key := cfg, cfg.first(fam.thetaKeys...)
		if rp != nil && rp.has("rope_theta") {
			if err := sameNumber(cfg, key, *rp, "rope_theta"); err != nil {
				return err
			}
			src, key = *rp, "rope_theta"
		}
		if key != "" {
			var err error
			if base, err = src.num(key); err != nil {
				return err
			}
			if !(base > 1) {
				return src.errf(key, "must be > 1, got %v", base)
			}
			baseFrom = "config " + src.field(key)
		}
	}

	// max_position: the model's context length, capped.
	mpeKey := cfg.first(fam.maxPosKeys...)
	mpe := 0
	if mpeKey != "" {
		var err error
		if mpe, err = cfg.integer(mpeKey, 1); err != nil {
			return err
		}
	}

	d.note("base %s: %s", fmtNum(base), baseFrom)
	d.note("layout %s: %s", fam.layout, fam.layoutWhy)
	d.setInt("head_dim", headDim)
	if rotaryDim != headDim {
		d.setInt("rotary_dim", rotaryDim)
	}
	d.set("layout", fam.layout)
	d.setNum("base", base)
	if mpeKey != "" {
		mp := capMaxPosition(mpe, rotaryDim, fam.layout)
		if mp < mpe {
			d.note("max_position %d: config %s %d capped by the importer (≤ %d positions, table ≤ %d MiB); larger positions are computed exactly", mp, mpeKey, mpe, MaxImportPosition, MaxImportTableBytes>>20)
		} else {
			d.note("max_position %d: config %s", mp, mpeKey)
		}
		d.setInt("max_position", mp)
	} else {
		d.note("max_position: no %s in config.json; the spec default %d applies", fam.maxPosKeys[0], spec.DefaultMaxPosition)
	}
	if rp == nil {
		return nil
	}
	return hfScaling(cfg, *rp, mpeKey, mpe, rotaryDim, d)
}

// sameNumber checks that a value given both at the top level (cfg.top,
// absent when top is "") and in rope_parameters (rp.key) is the same number.
func sameNumber(cfg obj, top string, rp obj, key string) error {
	if top == "" {
		return nil
	}
	a, err := cfg.num(top)
	if err != nil {
		return err
	}
	b, err := rp.num(key)
	if err != nil {
		return err
	}
	if a != b {
		return rp.errf(key, "%v disagrees with the top-level %s %v", b, top, a)
	}
	return nil
}

// ropeKeys are every key a rope_scaling / rope_parameters object may carry
// (modeling_rope_utils RopeParameters); "type" is the old name of rope_type.
var ropeKeys = map[string]bool{
	"rope_type": true, "type": true, "rope_theta": true, "partial_rotary_factor": true,
	"factor": true, "original_max_position_embeddings": true,
	"low_freq_factor": true, "high_freq_factor": true,
	"beta_fast": true, "beta_slow": true, "mscale": true, "mscale_all_dim": true,
	"attention_factor": true, "truncate": true, "short_factor": true, "long_factor": true,
}

// ropeTypeKeys are, per rope_type, the keys its compute function in
// modeling_rope_utils reads (besides rope_type, rope_theta and
// partial_rotary_factor). Other known keys are ignored, as HF ignores them.
var ropeTypeKeys = map[string][]string{
	"default":  nil,
	"linear":   {"factor"},
	"ntk":      {"factor"},
	"dynamic":  {"factor", "original_max_position_embeddings"},
	"yarn":     {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"},
	"llama3":   {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"},
	"longrope": {"factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"},
}

// ropeTypeAliases are older names: Phi-3's configuration_phi3.py renamed
// "su" (and the short-lived "phi3") to "longrope".
var ropeTypeAliases = map[string]string{"su": "longrope", "phi3": "longrope"}

// hfScaling translates rope_scaling / rope_parameters rp into the spec's
// scaling mapping, following modeling_rope_utils.py's compute functions.
// mpeKey/mpe are the config's max_position_embeddings (mpeKey "" when
// absent).
func hfScaling(cfg, rp obj, mpeKey string, mpe, rotaryDim int, d *doc) error {
	for _, k := range rp.sortedKeys() {
		if !ropeKeys[k] {
			return rp.errf(k, "unknown RoPE scaling key; posenc knows %s", knownRopeKeys())
		}
	}
	tk := rp.first("rope_type", "type")
	if tk == "" {
		return rp.errf("rope_type", "required: the RoPE type (default, linear, dynamic, yarn, llama3, longrope)")
	}
	rt, err := rp.str(tk)
	if err != nil {
		return err
	}
	if tk == "rope_type" && rp.has("type") {
		if old, err := rp.str("type"); err != nil || old != rt {
			return rp.errf("type", "disagrees with rope_type %q", rt)
		}
	}
	typ := rt
	if a, ok := ropeTypeAliases[rt]; ok {
		typ = a
	}
	used, ok := ropeTypeKeys[typ]
	if !ok {
		return rp.errf(tk, "unknown RoPE type %q; posenc imports default, linear, ntk, dynamic, yarn, llama3, longrope (su, phi3)", rt)
	}
	var ignored []string
	for _, k := range rp.sortedKeys() {
		switch k {
		case "rope_type", "type", "rope_theta", "partial_rotary_factor":
			continue
		}
		if !contains(used, k) && rp.has(k) {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		d.note("%s keys %s are not read by HF for rope_type %s and are ignored", rp.path, strings.Join(ignored, ", "), rt)
	}
	if typ == "default" {
		d.note("%s rope_type %s: unscaled RoPE", rp.path, rt)
		return nil
	}

	factor := func() (float64, error) {
		if !rp.has("factor") {
			return 0, rp.errf("factor", "required for rope_type %s", rt)
		}
		return rp.positive("factor")
	}
	// original returns original_max_position_embeddings from rp, falling
	// back to config max_position_embeddings as modeling_rope_utils does
	// for dynamic, yarn and longrope.
	original := func(fallback bool) (int, string, error) {
		if rp.has("original_max_position_embeddings") {
			v, err := rp.integer("original_max_position_embeddings", 1)
			return v, "config " + rp.field("original_max_position_embeddings"), err
		}
		if fallback && mpeKey != "" {
			return mpe, "config " + mpeKey + " (HF's fallback when " + rp.path + " has no original_max_position_embeddings)", nil
		}
		return 0, "", rp.errf("original_max_position_embeddings", "required for rope_type %s (the pre-training context length)", rt)
	}

	d.note("scaling: %s rope_type %s (transformers modeling_rope_utils.py)", rp.path, rt)
	d.sc("type", typ)
	switch typ {
	case "linear", "ntk":
		f, err := factor()
		if err != nil {
			return err
		}
		d.scNum("factor", f)
	case "dynamic":
		f, err := factor()
		if err != nil {
			return err
		}
		o, from, err := original(true)
		if err != nil {
			return err
		}
		d.note("scaling.original_max_position %d: %s", o, from)
		d.scNum("factor", f)
		d.scInt("original_max_position", o)
	case "llama3":
		f, err := factor()
		if err != nil {
			return err
		}
		o, _, err := original(false)
		if err != nil {
			return err
		}
		var lo, hi float64
		for _, k := range []string{"low_freq_factor", "high_freq_factor"} {
			if !rp.has(k) {
				return rp.errf(k, "required for rope_type llama3")
			}
		}
		if lo, err = rp.positive("low_freq_factor"); err != nil {
			return err
		}
		if hi, err = rp.positive("high_freq_factor"); err != nil {
			return err
		}
		if !(hi > lo) {
			return rp.errf("high_freq_factor", "must be > low_freq_factor %v, got %v", lo, hi)
		}
		d.scNum("factor", f)
		d.scNum("low_freq_factor", lo)
		d.scNum("high_freq_factor", hi)
		d.scInt("original_max_position", o)
	case "yarn":
		return hfYaRN(rp, rt, factor, original, d)
	case "longrope":
		return hfLongRoPE(cfg, rp, mpeKey, mpe, rotaryDim, original, d)
	}
	return nil
}

// hfYaRN writes YaRN scaling (modeling_rope_utils _compute_yarn_parameters).
// factor is rope_scaling's own factor, as transformers uses it since PR
// #40320 (issue #38224); earlier 4.x releases replaced it by
// max_position_embeddings / original_max_position_embeddings whenever the
// latter was given.
func hfYaRN(rp obj, rt string, factor func() (float64, error), original func(bool) (int, string, error), d *doc) error {
	f, err := factor()
	if err != nil {
		return err
	}
	o, from, err := original(true)
	if err != nil {
		return err
	}
	d.note("scaling.original_max_position %d: %s", o, from)
	d.scNum("factor", f)
	d.scInt("original_max_position", o)
	// beta_fast / beta_slow: HF reads them as `get(...) or 32` / `or 1`, so
	// 0 means the default too.
	for _, k := range []string{"beta_fast", "beta_slow"} {
		if rp.has(k) {
			v, err := rp.num(k)
			if err != nil {
				return err
			}
			if v != 0 {
				d.scNum(k, v)
			}
		}
	}
	// mscale / mscale_all_dim: HF uses their ratio only when both are
	// truthy (`if mscale and mscale_all_dim`); otherwise they are unused.
	if rp.has("mscale") && rp.has("mscale_all_dim") {
		m, err := rp.num("mscale")
		if err != nil {
			return err
		}
		ma, err := rp.num("mscale_all_dim")
		if err != nil {
			return err
		}
		if m != 0 && ma != 0 {
			if !(m > 0) || !(ma > 0) {
				return rp.errf("mscale", "mscale %v and mscale_all_dim %v must be > 0", m, ma)
			}
			d.scNum("mscale", m)
			d.scNum("mscale_all_dim", ma)
		}
	} else if rp.has("mscale") || rp.has("mscale_all_dim") {
		d.note("%s: mscale without mscale_all_dim (or the reverse) is unused by HF", rp.path)
	}
	if rp.has("attention_factor") {
		a, err := rp.positive("attention_factor")
		if err != nil {
			return err
		}
		d.scNum("attention_factor", a)
	}
	if rp.has("truncate") {
		t, err := rp.boolean("truncate")
		if err != nil {
			return err
		}
		d.scBool("truncate", t)
	}
	return nil
}

// hfLongRoPE writes LongRoPE scaling (modeling_rope_utils
// _compute_longrope_parameters). Phi-3 keeps the pre-training length in a
// top-level original_max_position_embeddings; HF then uses
// factor = max_position_embeddings / original_max_position_embeddings and
// ignores rope_scaling's factor.
func hfLongRoPE(cfg, rp obj, mpeKey string, mpe, rotaryDim int, original func(bool) (int, string, error), d *doc) error {
	var f float64
	hasF := false
	var o int
	if cfg.has("original_max_position_embeddings") {
		var err error
		if o, err = cfg.integer("original_max_position_embeddings", 1); err != nil {
			return err
		}
		if mpeKey == "" {
			return cfg.errf("max_position_embeddings", "required with a top-level original_max_position_embeddings: HF's LongRoPE factor is their ratio")
		}
		f, hasF = float64(mpe)/float64(o), true
		if rp.has("original_max_position_embeddings") {
			if v, err := rp.integer("original_max_position_embeddings", 1); err != nil || v != o {
				return rp.errf("original_max_position_embeddings", "disagrees with the top-level original_max_position_embeddings %d", o)
			}
		}
		d.note("scaling.factor %s = %s %d / original_max_position_embeddings %d (HF's Phi-3 rule)", fmtNum(f), mpeKey, mpe, o)
		if rp.has("factor") {
			d.note("%s.factor is ignored by HF when original_max_position_embeddings is top-level", rp.path)
		}
	} else {
		var from string
		var err error
		if o, from, err = original(true); err != nil {
			return err
		}
		d.note("scaling.original_max_position %d: %s", o, from)
		if rp.has("factor") {
			if f, err = rp.positive("factor"); err != nil {
				return err
			}
			hasF = true
		}
	}
	lists := map[string][]float64{}
	for _, k := range []string{"short_factor", "long_factor"} {
		if !rp.has(k) {
			return rp.errf(k, "required for rope_type longrope: rotary_dim/2 = %d factors", rotaryDim/2)
		}
		v, err := rp.numbers(k)
		if err != nil {
			return err
		}
		if len(v) != rotaryDim/2 {
			return rp.errf(k, "has %d entries; rotary_dim %d needs rotary_dim/2 = %d", len(v), rotaryDim, rotaryDim/2)
		}
		lists[k] = v
	}
	if hasF {
		d.scNum("factor", f)
	}
	d.scInt("original_max_position", o)
	if rp.has("attention_factor") {
		a, err := rp.positive("attention_factor")
		if err != nil {
			return err
		}
		d.scNum("attention_factor", a)
	}
	d.scList("short_factor", lists["short_factor"])
	d.scList("long_factor", lists["long_factor"])
	return nil
}

// knownRopeKeys lists ropeKeys sorted, for messages.
func knownRopeKeys() string {
	var ks []string
	for k := range ropeKeys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// alibiDoc writes a causal ALiBi spec with the paper's slopes for maxBias.
func alibiDoc(d *doc, heads int, maxBias float64) {
	d.set("encoding", spec.ALiBi)
	d.setInt("heads", heads)
	d.setNum("max_bias", maxBias)
	d.setBool("causal", true)
}

// hfBloom imports BLOOM: BloomConfig(n_head), attribute_map
// num_attention_heads→n_head. modeling_bloom.py build_alibi_tensor uses
// slopes 2^(−8i/n) (base 2^(−2^(−(log2 n − 3)))) with the paper's
// interleaved rule for the heads beyond the largest power of two: max_bias 8.
func hfBloom(cfg obj, d *doc) error {
	return hfBloomALiBi(cfg, d, []string{"n_head", "num_attention_heads"},
		"ALiBi: modeling_bloom.py build_alibi_tensor, slopes 2^(-8i/n) (max_bias 8); causal decoder")
}

// hfFalconALiBi imports Falcon with alibi: true (e.g. falcon-rw-1b):
// modeling_falcon.py's build_alibi_tensor is BLOOM's, max_bias 8.
func hfFalconALiBi(cfg obj, d *doc) error {
	return hfBloomALiBi(cfg, d, falconFamily.headsKeys,
		"ALiBi: config alibi true; modeling_falcon.py build_alibi_tensor (BLOOM's), slopes 2^(-8i/n) (max_bias 8); causal decoder")
}

// hfBloomALiBi writes BLOOM's ALiBi (max_bias 8) with the head count read
// from the first of headsKeys present, and source as the provenance note.
func hfBloomALiBi(cfg obj, d *doc, headsKeys []string, source string) error {
	heads, k, err := hfHeads(cfg, headsKeys)
	if err != nil {
		return err
	}
	d.note("%s", source)
	d.note("heads %d: config %s", heads, k)
	alibiDoc(d, heads, 8)
	return nil
}

// hfMPT imports MPT: MptConfig(n_heads, attn_config=MptAttentionConfig(
// alibi, alibi_bias_max=8, prefix_lm)). transformers' modeling_mpt.py
// always builds the ALiBi bias (build_mpt_alibi_tensor with
// alibi_bias_max); its non-power-of-two rule (slopes of the next power of
// two, odd then even) yields the same slopes as the paper's rule.
func hfMPT(cfg obj, d *doc) error {
	heads, k, err := hfHeads(cfg, []string{"n_heads", "num_attention_heads"})
	if err != nil {
		return err
	}
	maxBias := 8.0
	from := "MptAttentionConfig default alibi_bias_max 8"
	if cfg.has("attn_config") {
		ac, err := cfg.object("attn_config")
		if err != nil {
			return err
		}
		if ac.has("alibi") {
			on, err := ac.boolean("alibi")
			if err != nil {
				return err
			}
			if !on {
				return ac.errf("alibi", "is false: this MPT variant does not use ALiBi, and posenc imports only ALiBi MPT configs")
			}
		}
		for _, bad := range []string{"prefix_lm", "rope"} {
			if ac.has(bad) {
				on, err := ac.boolean(bad)
				if err != nil {
					return err
				}
				if on {
					return ac.errf(bad, "is true: not supported (prefix-LM masking / RoPE change the positional scheme)")
				}
			}
		}
		if ac.has("alibi_bias_max") {
			if maxBias, err = ac.positive("alibi_bias_max"); err != nil {
				return err
			}
			from = "config attn_config.alibi_bias_max"
		}
	}
	d.note("ALiBi: modeling_mpt.py build_mpt_alibi_tensor; max_bias %s: %s; causal decoder", fmtNum(maxBias), from)
	d.note("heads %d: config %s", heads, k)
	alibiDoc(d, heads, maxBias)
	return nil
}

// hfT5 imports T5 / mT5: T5Config(num_heads, relative_attention_num_buckets
// =32, relative_attention_max_distance=128). The spec describes the
// encoder's self-attention, whose _relative_position_bucket is
// bidirectional; decoder self-attention uses the same table rule with
// bidirectional=False.
func hfT5(cfg obj, d *doc) error {
	heads, k, err := hfHeads(cfg, []string{"num_heads", "num_attention_heads"})
	if err != nil {
		return err
	}
	num, numFrom := 32, "T5Config default"
	if cfg.has("relative_attention_num_buckets") {
		if num, err = cfg.integer("relative_attention_num_buckets", 1); err != nil {
			return err
		}
		numFrom = "config relative_attention_num_buckets"
	}
	maxDist, distFrom := 128, "T5Config default"
	if cfg.has("relative_attention_max_distance") {
		if maxDist, err = cfg.integer("relative_attention_max_distance", 1); err != nil {
			return err
		}
		distFrom = "config relative_attention_max_distance"
	}
	d.note("T5 relative attention bias of the encoder self-attention (bidirectional: true); the decoder's self-attention uses bidirectional: false")
	d.note("heads %d: config %s; buckets.num %d: %s; buckets.max_distance %d: %s", heads, k, num, numFrom, maxDist, distFrom)
	d.set("encoding", spec.RPEBias)
	d.setInt("heads", heads)
	d.block("buckets",
		kv{key: "num", val: fmt.Sprint(num)},
		kv{key: "max_distance", val: fmt.Sprint(maxDist)},
		kv{key: "bidirectional", val: "true"})
	return nil
}

// hfBERT imports BERT: BertConfig(hidden_size, max_position_embeddings,
// position_embedding_type="absolute"). Absolute embeddings are a learned
// [max_position_embeddings][hidden_size] table indexed from position 0;
// relative_key / relative_key_query add Shaw-style terms that posenc's
// learned encoding does not express.
func hfBERT(cfg obj, d *doc) error {
	pet := "absolute"
	if cfg.has("position_embedding_type") {
		var err error
		if pet, err = cfg.str("position_embedding_type"); err != nil {
			return err
		}
	}
	switch pet {
	case "absolute":
	case "relative_key", "relative_key_query":
		return cfg.errf("position_embedding_type", "%q (relative position embeddings inside attention) is not supported; posenc imports BERT's absolute embeddings only", pet)
	default:
		return cfg.errf("position_embedding_type", "unknown value %q; BERT defines absolute, relative_key and relative_key_query", pet)
	}
	for _, k := range []string{"hidden_size", "max_position_embeddings"} {
		if !cfg.has(k) {
			return cfg.errf(k, "required for a learned absolute position table")
		}
	}
	dm, err := cfg.integer("hidden_size", 1)
	if err != nil {
		return err
	}
	ml, err := cfg.integer("max_position_embeddings", 1)
	if err != nil {
		return err
	}
	if dm > spec.MaxDim {
		return cfg.errf("hidden_size", "%d exceeds %d", dm, spec.MaxDim)
	}
	d.note("learned absolute position embeddings (position_embedding_type absolute): a [max_position_embeddings %d][hidden_size %d] table given at run time", ml, dm)
	d.set("encoding", spec.Learned)
	d.setInt("d_model", dm)
	d.setInt("max_len", ml)
	return nil
}
