package importer

// rope_scaling / rope_parameters: mapping transformers' RoPE types onto the
// spec's scaling mapping.

import (
	"sort"
	"strings"
)

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
			return rp.errf("type", "disagrees with rope_type %s", quoteInput(rt))
		}
	}
	typ := rt
	if a, ok := ropeTypeAliases[rt]; ok {
		typ = a
	}
	used, ok := ropeTypeKeys[typ]
	if !ok {
		return rp.errf(tk, "unknown RoPE type %s; posenc imports default, linear, ntk, dynamic, yarn, llama3, longrope (su, phi3)", quoteInput(rt))
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
	// original is the pre-training length of llama3, yarn and longrope
	// (hfOriginal).
	original := func() (int, string, error) { return hfOriginal(cfg, rp, rt, mpeKey, mpe) }

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
		// _compute_dynamic_ntk_parameters rescales the base against
		// config.max_position_embeddings; rope_scaling's
		// original_max_position_embeddings is not read.
		f, err := factor()
		if err != nil {
			return err
		}
		if mpeKey == "" {
			return cfg.errf("max_position_embeddings", "required for rope_type dynamic: transformers' _compute_dynamic_ntk_parameters rescales the base beyond it")
		}
		d.note("scaling.original_max_position %d: config %s (transformers' _compute_dynamic_ntk_parameters)", mpe, mpeKey)
		if rp.has("original_max_position_embeddings") {
			if v, err := rp.integer("original_max_position_embeddings", 1); err != nil || v != mpe {
				d.note("%s is ignored: _compute_dynamic_ntk_parameters uses %s", rp.field("original_max_position_embeddings"), mpeKey)
			}
		}
		d.scNum("factor", f)
		d.scInt("original_max_position", mpe)
	case "llama3":
		f, err := factor()
		if err != nil {
			return err
		}
		o, from, err := original()
		if err != nil {
			return err
		}
		d.note("scaling.original_max_position %d: %s", o, from)
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
		// Equal factors are Llama 4 Scout's empty smoothing band, which
		// transformers' _compute_llama3_parameters accepts.
		if hi < lo {
			return rp.errf("high_freq_factor", "must be ≥ low_freq_factor %v, got %v", lo, hi)
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
func hfYaRN(rp obj, rt string, factor func() (float64, error), original func() (int, string, error), d *doc) error {
	f, err := factor()
	if err != nil {
		return err
	}
	o, from, err := original()
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

// hfLongRoPE writes LongRoPE scaling as transformers 5's
// _compute_longrope_parameters computes it: the pre-training length from
// hfOriginal; factor from rope_parameters when given, else
// max_position_embeddings / that length; the attention factor, when not
// given, sqrt(1 + ln factor / ln length) for factor > 1 (the spec derives
// it from the factor written here).
func hfLongRoPE(cfg, rp obj, mpeKey string, mpe, rotaryDim int, original func() (int, string, error), d *doc) error {
	o, from, err := original()
	if err != nil {
		return err
	}
	d.note("scaling.original_max_position %d: %s", o, from)
	var f float64
	if rp.has("factor") {
		if f, err = rp.positive("factor"); err != nil {
			return err
		}
		d.note("scaling.factor %s: %s (used as given, as _compute_longrope_parameters does)", fmtNum(f), rp.field("factor"))
	} else {
		if mpeKey == "" {
			return cfg.errf("max_position_embeddings", "required for rope_type longrope without %s: transformers' factor is max_position_embeddings / original_max_position_embeddings", rp.field("factor"))
		}
		f = float64(mpe) / float64(o)
		d.note("scaling.factor %s = %s %d / original_max_position_embeddings %d (_compute_longrope_parameters, no %s)", fmtNum(f), mpeKey, mpe, o, rp.field("factor"))
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
	d.scNum("factor", f)
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
