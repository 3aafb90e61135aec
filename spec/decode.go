package spec

// Field decoding: the top-level spec mapping and its nested targets,
// scaling and buckets values, into a Spec.

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// spec decodes the top-level mapping. Fields are decoded in document order,
// so the first type error reported is the first in the file.
func (d *decoder) spec(root *yaml.Node) *Spec {
	d.rootLine = root.Line
	m := d.mapping(root, "")
	if m == nil {
		return nil
	}
	s := &Spec{}
	encNode, ok := m.vals["encoding"]
	if !ok {
		d.fail(d.rootLine, "encoding", "required; %s", oneOf(Encodings))
		return nil
	}
	s.Encoding = d.str(encNode, "encoding")
	if d.err != nil {
		return nil
	}
	if !contains(Encodings, s.Encoding) {
		d.fail(encNode.Line, "encoding", "unknown encoding %q; %s", s.Encoding, oneOf(Encodings))
		return nil
	}
	allowed := append(append([]string(nil), commonKeys...), encodingKeys[s.Encoding]...)
	if !d.checkKeys(m, allowed, allTopKeys, "encoding "+s.Encoding) {
		return nil
	}
	for _, k := range m.keys {
		v, key := m.vals[k.Value], k.Value
		switch key {
		case "name":
			s.Name = d.str(v, key)
		case "encoding":
		case "targets":
			s.Targets = d.targets(v, key)
		case "dtype":
			s.DType = d.str(v, key)
		case "head_dim":
			s.HeadDim = d.integer(v, key)
		case "rotary_dim":
			s.RotaryDim = d.integer(v, key)
		case "layout":
			s.Layout = d.str(v, key)
		case "base":
			s.Base = d.number(v, key)
		case "max_position":
			s.MaxPosition = d.integer(v, key)
		case "scaling":
			d.lines[key] = k.Line
			s.Scaling = d.scaling(v)
		case "mrope_section":
			s.MRoPESection = d.integers(v, key)
		case "mrope_interleaved":
			s.MRoPEInterleaved = d.boolean(v, key)
		case "mrope_freqs":
			s.MRoPEFreqs = d.str(v, key)
		case "attn_temperature":
			d.lines[key] = k.Line
			s.AttnTemperature = d.attnTemperature(v)
		case "heads":
			s.Heads = d.integer(v, key)
		case "max_bias":
			s.MaxBias = d.number(v, key)
		case "slopes":
			s.Slopes = d.numbers(v, key)
		case "causal":
			s.Causal = d.boolean(v, key)
		case "r_max":
			s.RMax = d.integer(v, key)
		case "buckets":
			d.lines[key] = k.Line
			s.Buckets = d.buckets(v)
		case "d_model":
			s.DModel = d.integer(v, key)
		case "max_len":
			s.MaxLen = d.integer(v, key)
		}
		if d.err != nil {
			return nil
		}
	}
	return s
}

// targets decodes the target list: known names, each at most once, stored in
// the canonical AllTargets order.
func (d *decoder) targets(n *yaml.Node, path string) []string {
	items := d.list(n, path, "target names")
	if d.err != nil {
		return nil
	}
	if len(items) == 0 {
		d.fail(n.Line, path, "must name at least one target; %s", oneOf(AllTargets))
		return nil
	}
	seen := map[string]bool{}
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		t := d.str(it, p)
		if d.err != nil {
			return nil
		}
		if !contains(AllTargets, t) {
			d.fail(it.Line, p, "unknown target %q; %s", t, oneOf(AllTargets))
			return nil
		}
		if seen[t] {
			d.fail(it.Line, p, "target %q is listed twice", t)
			return nil
		}
		seen[t] = true
	}
	var out []string
	for _, t := range AllTargets {
		if seen[t] {
			out = append(out, t)
		}
	}
	return out
}

// scaling decodes the RoPE scaling mapping; which keys are allowed depends
// on its type.
func (d *decoder) scaling(n *yaml.Node) *Scaling {
	m := d.mapping(n, "scaling")
	if m == nil {
		return nil
	}
	sc := &Scaling{}
	tn, ok := m.vals["type"]
	if !ok {
		d.fail(d.line("scaling"), "scaling.type", "required; %s", oneOf(ScalingTypes))
		return nil
	}
	sc.Type = d.str(tn, "scaling.type")
	if d.err != nil {
		return nil
	}
	extra, ok := scalingKeys[sc.Type]
	if !ok {
		d.fail(tn.Line, "scaling.type", "unknown scaling type %q; %s", sc.Type, oneOf(ScalingTypes))
		return nil
	}
	allowed := append([]string{"type", "factor"}, extra...)
	if !d.checkKeys(m, allowed, allScalingKeys, "scaling type "+sc.Type) {
		return nil
	}
	for _, k := range m.keys {
		v, path := m.vals[k.Value], m.field(k.Value)
		switch k.Value {
		case "type":
		case "factor":
			sc.Factor = d.number(v, path)
		case "original_max_position":
			sc.OriginalMaxPosition = d.integer(v, path)
		case "low_freq_factor":
			sc.LowFreqFactor = d.number(v, path)
		case "high_freq_factor":
			sc.HighFreqFactor = d.number(v, path)
		case "beta_fast":
			sc.BetaFast = d.number(v, path)
		case "beta_slow":
			sc.BetaSlow = d.number(v, path)
		case "mscale":
			sc.Mscale, sc.HasMscale = d.number(v, path), true
		case "mscale_all_dim":
			sc.MscaleAllDim, sc.HasMscaleAllDim = d.number(v, path), true
		case "attention_factor":
			sc.AttentionFactor, sc.HasAttentionFactor = d.number(v, path), true
		case "truncate":
			sc.Truncate = d.boolean(v, path)
		case "short_factor":
			sc.ShortFactor = d.numbers(v, path)
		case "long_factor":
			sc.LongFactor = d.numbers(v, path)
		}
		if d.err != nil {
			return nil
		}
	}
	return sc
}

// buckets decodes the T5 bucketing mapping of rpe_bias.
func (d *decoder) buckets(n *yaml.Node) *Buckets {
	m := d.mapping(n, "buckets")
	if m == nil || !d.checkKeys(m, bucketKeys, bucketKeys, "buckets") {
		return nil
	}
	b := &Buckets{}
	for _, k := range m.keys {
		v, path := m.vals[k.Value], m.field(k.Value)
		switch k.Value {
		case "num":
			b.Num = d.integer(v, path)
		case "max_distance":
			b.MaxDistance = d.integer(v, path)
		case "bidirectional":
			b.Bidirectional = d.boolean(v, path)
		}
		if d.err != nil {
			return nil
		}
	}
	return b
}
