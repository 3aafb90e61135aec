package spec

import (
	"errors"
	"strings"
	"testing"
)

// attn_temperature: defaults, values, and errors that name the field and line.
func TestAttnTemperature(t *testing.T) {
	const head = "name: t\nencoding: rope\nhead_dim: 8\nlayout: half\n"
	s, err := Parse("t.yaml", []byte(head+"attn_temperature: {}\n"))
	if err != nil || s.AttnTemperature == nil || *s.AttnTemperature != (AttnTemperature{8192, 0.1}) {
		t.Fatalf("defaults: %v %+v", err, s)
	}
	s, err = Parse("t.yaml", []byte(head+"attn_temperature:\n  floor_scale: 3\n  attn_scale: 0.25\n"))
	if err != nil || *s.AttnTemperature != (AttnTemperature{3, 0.25}) {
		t.Fatalf("values: %v %+v", err, s)
	}
	if s, _ := Parse("t.yaml", []byte(head)); s.AttnTemperature != nil {
		t.Errorf("absent key gives %+v", s.AttnTemperature)
	}
	for _, c := range []struct{ body, field, msg string }{
		{"attn_temperature:\n  floor_scale: 0\n", "attn_temperature.floor_scale", "[1, 2^31]"},
		{"attn_temperature:\n  floor_scale: 2147483649\n", "attn_temperature.floor_scale", "[1, 2^31]"},
		{"attn_temperature:\n  floor_scale: 1.5\n", "attn_temperature.floor_scale", "integer"},
		{"attn_temperature:\n  attn_scale: 0\n", "attn_temperature.attn_scale", "(0, 1000]"},
		{"attn_temperature:\n  attn_scale: -0.1\n", "attn_temperature.attn_scale", "(0, 1000]"},
		{"attn_temperature:\n  attn_scale: 1001\n", "attn_temperature.attn_scale", "(0, 1000]"},
		{"attn_temperature:\n  scale: 1\n", "attn_temperature.scale", ""},
		{"attn_temperature: 3\n", "attn_temperature", "mapping"},
	} {
		_, err := Parse("t.yaml", []byte(head+c.body))
		var e *Error
		if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q: got %v, want field %s", c.body, err, c.field)
			continue
		}
		if want := 5; e.Line != want && e.Line != 6 {
			t.Errorf("%q: line %d, want 5 or 6", c.body, e.Line)
		}
	}
	// Only rope specs take the key.
	if _, err := Parse("t.yaml", []byte("name: a\nencoding: alibi\nheads: 4\nattn_temperature: {}\n")); err == nil {
		t.Error("alibi with attn_temperature accepted")
	}
}
