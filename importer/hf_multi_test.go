package importer

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// importSpecs runs FromHFSpecs on a testdata config and parses each spec.
func importSpecs(t *testing.T, file, name string) []*spec.Spec {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := FromHFSpecs(name, data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []*spec.Spec
	for _, s := range specs {
		p, err := spec.Parse(s.Name+".yaml", s.YAML)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if p.Name != s.Name {
			t.Errorf("Spec.Name %q holds spec %q", s.Name, p.Name)
		}
		out = append(out, p)
	}
	return out
}

// Gemma 3 4B (google/gemma-3-4b-it, a sparse text_config relying on the
// Gemma3TextConfig defaults) gives a local and a global spec.
func TestGemma3Specs(t *testing.T) {
	ss := importSpecs(t, "gemma3_4b.json", "g4b")
	if len(ss) != 2 || ss[0].Name != "g4b_local" || ss[1].Name != "g4b_global" {
		t.Fatalf("specs %v", ss)
	}
	loc, glob := ss[0], ss[1]
	if loc.HeadDim != 256 || loc.Base != 10000 || loc.Scaling != nil || loc.Layout != spec.LayoutHalf {
		t.Errorf("local: %+v", loc)
	}
	if glob.HeadDim != 256 || glob.Base != 1e6 || glob.Scaling == nil || glob.Scaling.Type != spec.ScaleLinear || glob.Scaling.Factor != 8 {
		t.Errorf("global: %+v %+v", glob, glob.Scaling)
	}
	// 34 layers, every 6th global: 5, 11, 17, 23, 29.
	if !strings.Contains(glob.Source, "layers 5, 11, 17, 23, 29;") {
		t.Errorf("global layers not named:\n%s", glob.Source)
	}
	// gemma3_text (google/gemma-3-1b-it): explicit rope_local_base_freq.
	ss = importSpecs(t, "gemma3_1b.json", "g1b")
	if len(ss) != 2 || ss[0].Base != 10000 || ss[1].Base != 1e6 || ss[1].Scaling != nil || ss[0].MaxPosition != 32768 {
		t.Errorf("gemma3 1b: %+v / %+v", ss[0], ss[1])
	}
	// FromHF refuses a config that needs two specs, naming them.
	data, _ := os.ReadFile("testdata/gemma3_4b.json")
	_, err := FromHF("g4b", data)
	var ie *Error
	if !errors.As(err, &ie) || ie.Field != "model_type" || !strings.Contains(ie.Msg, "g4b_local, g4b_global") {
		t.Errorf("FromHF: %v", err)
	}
}

// transformers 5 writes Gemma 3's RoPE as rope_parameters keyed by layer
// type; layer_types names the layers.
func TestGemma3LayerTypes(t *testing.T) {
	cfg := `{"model_type": "gemma3_text", "head_dim": 128, "max_position_embeddings": 8192,
	  "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
	  "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 4, "rope_theta": 1000000},
	                      "sliding_attention": {"rope_type": "default", "rope_theta": 10000}}}`
	specs, err := FromHFSpecs("g", []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	loc, err := spec.Parse("l.yaml", specs[0].YAML)
	if err != nil {
		t.Fatal(err)
	}
	glob, err := spec.Parse("g.yaml", specs[1].YAML)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Base != 10000 || loc.Scaling != nil || glob.Base != 1e6 || glob.Scaling.Factor != 4 {
		t.Errorf("local %+v, global %+v", loc, glob)
	}
	if !bytes.Contains(specs[0].YAML, []byte("layers 0, 2;")) || !bytes.Contains(specs[1].YAML, []byte("layers 1;")) {
		t.Errorf("layers:\n%s\n%s", specs[0].YAML, specs[1].YAML)
	}
	// An unknown layer type is an error naming layer_types.
	bad := strings.Replace(cfg, `"full_attention", "sliding`, `"chunked_attention", "sliding`, 1)
	var ie *Error
	if _, err := FromHFSpecs("g", []byte(bad)); !errors.As(err, &ie) || ie.Field != "layer_types" {
		t.Errorf("bad layer type: %v", err)
	}
}

// Llama 4 Scout: interleaved, llama3 scaling with an empty band, every
// 4th layer NoPE.
func TestLlama4Scout(t *testing.T) {
	ss := importSpecs(t, "llama4_scout.json", "scout")
	if len(ss) != 1 {
		t.Fatalf("%d specs", len(ss))
	}
	s := ss[0]
	sc := s.Scaling
	if s.HeadDim != 128 || s.Layout != spec.LayoutInterleaved || s.Base != 500000 || sc == nil || sc.Type != spec.ScaleLlama3 ||
		sc.Factor != 16 || sc.LowFreqFactor != 1 || sc.HighFreqFactor != 1 || sc.OriginalMaxPosition != 8192 {
		t.Errorf("scout: %+v %+v", s, sc)
	}
	if a := s.AttnTemperature; a == nil || a.FloorScale != 8192 || a.AttnScale != 0.1 {
		t.Errorf("scout attn_temperature: %+v, want floor_scale 8192, attn_scale 0.1", a)
	}
	// attn_temperature_tuning false: no attn_temperature; a bad floor_scale names the field.
	off, err := FromHFSpecs("l", []byte(`{"model_type": "llama4_text", "rope_theta": 500000, "num_hidden_layers": 4, "attn_temperature_tuning": false}`))
	if err != nil || bytes.Contains(off[0].YAML, []byte("attn_temperature:")) {
		t.Errorf("tuning off: %v\n%s", err, off)
	}
	var fe *Error
	if _, err := FromHFSpecs("l", []byte(`{"model_type": "llama4_text", "num_hidden_layers": 4, "floor_scale": 0.5}`)); !errors.As(err, &fe) || fe.Field != "floor_scale" {
		t.Errorf("floor_scale 0.5: %v", err)
	}
	for _, want := range []string{"layers 3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47 are NoPE", "floor_scale 8192, attn_scale 0.1"} {
		if !strings.Contains(s.Source, want) {
			t.Errorf("missing %q in\n%s", want, s.Source)
		}
	}
	// An explicit no_rope_layers list wins; a bad entry names the field.
	cfg := `{"model_type": "llama4_text", "no_rope_layers": [1, 0, 1], "rope_theta": 500000}`
	specs, err := FromHFSpecs("l", []byte(cfg))
	if err != nil || !bytes.Contains(specs[0].YAML, []byte("layers 1 are NoPE")) {
		t.Errorf("explicit list: %v\n%s", err, specs)
	}
	var ie *Error
	if _, err := FromHFSpecs("l", []byte(`{"model_type": "llama4_text", "no_rope_layers": [1, 2]}`)); !errors.As(err, &ie) || ie.Field != "no_rope_layers" {
		t.Errorf("bad entry: %v", err)
	}
	if _, err := FromHFSpecs("l", []byte(`{"model_type": "llama4_text", "no_rope_layers": [0, 0]}`)); !errors.As(err, &ie) || ie.Field != "no_rope_layers" {
		t.Errorf("all NoPE: %v", err)
	}
}

// DeepSeek V3 and V2-Lite: the 64-dim rotary sub-head, interleaved, YaRN
// with mscale and mscale_all_dim.
func TestDeepSeek(t *testing.T) {
	for _, c := range []struct {
		file string
		ms   float64
	}{{"deepseek_v3.json", 1}, {"deepseek_v2_lite.json", 0.707}} {
		s := importSpecs(t, c.file, "ds")[0]
		sc := s.Scaling
		if s.HeadDim != 64 || s.RotaryDim != 64 || s.Layout != spec.LayoutInterleaved || s.Base != 10000 || sc == nil ||
			sc.Type != spec.ScaleYaRN || sc.Factor != 40 || sc.OriginalMaxPosition != 4096 ||
			!sc.HasMscale || sc.Mscale != c.ms || !sc.HasMscaleAllDim || sc.MscaleAllDim != c.ms {
			t.Errorf("%s: %+v %+v", c.file, s, sc)
		}
		if !strings.Contains(s.Source, "qk_head_dim^-0.5 · mscale²") {
			t.Errorf("%s: no softmax-scale note:\n%s", c.file, s.Source)
		}
	}
	// rope_interleave false: transformers' V3 applies rotate_half.
	cfg := `{"model_type": "deepseek_v3", "qk_rope_head_dim": 32, "rope_interleave": false}`
	specs, err := FromHFSpecs("d", []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse("d.yaml", specs[0].YAML)
	if err != nil || s.Layout != spec.LayoutHalf || s.HeadDim != 32 {
		t.Errorf("rope_interleave false: %v %+v", err, s)
	}
}

// A single-spec config gives FromHF's YAML, byte for byte.
func TestFromHFSpecsSingle(t *testing.T) {
	data, err := os.ReadFile("testdata/llama31_8b.json")
	if err != nil {
		t.Fatal(err)
	}
	one, err := FromHF("l", data)
	if err != nil {
		t.Fatal(err)
	}
	all, err := FromHFSpecs("l", data)
	if err != nil || len(all) != 1 || all[0].Name != "l" || !bytes.Equal(all[0].YAML, one) {
		t.Errorf("FromHFSpecs: %v %v", err, all)
	}
}

// The zoo's specs of these models are what import-hf gives for their
// configs, but for max_position (the zoo keeps tables small).
func TestZooMatchesImport(t *testing.T) {
	for _, c := range []struct {
		file string
		zoo  []string
	}{
		{"gemma3_4b.json", []string{"gemma3_4b_local", "gemma3_4b_global"}},
		{"llama4_scout.json", []string{"llama4_scout"}},
		{"deepseek_v3.json", []string{"deepseek_v3"}},
	} {
		got := importSpecs(t, c.file, "x")
		if len(got) != len(c.zoo) {
			t.Fatalf("%s: %d specs, zoo has %d", c.file, len(got), len(c.zoo))
		}
		for i, n := range c.zoo {
			z, err := spec.ZooSpec(n)
			if err != nil {
				t.Fatal(err)
			}
			g := got[i]
			if g.HeadDim != z.HeadDim || g.RotaryDim != z.RotaryDim || g.Layout != z.Layout || g.Base != z.Base ||
				(g.Scaling == nil) != (z.Scaling == nil) || g.Scaling != nil && !sameScaling(*g.Scaling, *z.Scaling) {
				t.Errorf("%s: imported %+v %+v, zoo %+v %+v", n, g, g.Scaling, z, z.Scaling)
			}
			if (g.AttnTemperature == nil) != (z.AttnTemperature == nil) || g.AttnTemperature != nil && *g.AttnTemperature != *z.AttnTemperature {
				t.Errorf("%s: imported attn_temperature %+v, zoo %+v", n, g.AttnTemperature, z.AttnTemperature)
			}
		}
	}
}

// sameScaling compares the scalar fields of two scalings.
func sameScaling(a, b spec.Scaling) bool {
	return a.Type == b.Type && a.Factor == b.Factor && a.OriginalMaxPosition == b.OriginalMaxPosition &&
		a.LowFreqFactor == b.LowFreqFactor && a.HighFreqFactor == b.HighFreqFactor &&
		a.BetaFast == b.BetaFast && a.BetaSlow == b.BetaSlow && a.Truncate == b.Truncate &&
		a.HasMscale == b.HasMscale && a.Mscale == b.Mscale && a.HasMscaleAllDim == b.HasMscaleAllDim &&
		a.MscaleAllDim == b.MscaleAllDim && a.HasAttentionFactor == b.HasAttentionFactor && a.AttentionFactor == b.AttentionFactor
}
