package importer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// TestHFAttnHeadDim covers the head_dim import-hf writes for the ALiBi
// models (width / heads) and T5 (d_kv), and the comment saying where it
// came from.
func TestHFAttnHeadDim(t *testing.T) {
	cases := []struct {
		name, json string
		headDim    int
		note       string // expected in the output
	}{
		{"bloom", `{"model_type": "bloom", "hidden_size": 14336, "n_head": 112}`, 128, "# head_dim 128 = hidden_size 14336 / n_head 112 (modeling_bloom.py"},
		{"bloom n_embed", `{"model_type": "bloom", "n_embed": 1024, "hidden_size": 64, "n_head": 16}`, 64, "n_embed 1024 / n_head 16"},
		{"bloom odd head", `{"model_type": "bloom", "hidden_size": 213, "n_head": 3}`, 71, "head_dim 71"},
		{"bloom agreeing head_dim", `{"model_type": "bloom", "hidden_size": 4096, "n_head": 32, "head_dim": 128}`, 128, "hidden_size 4096 / n_head 32"},
		{"bloom head_dim alone", `{"model_type": "bloom", "n_head": 32, "head_dim": 80}`, 80, "head_dim 80: config head_dim"},
		{"bloom no width", `{"model_type": "bloom", "n_head": 32}`, 0, "no head_dim: the config has no n_embed or hidden_size"},
		{"falcon alibi", `{"model_type": "falcon", "alibi": true, "hidden_size": 2048, "num_attention_heads": 32}`, 64, "(modeling_falcon.py"},
		{"mpt", `{"model_type": "mpt", "d_model": 2048, "n_heads": 16}`, 128, "d_model 2048 / n_heads 16 (modeling_mpt.py"},
		{"mpt no width", `{"model_type": "mpt", "n_heads": 16}`, 0, "no head_dim: the config has no d_model or hidden_size"},
		{"t5 d_kv", `{"model_type": "t5", "d_model": 1024, "num_heads": 128, "d_kv": 128}`, 128, "head_dim 128: config d_kv"},
		{"t5 default d_kv", `{"model_type": "t5", "num_heads": 8}`, 64, "head_dim 64: T5Config default d_kv"},
		{"mt5 d_kv", `{"model_type": "mt5", "d_model": 512, "num_heads": 6, "d_kv": 64}`, 64, "config d_kv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := FromHF("x", []byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			s, err := spec.Parse("x.yaml", out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if s.HeadDim != c.headDim || !strings.Contains(string(out), c.note) {
				t.Errorf("head_dim %d, want %d, and a note %q:\n%s", s.HeadDim, c.headDim, c.note, out)
			}
			if c.headDim == 0 && strings.Contains(string(out), "\nhead_dim:") {
				t.Errorf("head_dim key written:\n%s", out)
			}
		})
	}
}

func TestHFAttnHeadDimErrors(t *testing.T) {
	for _, c := range []hfErrCase{
		{"bloom not divisible", `{"model_type": "bloom", "hidden_size": 4097, "n_head": 32}`, "hidden_size"},
		{"bloom n_embed not divisible", `{"model_type": "bloom", "n_embed": 100, "n_head": 32}`, "n_embed"},
		{"bloom width not an integer", `{"model_type": "bloom", "hidden_size": "4096", "n_head": 32}`, "hidden_size"},
		{"bloom head_dim disagrees", `{"model_type": "bloom", "hidden_size": 4096, "n_head": 32, "head_dim": 64}`, "head_dim"},
		{"bloom head_dim zero", `{"model_type": "bloom", "n_head": 32, "head_dim": 0}`, "head_dim"},
		{"bloom head_dim too large", `{"model_type": "bloom", "n_head": 1, "head_dim": 1025}`, "head_dim"},
		{"bloom width too large", `{"model_type": "bloom", "hidden_size": 2048, "n_head": 1}`, "hidden_size"},
		{"falcon alibi not divisible", `{"model_type": "falcon", "alibi": true, "hidden_size": 4545, "num_attention_heads": 32}`, "hidden_size"},
		{"mpt not divisible", `{"model_type": "mpt", "d_model": 4096, "n_heads": 48}`, "d_model"},
		{"t5 d_kv zero", `{"model_type": "t5", "num_heads": 8, "d_kv": 0}`, "d_kv"},
		{"t5 d_kv too large", `{"model_type": "t5", "num_heads": 8, "d_kv": 4096}`, "d_kv"},
		{"t5 d_kv float", `{"model_type": "t5", "num_heads": 8, "d_kv": 64.5}`, "d_kv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := FromHF("x", []byte(c.json))
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != c.field || e.Source != "config.json" {
				t.Errorf("error %q, want one naming %q", err, c.field)
			}
		})
	}
}

// TestGGUFAttnHeadDim covers head_dim of the GGUF alibi and T5 imports:
// attention.key_length, else embedding_length / head_count.
func TestGGUFAttnHeadDim(t *testing.T) {
	for _, c := range []struct {
		name    string
		f       ggufFile
		headDim int
	}{
		{"bloom width", arch("bloom", ggufKV{"bloom.attention.head_count", u32v(32)}, ggufKV{"bloom.embedding_length", u32v(4096)}), 128},
		{"bloom no width", arch("bloom", ggufKV{"bloom.attention.head_count", u32v(32)}), 0},
		{"mpt key_length", arch("mpt", ggufKV{"mpt.attention.head_count", u32v(32)}, ggufKV{"mpt.attention.max_alibi_bias", f32v(8)},
			ggufKV{"mpt.embedding_length", u32v(4096)}, ggufKV{"mpt.attention.key_length", u32v(128)}), 128},
		{"t5 key_length not width/heads", arch("t5", ggufKV{"t5.attention.head_count", u32v(128)}, ggufKV{"t5.embedding_length", u32v(1024)},
			ggufKV{"t5.attention.key_length", u32v(128)}, ggufKV{"t5.attention.value_length", u32v(128)}), 128},
		{"t5 width only", arch("t5", ggufKV{"t5.attention.head_count", u32v(8)}, ggufKV{"t5.embedding_length", u32v(512)}), 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			if s := importGGUF(t, c.f); s.HeadDim != c.headDim {
				t.Errorf("head_dim %d, want %d", s.HeadDim, c.headDim)
			}
		})
	}
	for _, c := range []struct {
		name  string
		f     ggufFile
		field string
	}{
		{"bloom not divisible", arch("bloom", ggufKV{"bloom.attention.head_count", u32v(32)}, ggufKV{"bloom.embedding_length", u32v(4100)}), "bloom.embedding_length"},
		{"bloom too wide", arch("bloom", ggufKV{"bloom.attention.head_count", u32v(2)}, ggufKV{"bloom.embedding_length", u32v(4096)}), "bloom.embedding_length"},
		{"t5 key_length zero", arch("t5", ggufKV{"t5.attention.head_count", u32v(8)}, ggufKV{"t5.attention.key_length", u32v(0)}), "t5.attention.key_length"},
		{"t5 key_length too large", arch("t5", ggufKV{"t5.attention.head_count", u32v(8)}, ggufKV{"t5.attention.key_length", u32v(2048)}), "t5.attention.key_length"},
		{"t5 value_length differs", arch("t5", ggufKV{"t5.attention.head_count", u32v(8)}, ggufKV{"t5.attention.key_length", u32v(64)}, ggufKV{"t5.attention.value_length", u32v(32)}), "t5.attention.value_length"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := FromGGUF("m", bytes.NewReader(c.f.encode()))
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != c.field {
				t.Errorf("error %q, want one naming %q", err, c.field)
			}
		})
	}
}
