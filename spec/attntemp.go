package spec

import "go.yaml.in/yaml/v3"

// Llama 4's attention-temperature tuning (transformers
// models/llama4/modeling_llama4.py, Llama4TextAttention.forward): on the
// NoPE layers, when attn_temperature_tuning is set, the query states are
// multiplied by
//
//	attn_scales = log1p(floor((cache_position + 1) / floor_scale)) · attn_scale + 1
//
// one factor per token position. A rope spec carries the two constants in
// its attn_temperature mapping; the generated package then exports ScaleQ.

// AttnTemperature holds the constants of Llama 4's query temperature
// (spec key attn_temperature; defaults of Llama4TextConfig in
// configuration_llama4.py: floor_scale 8192, attn_scale 0.1).
type AttnTemperature struct {
	FloorScale int     // floor_scale: 1 ≤ FloorScale ≤ 2^31
	AttnScale  float64 // attn_scale: 0 < AttnScale ≤ MaxAttnScale
}

// Defaults of the attn_temperature keys (Llama4TextConfig).
const (
	DefaultFloorScale = 8192
	DefaultAttnScale  = 0.1
)

// MaxAttnScale bounds attn_scale: with log1p(2^31) < 21.5 the factor stays
// below 21.5·MaxAttnScale + 1, far inside float32 (and f16's 65504).
const MaxAttnScale = 1000

// attnTempKeys are the keys of an attn_temperature mapping.
var attnTempKeys = []string{"floor_scale", "attn_scale"}

// attnTemperature decodes the attn_temperature mapping, applying the
// defaults of the keys left out.
func (d *decoder) attnTemperature(n *yaml.Node) *AttnTemperature {
	m := d.mapping(n, "attn_temperature")
	if m == nil || !d.checkKeys(m, attnTempKeys, attnTempKeys, "attn_temperature") {
		return nil
	}
	a := &AttnTemperature{FloorScale: DefaultFloorScale, AttnScale: DefaultAttnScale}
	for _, k := range m.keys {
		v, path := m.vals[k.Value], m.field(k.Value)
		switch k.Value {
		case "floor_scale":
			a.FloorScale = d.integer(v, path)
		case "attn_scale":
			a.AttnScale = d.number(v, path)
		}
		if d.err != nil {
			return nil
		}
	}
	return a
}

// attnTemperatureRules checks the ranges of attn_temperature.
func (d *decoder) attnTemperatureRules(s *Spec) {
	a := s.AttnTemperature
	if a == nil {
		return
	}
	if a.FloorScale < 1 || a.FloorScale > maxCallLen {
		d.fail(d.line("attn_temperature.floor_scale"), "attn_temperature.floor_scale", "must be an integer in [1, 2^31] (positions+1 are divided by it and floored), got %d", a.FloorScale)
		return
	}
	if !(a.AttnScale > 0 && a.AttnScale <= MaxAttnScale) {
		d.fail(d.line("attn_temperature.attn_scale"), "attn_temperature.attn_scale", "must be in (0, %d], got %g", MaxAttnScale, a.AttnScale)
	}
}
