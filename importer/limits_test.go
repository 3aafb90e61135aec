package importer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestImportRefusesSpecsGenCannotBuild: configs with huge values used to
// yield specs that crashed gen or verify; the importer's spec.Parse check
// now refuses them, naming the spec field.
func TestImportRefusesSpecsGenCannotBuild(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"t5 max_distance", `{"model_type": "t5", "d_model": 512, "num_heads": 8, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 2147483647}`, "buckets.max_distance"},
		{"linear factor", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 1e-320}}`, "scaling.factor"},
		{"yarn attention_factor", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "attention_factor": 1e300}}`, "scaling.attention_factor"},
	} {
		out, err := FromHF("m", []byte(c.config))
		var e *Error
		if err == nil || !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: FromHF = %q, %v; want an *Error naming %s", c.name, out, err, c.want)
		}
	}
}

// TestImportCountLimits: every count import-hf reads is bounded, naming
// the field, before anything in proportion to it is allocated (10^9
// Gemma 3 layers reached 23.7 GB).
func TestImportCountLimits(t *testing.T) {
	list := func(item string, n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+", ", n), ", ") + "]"
	}
	llama := `"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072`
	for _, c := range []struct{ name, config, field, want string }{
		{"gemma3 layers", `{"model_type": "gemma3_text", "num_hidden_layers": 1000000000}`, "num_hidden_layers", "[1, 1024]"},
		{"gemma3 text_config layers", `{"model_type": "gemma3", "text_config": {"num_hidden_layers": 2147483647}}`, "text_config.num_hidden_layers", "[1, 1024]"},
		{"gemma3 layer_types", `{"model_type": "gemma3_text", "layer_types": ` + list(`"full_attention"`, 1025) + `}`, "layer_types", "1025 entries"},
		{"llama4 layers", `{"model_type": "llama4_text", "num_hidden_layers": 10000000}`, "num_hidden_layers", "[1, 1024]"},
		{"llama4 no_rope_layers", `{"model_type": "llama4_text", "no_rope_layers": ` + list("1", 5000) + `}`, "no_rope_layers", "5000 entries"},
		{"heads", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 1000000000}`, "num_attention_heads", "[1, 65536]"},
		{"bloom heads", `{"model_type": "bloom", "n_head": 100000}`, "n_head", "[1, 65536]"},
		{"longrope factors", `{` + llama + `, "rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 4096, "short_factor": ` + list("1", 100000) + `, "long_factor": [1]}}`, "rope_scaling.short_factor", "100000 entries"},
		{"mrope_section", `{"model_type": "qwen2_vl", "hidden_size": 1536, "num_attention_heads": 12, "rope_scaling": {"type": "mrope", "mrope_section": ` + list("1", 1000) + `}}`, "rope_scaling.mrope_section", "1000 entries"},
	} {
		start := time.Now()
		_, err := FromHFSpecs("m", []byte(c.config))
		var e *Error
		if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(e.Msg, c.want) {
			t.Errorf("%s: got %v; want an *Error on %s saying %q", c.name, err, c.field, c.want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
}

// TestImportInputSize: config.json over 64 MiB, or with a junk array of
// millions of values under it (80 MB took 3.8 GB and was accepted), is
// refused before it is decoded.
func TestImportInputSize(t *testing.T) {
	big := append([]byte(`{"model_type": "llama", "x": "`), bytes.Repeat([]byte("a"), maxInputBytes)...)
	big = append(big, `"}`...)
	junk := []byte(`{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "junk": [` + strings.Repeat("1,", 30<<20) + `1]}`)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"65 MiB", big, "64 MiB limit"},
		{"junk array", junk, "more than 1048576 JSON values"},
	} {
		start := time.Now()
		_, err := FromHF("m", c.data)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, c.want) {
			t.Errorf("%s: got %v; want an *Error saying %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
	// Commas, brackets and braces inside strings are not values.
	if n := jsonValueBound([]byte(`{"a": "[,{\",]", "b": [1, 2]}`), 100); n != -1 {
		t.Errorf("jsonValueBound counted past 100")
	}
	if off := jsonValueBound([]byte(`{"a": "[,{\",]", "b": [1, 2]}`), 4); off != 24 {
		t.Errorf("jsonValueBound passed 4 at byte %d, want 24 (the comma in [1, 2])", off)
	}
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestGGUFHeaderLimit: at most 64 MiB of a GGUF header is read, however
// its arrays and strings are sized.
func TestGGUFHeaderLimit(t *testing.T) {
	le := binary.LittleEndian
	arr := func(elem uint32, n uint64) []byte {
		b := le.AppendUint64(le.AppendUint64(le.AppendUint32([]byte("GGUF"), 3), 0), 1)
		b = le.AppendUint64(b, 1)
		b = append(b, 'k')
		b = le.AppendUint32(b, ggufArray)
		b = le.AppendUint32(b, elem)
		return le.AppendUint64(b, n)
	}
	for _, c := range []struct {
		name string
		r    io.Reader
	}{
		// 2^40 empty strings of 8 bytes each: read until the limit.
		{"string array", io.MultiReader(bytes.NewReader(arr(ggufString, 1<<40)), zeros{})},
		// 65 MiB of uint8: refused from its length.
		{"byte array", io.MultiReader(bytes.NewReader(arr(ggufUint8, 65<<20)), zeros{})},
	} {
		start := time.Now()
		_, err := FromGGUF("m", c.r)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, "64 MiB") {
			t.Errorf("%s: got %v; want the 64 MiB header limit", c.name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
}
