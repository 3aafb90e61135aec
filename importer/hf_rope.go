package importer

// Rotary models: head_dim, rotary_dim, base and max_position from
// config.json (rope_scaling / rope_parameters go to hf_rope_scaling.go).

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// rejectedKeys are top-level fields that change positional semantics in
// ways one spec cannot express; any RoPE config carrying them is refused.
var rejectedKeys = map[string]string{
	"rope_local_base_freq":   "sliding-window layers use a second RoPE base (Gemma 3); one spec has one base",
	"no_rope_layers":         "some layers use no RoPE at all; one spec describes one encoding",
	"no_rope_layer_interval": "some layers use no RoPE at all; one spec describes one encoding",
	"rope_interleave":        "DeepSeek's rope_interleave re-orders the rotary dims",
	"qk_rope_head_dim":       "multi-head latent attention rotates a separate RoPE sub-head",
}

// hfRoPE imports a rotary model of family fam.
func hfRoPE(cfg obj, fam *ropeFamily, d *doc) error {
	for _, k := range cfg.sortedKeys() {
		if why, bad := rejectedKeys[k]; bad && cfg.has(k) && !contains(fam.handles, k) {
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
		if key == "rope_scaling" && fam.dropScaling != "" {
			d.note("rope_scaling is not applied: %s", fam.dropScaling)
			rp = nil
		} else if fam.layerType != "" && o.has(fam.layerType) {
			lt, err := o.object(fam.layerType)
			if err != nil {
				return err
			}
			rp = &lt
		}
	}

	d.set("encoding", spec.RoPE)

	// head_dim: modeling_rope_utils uses getattr(config, "head_dim", None)
	// or hidden_size // num_attention_heads.
	var headDim int
	if fam.headDimKey != "" && cfg.has(fam.headDimKey) {
		var err error
		if headDim, err = cfg.integer(fam.headDimKey, 1); err != nil {
			return err
		}
		d.note("head_dim %d: config %s (the rotary part of each head)", headDim, cfg.field(fam.headDimKey))
	} else if cfg.has("head_dim") {
		var err error
		if headDim, err = cfg.integer("head_dim", 1); err != nil {
			return err
		}
		d.note("head_dim %d: config head_dim", headDim)
	} else if fam.headDim > 0 {
		headDim = fam.headDim
		d.note("head_dim %d: class default in %s", headDim, fam.source)
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
