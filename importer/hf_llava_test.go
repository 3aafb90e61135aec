package importer

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// checkPixtralVision checks a Pixtral vision spec: 2D RoPE with the
// frequencies dealt alternately to rows and columns.
func checkPixtralVision(t *testing.T, what string, s *spec.Spec, headDim, side int) {
	t.Helper()
	q := headDim / 4
	if s.HeadDim != headDim || s.RotaryDim != headDim || s.Layout != spec.LayoutHalf || s.Base != 10000 || s.Scaling != nil ||
		s.MaxPosition != side || !reflect.DeepEqual(s.MRoPESection, []int{q, q}) || s.MRoPEFreqs != spec.MRoPEFreqsAlternate {
		t.Errorf("%s: vision spec %+v, want head_dim %d, base 10000, max_position %d, mrope_section [%d, %d] alternate", what, s, headDim, side, q, q)
	}
}

// Pixtral-12B as released (model_type llava, a mistral text_config, a
// pixtral vision_config) gives the Mistral text RoPE and the vision tower,
// the latter equal to the zoo's pixtral_12b_vision.
func TestLlavaPixtralImport(t *testing.T) {
	got := importSpecs(t, "pixtral_12b.json", "px")
	if len(got) != 2 || got[0].Name != "px" || got[1].Name != "px_vision" {
		t.Fatalf("pixtral_12b.json: %d specs %v, want px and px_vision", len(got), got)
	}
	txt := got[0]
	if txt.HeadDim != 128 || txt.RotaryDim != 128 || txt.Layout != spec.LayoutHalf || txt.Base != 1e9 || txt.Scaling != nil || txt.MRoPESection != nil {
		t.Errorf("text spec %+v, want head_dim 128, half, base 1e9, no scaling", txt)
	}
	checkPixtralVision(t, "pixtral_12b.json", got[1], 64, 1024/16)
	z, err := spec.ZooSpec("pixtral_12b_vision")
	if err != nil {
		t.Fatal(err)
	}
	if v := got[1]; v.HeadDim != z.HeadDim || v.Base != z.Base || !reflect.DeepEqual(v.MRoPESection, z.MRoPESection) || v.MRoPEFreqs != z.MRoPEFreqs {
		t.Errorf("vision %+v differs from zoo pixtral_12b_vision %+v", v, z)
	}
	// One spec only through FromHF: the error lists both.
	data, _ := os.ReadFile("testdata/pixtral_12b.json")
	if _, err := FromHF("px", data); err == nil || !strings.Contains(err.Error(), "px, px_vision") {
		t.Errorf("FromHF on llava: %v", err)
	}
}

// Mistral3 (Mistral-Small-3.1 with a mistral text_config; Ministral-3 with
// a ministral3 one) gives the text RoPE and the Pixtral vision tower.
func TestMistral3Import(t *testing.T) {
	small := importSpecs(t, "mistral_small31_24b.json", "ms")
	if len(small) != 2 || small[1].Name != "ms_vision" {
		t.Fatalf("mistral_small31_24b.json: %d specs, want 2", len(small))
	}
	if s := small[0]; s.HeadDim != 128 || s.Base != 1e9 || s.Scaling != nil || s.MaxPosition < 1 || s.MaxPosition > 131072 {
		t.Errorf("mistral-small text %+v", s)
	}
	checkPixtralVision(t, "mistral_small31_24b.json", small[1], 64, 1540/14)

	mini := importSpecs(t, "ministral3_8b.json", "mn")
	if len(mini) != 2 || mini[1].Name != "mn_vision" {
		t.Fatalf("ministral3_8b.json: %d specs, want 2", len(mini))
	}
	checkMinistral3Text(t, "ministral3_8b.json", mini[0])
	checkPixtralVision(t, "ministral3_8b.json", mini[1], 64, 1540/14)
	data, _ := os.ReadFile("testdata/ministral3_8b.json")
	ss, err := FromHFSpecs("mn", data)
	if err != nil || !strings.Contains(string(ss[0].YAML), "llama_4_scaling_beta 0.1") {
		t.Errorf("the query scaling of llama_4_scaling_beta is not noted: %v\n%s", err, ss)
	}
}

// checkMinistral3Text checks Ministral-3-8B's text rotary: YaRN ×16 over
// 16384 positions, base 1e6, mscale = mscale_all_dim = 1.
func checkMinistral3Text(t *testing.T, what string, s *spec.Spec) {
	t.Helper()
	sc := s.Scaling
	if s.HeadDim != 128 || s.Layout != spec.LayoutHalf || s.Base != 1e6 || sc == nil || sc.Type != spec.ScaleYaRN || sc.Factor != 16 ||
		sc.OriginalMaxPosition != 16384 || sc.BetaFast != 32 || sc.BetaSlow != 1 || !sc.HasMscale || sc.Mscale != 1 || !sc.HasMscaleAllDim || sc.MscaleAllDim != 1 {
		t.Errorf("%s: text spec %+v scaling %+v, want yarn ×16 over 16384, base 1e6", what, s, sc)
	}
}

// A ministral3 config on its own (Devstral 2's layout: model_type
// ministral3 at the top level) imports through FromHF too; without
// rope_parameters Ministral3Config's default YaRN applies.
func TestMinistral3TextImport(t *testing.T) {
	var top map[string]json.RawMessage
	data, _ := os.ReadFile("testdata/ministral3_8b.json")
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	y, err := FromHF("mt", top["text_config"])
	if err != nil {
		t.Fatalf("ministral3 text_config alone: %v", err)
	}
	s, err := spec.Parse("mt.yaml", y)
	if err != nil {
		t.Fatal(err)
	}
	checkMinistral3Text(t, "text_config alone", s)

	y, err = FromHF("md", []byte(`{"model_type": "ministral3"}`))
	if err != nil {
		t.Fatalf("ministral3 with class defaults: %v", err)
	}
	if s, err = spec.Parse("md.yaml", y); err != nil {
		t.Fatal(err)
	}
	checkMinistral3Text(t, "class defaults", s)
}

// Qwen3-VL's vision tower: head_dim = hidden_size / num_heads = 72,
// VisionRotaryEmbedding(36): [18, 18] per axis. Its vision_config alone
// imports to the same spec.
func TestQwen3VLVisionImport(t *testing.T) {
	want := func(what string, s *spec.Spec) {
		t.Helper()
		if s.HeadDim != 72 || s.RotaryDim != 72 || s.Layout != spec.LayoutHalf || s.Base != 10000 || s.Scaling != nil ||
			!reflect.DeepEqual(s.MRoPESection, []int{18, 18}) || s.MRoPEFreqs != spec.MRoPEFreqsPerAxis || s.MRoPEInterleaved {
			t.Errorf("%s: %+v, want head_dim 72, base 10000, mrope_section [18, 18] per_axis", what, s)
		}
	}
	got := importSpecs(t, "qwen3_vl_8b.json", "q")
	if len(got) != 2 || got[1].Name != "q_vision" {
		t.Fatalf("qwen3_vl_8b.json: %d specs, want q and q_vision", len(got))
	}
	want("qwen3_vl_8b.json vision", got[1])

	var top map[string]json.RawMessage
	data, _ := os.ReadFile("testdata/qwen3_vl_8b.json")
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	y, err := FromHF("qv", top["vision_config"])
	if err != nil {
		t.Fatalf("qwen3_vl vision_config alone: %v", err)
	}
	s, err := spec.Parse("qv.yaml", y)
	if err != nil {
		t.Fatal(err)
	}
	want("vision_config alone", s)
}

// Refusals name the field (with its path) that is missing or wrong.
func TestMultimodalImportErrors(t *testing.T) {
	read := func(file string) string {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	px, mn, q3 := read("pixtral_12b.json"), read("ministral3_8b.json"), read("qwen3_vl_8b.json")
	for _, c := range []struct {
		what, config, field string
	}{
		{"llava text_config of an unknown type", strings.Replace(px, `"model_type": "mistral"`, `"model_type": "opt"`, 1), "text_config.model_type"},
		{"llava without text_config", `{"model_type": "llava", "vision_config": {"model_type": "pixtral"}}`, "text_config"},
		{"pixtral head_dim not divisible by 4", strings.Replace(px, `"head_dim": 64`, `"head_dim": 66`, 1), "vision_config.head_dim"},
		{"vision_config not an object", strings.Replace(px, `"vision_config": {`, `"vision_config": 3, "x": {`, 1), "vision_config"},
		{"mistral3 with a t5 text_config", strings.Replace(mn, `"model_type": "ministral3"`, `"model_type": "t5"`, 1), "text_config.model_type"},
		{"ministral3 llama_4_scaling_beta not a number", strings.Replace(mn, `"llama_4_scaling_beta": 0.1`, `"llama_4_scaling_beta": "x"`, 1), "text_config.rope_parameters.llama_4_scaling_beta"},
		{"qwen3_vl vision hidden_size not a multiple of 4·num_heads", strings.Replace(q3, `"hidden_size":1152`, `"hidden_size":1160`, 1), "vision_config.hidden_size"},
		{"qwen3_vl with neither text_config nor vision fields", `{"model_type": "qwen3_vl"}`, "text_config"},
	} {
		_, err := FromHFSpecs("x", []byte(c.config))
		var ie *Error
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%s: got %v, want an error on field %s", c.what, err, c.field)
		}
	}
}
