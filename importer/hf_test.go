package importer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// importHF imports testdata/<file> and parses the result.
func importHF(t *testing.T, file string) (*spec.Spec, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	name := PackageName(strings.TrimSuffix(file, ".json"))
	out, err := FromHF(name, data)
	if err != nil {
		t.Fatalf("FromHF(%s): %v", file, err)
	}
	s, err := spec.Parse(name+".yaml", out)
	if err != nil {
		t.Fatalf("FromHF(%s) output does not parse: %v\n%s", file, err, out)
	}
	again, err := FromHF(name, data)
	if err != nil || !bytes.Equal(out, again) {
		t.Fatalf("FromHF(%s) is not deterministic", file)
	}
	return s, out
}

func TestFromHFFamilies(t *testing.T) {
	type want struct {
		enc, layout           string
		headDim, rotary, maxP int
		base                  float64
		heads                 int
		maxBias               float64
		scaling               string
	}
	cases := []struct {
		file, modelType string
		w               want
		check           func(t *testing.T, s *spec.Spec)
	}{
		{"llama2_7b.json", "llama", want{enc: "rope", layout: "half", headDim: 128, rotary: 128, maxP: 4096, base: 10000}, nil},
		{"llama31_8b.json", "llama", want{enc: "rope", layout: "half", headDim: 128, rotary: 128, maxP: 32768, base: 500000, scaling: "llama3"},
			func(t *testing.T, s *spec.Spec) {
				sc := s.Scaling
				if sc.Factor != 8 || sc.LowFreqFactor != 1 || sc.HighFreqFactor != 4 || sc.OriginalMaxPosition != 8192 {
					t.Errorf("llama3 scaling = %+v", *sc)
				}
			}},
		{"mistral_7b.json", "mistral", want{enc: "rope", layout: "half", headDim: 128, rotary: 128, maxP: 32768, base: 10000}, nil},
		{"qwen25_7b_yarn.json", "qwen2", want{enc: "rope", layout: "half", headDim: 128, rotary: 128, maxP: 32768, base: 1e6, scaling: "yarn"},
			func(t *testing.T, s *spec.Spec) {
				sc := s.Scaling
				if sc.Factor != 4 || sc.OriginalMaxPosition != 32768 || sc.BetaFast != 32 || sc.BetaSlow != 1 || !sc.Truncate || sc.HasAttentionFactor {
					t.Errorf("yarn scaling = %+v", *sc)
				}
			}},
		{"phi3_mini_128k.json", "phi3", want{enc: "rope", layout: "half", headDim: 96, rotary: 96, maxP: 32768, base: 10000, scaling: "longrope"},
			func(t *testing.T, s *spec.Spec) {
				sc := s.Scaling
				if sc.Factor != 32 || sc.OriginalMaxPosition != 4096 || len(sc.ShortFactor) != 48 || len(sc.LongFactor) != 48 {
					t.Errorf("longrope scaling = %+v", *sc)
				}
				if sc.LongFactor[0] != 1.0800000429153442 {
					t.Errorf("long_factor[0] = %v, want the exact config value", sc.LongFactor[0])
				}
			}},
		{"pythia_1b.json", "gpt_neox", want{enc: "rope", layout: "half", headDim: 256, rotary: 64, maxP: 2048, base: 10000}, nil},
		{"gptj_6b.json", "gptj", want{enc: "rope", layout: "interleaved", headDim: 256, rotary: 64, maxP: 2048, base: 10000}, nil},
		{"gemma_7b.json", "gemma", want{enc: "rope", layout: "half", headDim: 256, rotary: 256, maxP: 8192, base: 10000}, nil},
		{"falcon_7b.json", "falcon", want{enc: "rope", layout: "half", headDim: 64, rotary: 64, maxP: 4096, base: 10000}, nil},
		{"gpt_oss_20b.json", "gpt_oss", want{enc: "rope", layout: "half", headDim: 64, rotary: 64, maxP: 32768, base: 150000, scaling: "yarn"},
			func(t *testing.T, s *spec.Spec) {
				sc := s.Scaling
				if sc.Factor != 32 || sc.OriginalMaxPosition != 4096 || sc.Truncate {
					t.Errorf("gpt-oss yarn = %+v", *sc)
				}
			}},
		{"qwen3_8b_v5.json", "qwen3", want{enc: "rope", layout: "half", headDim: 128, rotary: 128, maxP: 32768, base: 1e6}, nil},
		{"bloom_7b1.json", "bloom", want{enc: "alibi", heads: 32, maxBias: 8, headDim: 128}, nil},
		{"mpt_7b.json", "mpt", want{enc: "alibi", heads: 32, maxBias: 8, headDim: 128}, nil},
		{"falcon_rw_1b.json", "falcon", want{enc: "alibi", heads: 32, maxBias: 8, headDim: 64}, nil},
		{"t5_base.json", "t5", want{enc: "rpe_bias", heads: 12, headDim: 64},
			func(t *testing.T, s *spec.Spec) {
				if b := s.Buckets; b == nil || b.Num != 32 || b.MaxDistance != 128 || !b.Bidirectional {
					t.Errorf("t5 buckets = %+v", b)
				}
			}},
		{"bert_base_uncased.json", "bert", want{enc: "learned"},
			func(t *testing.T, s *spec.Spec) {
				if s.DModel != 768 || s.MaxLen != 512 {
					t.Errorf("bert d_model %d max_len %d", s.DModel, s.MaxLen)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, out := importHF(t, c.file)
			first := strings.SplitN(string(out), "\n", 2)[0]
			if wantFirst := "# imported from Hugging Face config.json (model_type " + c.modelType + ")"; first != wantFirst {
				t.Errorf("first line %q, want %q", first, wantFirst)
			}
			w := c.w
			if s.Encoding != w.enc {
				t.Fatalf("encoding %q, want %q\n%s", s.Encoding, w.enc, out)
			}
			switch w.enc {
			case "rope":
				got := want{enc: s.Encoding, layout: s.Layout, headDim: s.HeadDim, rotary: s.RotaryDim, maxP: s.MaxPosition, base: s.Base}
				if s.Scaling != nil {
					got.scaling = s.Scaling.Type
				}
				if got != w {
					t.Errorf("got %+v\nwant %+v\n%s", got, w, out)
				}
			case "alibi":
				if s.Heads != w.heads || s.MaxBias != w.maxBias || !s.Causal || s.Slopes != nil || s.HeadDim != w.headDim {
					t.Errorf("alibi heads %d max_bias %v causal %v head_dim %d\n%s", s.Heads, s.MaxBias, s.Causal, s.HeadDim, out)
				}
			case "rpe_bias":
				if s.Heads != w.heads || s.HeadDim != w.headDim {
					t.Errorf("heads %d head_dim %d, want %d and %d", s.Heads, s.HeadDim, w.heads, w.headDim)
				}
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

// TestFromHFMatchesZoo checks imports against the hand-written zoo specs of
// the same checkpoints: apart from name and source, and max_position where
// the zoo chose a smaller table, they must describe the same encoding.
func TestFromHFMatchesZoo(t *testing.T) {
	pairs := []struct {
		file, zoo string
		maxPos    int // zoo's max_position when it differs on purpose
	}{
		{"llama2_7b.json", "llama2_7b", 0},
		{"llama31_8b.json", "llama31_8b", 8192},
		{"mistral_7b.json", "mistral_7b", 0},
		{"qwen25_7b_yarn.json", "qwen25_7b_yarn", 0},
		{"pythia_1b.json", "pythia_1b", 0},
		{"gptj_6b.json", "gptj_6b", 0},
		{"bloom_7b1.json", "bloom_7b1", 0},
		{"mpt_7b.json", "mpt_7b", 0},
		{"t5_base.json", "t5_base", 0},
		{"bert_base_uncased.json", "bert_base", 0},
	}
	for _, p := range pairs {
		got, _ := importHF(t, p.file)
		want, err := spec.ZooSpec(p.zoo)
		if err != nil {
			t.Fatalf("zoo %s: %v", p.zoo, err)
		}
		g, w := *got, *want
		g.Name, g.File, g.Source = "", "", ""
		w.Name, w.File, w.Source = "", "", ""
		if p.maxPos != 0 {
			g.MaxPosition = p.maxPos
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s vs zoo %s:\n got %+v\nwant %+v", p.file, p.zoo, g, w)
		}
	}
}

// hfErrCase is a config.json that must be refused with an error naming field.
type hfErrCase struct {
	name, json, field string
}

func TestFromHFErrors(t *testing.T) {
	const llama = `"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096`
	cases := []hfErrCase{
		{"unknown rope_type", `{` + llama + `, "rope_scaling": {"rope_type": "mrope", "factor": 2}}`, "rope_scaling.rope_type"},
		{"unknown old type", `{` + llama + `, "rope_scaling": {"type": "dynamic_yarn", "factor": 2}}`, "rope_scaling.type"},
		{"unknown rope_scaling key", `{` + llama + `, "rope_scaling": {"rope_type": "linear", "factor": 2, "mrope_section": [16, 24, 24]}}`, "rope_scaling.mrope_section"},
		{"unknown rope_parameters key", `{` + llama + `, "rope_parameters": {"rope_type": "default", "rope_theta": 10000, "full_attention": {}}}`, "rope_parameters.full_attention"},
		{"rope_type missing", `{` + llama + `, "rope_scaling": {"factor": 2}}`, "rope_scaling.rope_type"},
		{"type disagrees", `{` + llama + `, "rope_scaling": {"rope_type": "linear", "type": "dynamic", "factor": 2}}`, "rope_scaling.type"},
		{"linear without factor", `{` + llama + `, "rope_scaling": {"rope_type": "linear"}}`, "rope_scaling.factor"},
		{"negative factor", `{` + llama + `, "rope_scaling": {"rope_type": "linear", "factor": -2}}`, "rope_scaling.factor"},
		{"llama3 without original or max pos", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4}}`, "rope_scaling.original_max_position_embeddings"},
		{"dynamic without max pos", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"rope_type": "dynamic", "factor": 2}}`, "max_position_embeddings"},
		{"llama3 without low", `{` + llama + `, "rope_scaling": {"rope_type": "llama3", "factor": 8, "high_freq_factor": 4, "original_max_position_embeddings": 8192}}`, "rope_scaling.low_freq_factor"},
		{"llama3 high ≤ low", `{` + llama + `, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1, "original_max_position_embeddings": 8192}}`, "rope_scaling.high_freq_factor"},
		{"longrope short list", `{` + llama + `, "rope_scaling": {"type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1]}}`, "rope_scaling.short_factor"},
		{"longrope bad entry", `{"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "max_position_embeddings": 64, "rope_scaling": {"type": "su", "short_factor": [1, "x"], "long_factor": [1, 1]}}`, "rope_scaling.short_factor[1]"},
		{"yarn without original or max pos", `{"model_type": "qwen2", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"type": "yarn", "factor": 4}}`, "rope_scaling.original_max_position_embeddings"},
		{"both rope containers", `{` + llama + `, "rope_scaling": {"rope_type": "default"}, "rope_parameters": {"rope_type": "default"}}`, "rope_parameters"},
		{"theta disagrees", `{` + llama + `, "rope_theta": 10000, "rope_parameters": {"rope_type": "default", "rope_theta": 500000}}`, "rope_parameters.rope_theta"},
		{"partial disagrees", `{` + llama + `, "partial_rotary_factor": 0.5, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.25}}`, "rope_parameters.partial_rotary_factor"},
		{"odd partial rotary", `{"model_type": "phi", "hidden_size": 2048, "num_attention_heads": 32, "partial_rotary_factor": 0.3}`, "partial_rotary_factor"},
		{"odd partial rotary in rope_parameters", `{"model_type": "phi", "hidden_size": 2048, "num_attention_heads": 32, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.3}}`, "rope_parameters.partial_rotary_factor"},
		{"odd rotary_pct", `{"model_type": "gpt_neox", "hidden_size": 2048, "num_attention_heads": 32, "rotary_pct": 0.3}`, "rotary_pct"},
		{"partial rotary > 1", `{` + llama + `, "partial_rotary_factor": 1.5}`, "partial_rotary_factor"},
		{"odd gptj rotary_dim", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 63}`, "rotary_dim"},
		{"gptj null rotary_dim", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": null}`, "rotary_dim"},
		{"gptj rotary_dim > head", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 512}`, "rotary_dim"},
		{"gptj rope_scaling", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rope_scaling": {"type": "linear", "factor": 2}}`, "rope_scaling"},
		{"missing head count", `{"model_type": "llama", "hidden_size": 4096}`, "num_attention_heads"},
		{"missing hidden size", `{"model_type": "mistral", "num_attention_heads": 32}`, "hidden_size"},
		{"head count zero", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 0}`, "num_attention_heads"},
		{"hidden not divisible", `{"model_type": "llama", "hidden_size": 4000, "num_attention_heads": 3}`, "hidden_size"},
		{"odd head_dim", `{"model_type": "qwen3", "head_dim": 127}`, "head_dim"},
		{"fractional head count", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32.5}`, "num_attention_heads"},
		{"string theta", `{` + llama + `, "rope_theta": "1e4"}`, "rope_theta"},
		{"theta ≤ 1", `{` + llama + `, "rope_theta": 1}`, "rope_theta"},
		{"gemma3 local base", `{"model_type": "gemma2", "head_dim": 256, "rope_local_base_freq": 10000}`, "rope_local_base_freq"},
		{"relative_key bert", `{"model_type": "bert", "hidden_size": 768, "max_position_embeddings": 512, "position_embedding_type": "relative_key"}`, "position_embedding_type"},
		{"relative_key_query bert", `{"model_type": "bert", "hidden_size": 768, "max_position_embeddings": 512, "position_embedding_type": "relative_key_query"}`, "position_embedding_type"},
		{"unknown bert position type", `{"model_type": "bert", "hidden_size": 768, "max_position_embeddings": 512, "position_embedding_type": "rotary"}`, "position_embedding_type"},
		{"bert without max positions", `{"model_type": "bert", "hidden_size": 768}`, "max_position_embeddings"},
		{"mpt without alibi", `{"model_type": "mpt", "n_heads": 32, "attn_config": {"alibi": false}}`, "attn_config.alibi"},
		{"mpt prefix lm", `{"model_type": "mpt", "n_heads": 32, "attn_config": {"alibi": true, "prefix_lm": true}}`, "attn_config.prefix_lm"},
		{"mpt bad bias", `{"model_type": "mpt", "n_heads": 32, "attn_config": {"alibi_bias_max": 0}}`, "attn_config.alibi_bias_max"},
		{"bloom without heads", `{"model_type": "bloom", "hidden_size": 4096}`, "n_head"},
		{"falcon alibi not bool", `{"model_type": "falcon", "alibi": "yes", "num_attention_heads": 32}`, "alibi"},
		{"t5 without heads", `{"model_type": "t5", "relative_attention_num_buckets": 32}`, "num_heads"},
		{"unknown model", `{"model_type": "mamba", "hidden_size": 768}`, "model_type"},
		{"no model type", `{"hidden_size": 768}`, "model_type"},
		{"model type not string", `{"model_type": 7}`, "model_type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := FromHF("x", []byte(c.json))
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *importer.Error", err)
			}
			if e.Field != c.field || !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %q names field %q, want %q", err, e.Field, c.field)
			}
		})
	}
}

func TestFromHFBadInput(t *testing.T) {
	for _, in := range []string{``, `[]`, `{`, `{"model_type": "llama"} {}`, `null`, `"llama"`, `{"model_type": "llama", "rope_theta": NaN}`} {
		if out, err := FromHF("x", []byte(in)); err == nil {
			t.Errorf("FromHF(%q) = %s, want an error", in, out)
		}
	}
	data, _ := os.ReadFile("testdata/llama2_7b.json")
	for _, name := range []string{"", "Llama", "9lives", "has-dash", strings.Repeat("a", 65), "main"} {
		if _, err := FromHF(name, data); err == nil {
			t.Errorf("FromHF(name %q) succeeded", name)
		}
	}
}

// TestFromHFScalingVariants covers the remaining rope_type translations.
func TestFromHFScalingVariants(t *testing.T) {
	const base = `"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 16384`
	cases := []struct {
		name, json string
		check      func(*spec.Spec) bool
	}{
		{"linear", `{` + base + `, "rope_scaling": {"type": "linear", "factor": 4.0}}`,
			func(s *spec.Spec) bool { return s.Scaling.Type == "linear" && s.Scaling.Factor == 4 }},
		{"dynamic falls back to max_position_embeddings", `{` + base + `, "rope_scaling": {"type": "dynamic", "factor": 2.0}}`,
			func(s *spec.Spec) bool {
				return s.Scaling.Type == "dynamic" && s.Scaling.Factor == 2 && s.Scaling.OriginalMaxPosition == 16384
			}},
		// _compute_dynamic_ntk_parameters reads config.max_position_embeddings only.
		{"dynamic ignores rope_scaling's original", `{` + base + `, "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}}`,
			func(s *spec.Spec) bool { return s.Scaling.OriginalMaxPosition == 16384 }},
		// standardize_rope_params: llama3 falls back to max_position_embeddings.
		{"llama3 falls back to max_position_embeddings", `{` + base + `, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4}}`,
			func(s *spec.Spec) bool { return s.Scaling.OriginalMaxPosition == 16384 }},
		// standardize_rope_params: a top-level original replaces rope_scaling's.
		{"longrope top-level original wins", `{"model_type": "phi3", "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 1024, "original_max_position_embeddings": 128, "rope_scaling": {"type": "longrope", "original_max_position_embeddings": 256, "short_factor": [1, 1, 1, 1], "long_factor": [1, 1, 1, 1]}}`,
			func(s *spec.Spec) bool { return s.Scaling.OriginalMaxPosition == 128 && s.Scaling.Factor == 8 }},
		// _compute_longrope_parameters: an explicit factor is used as given
		// (attention factor sqrt(1 + ln 16 / ln 4096) = 1.1547, not 1.1902 from 131072/4096).
		{"longrope explicit factor beside a top-level original", `{"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", "factor": 16, "short_factor": [` + ones(48) + `], "long_factor": [` + ones(48) + `]}}`,
			func(s *spec.Spec) bool {
				return s.Scaling.Factor == 16 && s.Scaling.OriginalMaxPosition == 4096 && !s.Scaling.HasAttentionFactor
			}},
		// Phi3Config's class default original_max_position_embeddings 4096
		// applies when config.json has none: factor 131072/4096 = 32.
		{"phi3 class default original", `{"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131072, "rope_scaling": {"type": "longrope", "short_factor": [` + ones(48) + `], "long_factor": [` + ones(48) + `]}}`,
			func(s *spec.Spec) bool { return s.Scaling.Factor == 32 && s.Scaling.OriginalMaxPosition == 4096 }},
		// Other models have no such default: factor 1, original max_position_embeddings.
		{"longrope without any original", `{"model_type": "llama", "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 1024, "rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1, 1], "long_factor": [1, 1, 1, 1]}}`,
			func(s *spec.Spec) bool { return s.Scaling.Factor == 1 && s.Scaling.OriginalMaxPosition == 1024 }},
		{"ntk", `{` + base + `, "rope_scaling": {"rope_type": "ntk", "factor": 2.0}}`,
			func(s *spec.Spec) bool { return s.Scaling.Type == "ntk" }},
		{"default ignores factor", `{` + base + `, "rope_scaling": {"rope_type": "default", "factor": 2.0}}`,
			func(s *spec.Spec) bool { return s.Scaling == nil }},
		{"yarn deepseek mscale", `{` + base + `, "rope_scaling": {"type": "yarn", "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1}}`,
			func(s *spec.Spec) bool {
				sc := s.Scaling
				return sc.HasMscale && sc.HasMscaleAllDim && sc.Mscale == 0.707 && sc.OriginalMaxPosition == 4096
			}},
		{"yarn lone mscale unused", `{` + base + `, "rope_scaling": {"type": "yarn", "factor": 4, "mscale": 1}}`,
			func(s *spec.Spec) bool { return !s.Scaling.HasMscale && s.Scaling.OriginalMaxPosition == 16384 }},
		{"yarn attention factor", `{` + base + `, "rope_scaling": {"rope_type": "yarn", "factor": 4, "attention_factor": 1.2, "beta_fast": 0}}`,
			func(s *spec.Spec) bool {
				return s.Scaling.HasAttentionFactor && s.Scaling.AttentionFactor == 1.2 && s.Scaling.BetaFast == 32
			}},
		{"longrope inside rope_scaling", `{"model_type": "llama", "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 1024, "rope_scaling": {"rope_type": "longrope", "factor": 8, "original_max_position_embeddings": 128, "attention_factor": 1.1, "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 3, 4]}}`,
			func(s *spec.Spec) bool {
				sc := s.Scaling
				return sc.Factor == 8 && sc.OriginalMaxPosition == 128 && sc.AttentionFactor == 1.1 && sc.LongFactor[3] == 4
			}},
		{"partial rotary with longrope", `{"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 24, "partial_rotary_factor": 0.75, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", "short_factor": [` + ones(48) + `], "long_factor": [` + ones(48) + `]}}`,
			func(s *spec.Spec) bool {
				return s.HeadDim == 128 && s.RotaryDim == 96 && len(s.Scaling.ShortFactor) == 48
			}},
		{"theta in both places, same value", `{` + base + `, "rope_theta": 500000, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}`,
			func(s *spec.Spec) bool { return s.Base == 500000 && s.Scaling == nil }},
		{"mixtral default theta", `{"model_type": "mixtral", "hidden_size": 4096, "num_attention_heads": 32}`,
			func(s *spec.Spec) bool { return s.Base == 1e6 && s.MaxPosition == spec.DefaultMaxPosition }},
		{"phi default partial", `{"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32}`,
			func(s *spec.Spec) bool { return s.HeadDim == 80 && s.RotaryDim == 40 }},
		{"gptj default rotary_dim", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16}`,
			func(s *spec.Spec) bool { return s.RotaryDim == 64 && s.Layout == "interleaved" }},
		{"neox new names", `{"model_type": "gpt_neox", "hidden_size": 2048, "num_attention_heads": 8, "partial_rotary_factor": 0.5, "rope_theta": 20000}`,
			func(s *spec.Spec) bool { return s.RotaryDim == 128 && s.Base == 20000 }},
		{"refinedweb alias", `{"model_type": "RefinedWebModel", "hidden_size": 4544, "n_head": 71}`,
			func(s *spec.Spec) bool { return s.HeadDim == 64 }},
		{"interleaved cap", `{"model_type": "gptj", "n_embd": 16384, "n_head": 16, "rotary_dim": 1024, "n_positions": 1000000}`,
			func(s *spec.Spec) bool {
				return float64(s.MaxPosition)*2*1024*4 <= MaxImportTableBytes && s.MaxPosition == 8192
			}},
		{"float integer", `{"model_type": "llama", "hidden_size": 4096.0, "num_attention_heads": 32}`,
			func(s *spec.Spec) bool { return s.HeadDim == 128 }},
		{"mt5", `{"model_type": "mt5", "num_heads": 6, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128}`,
			func(s *spec.Spec) bool { return s.Heads == 6 && s.Buckets.Num == 32 }},
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
			if !c.check(s) {
				t.Errorf("unexpected spec %+v scaling %+v\n%s", *s, s.Scaling, out)
			}
		})
	}
}

// ones is n comma-separated 1s.
func ones(n int) string { return strings.TrimSuffix(strings.Repeat("1, ", n), ", ") }

func TestPackageName(t *testing.T) {
	for in, want := range map[string]string{
		"Llama-3.1-8B":                  "llama_3_1_8b",
		"qwen2.5-7b-instruct.Q4_K_M":    "qwen2_5_7b_instruct_q4_k_m",
		"7b":                            "m7b",
		"":                              "m",
		"__x__":                         "x",
		strings.Repeat("a", 70):         strings.Repeat("a", 64),
		"Phi-3-mini-128k-instruct.gguf": "phi_3_mini_128k_instruct_gguf",
	} {
		if got := PackageName(in); got != want {
			t.Errorf("PackageName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFmtNumRoundTrip checks that every formatted number reads back through
// spec.Parse as the same float64, including exponent forms.
func TestFmtNumRoundTrip(t *testing.T) {
	for _, v := range []float64{1, 0.5, 1.0800000429153442, 1e-5, 3.3e-9, 1e15, 1.5e300, 123456.789, 0.1 + 0.2, 5e-324} {
		// longrope's factor takes any positive number (ALiBi slopes are
		// bounded to normal float32s).
		src := "name: x\nencoding: rope\nhead_dim: 2\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1]\n  long_factor: [1]\n  factor: " + fmtNum(v) + "\n"
		s, err := spec.Parse("x.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if s.Scaling.Factor != v {
			t.Errorf("fmtNum(%v) = %q reads back as %v", v, fmtNum(v), s.Scaling.Factor)
		}
	}
}
