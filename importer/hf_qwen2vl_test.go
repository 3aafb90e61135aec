package importer

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// The multimodal configs import to the zoo's specs (but for max_position):
// Qwen2.5-VL-7B (text and vision tower), Qwen3-VL-8B (interleaved; its
// vision tower, which the zoo lacks, is checked in hf_llava_test.go) and
// Pixtral-12B's vision encoder.
func TestMRoPEZooMatchesImport(t *testing.T) {
	for _, c := range []struct {
		file string
		zoo  []string
	}{
		{"qwen25_vl_7b.json", []string{"qwen25_vl_7b", "qwen25_vl_7b_vision"}},
		{"qwen3_vl_8b.json", []string{"qwen3_vl_8b"}},
		{"pixtral_12b_vision.json", []string{"pixtral_12b_vision"}},
	} {
		got := importSpecs(t, c.file, "x")
		if c.file == "qwen3_vl_8b.json" {
			got = got[:1]
		}
		if len(got) != len(c.zoo) {
			t.Fatalf("%s: %d specs, zoo has %d", c.file, len(got), len(c.zoo))
		}
		for i, n := range c.zoo {
			z, err := spec.ZooSpec(n)
			if err != nil {
				t.Fatal(err)
			}
			g := got[i]
			if g.HeadDim != z.HeadDim || g.RotaryDim != z.RotaryDim || g.Layout != z.Layout || g.Base != z.Base || g.Scaling != nil || z.Scaling != nil ||
				!reflect.DeepEqual(g.MRoPESection, z.MRoPESection) || g.MRoPEInterleaved != z.MRoPEInterleaved || g.MRoPEFreqs != z.MRoPEFreqs {
				t.Errorf("%s: imported %+v, zoo %+v", n, g, z)
			}
		}
	}
}

// Qwen2-VL's config without mrope_section is refused naming the field;
// Qwen3-VL's falls back to its class default [24, 20, 20]; a section that
// does not add up to head_dim/2 is refused by the spec's validation.
func TestQwenVLImportErrors(t *testing.T) {
	data, err := os.ReadFile("testdata/qwen25_vl_7b.json")
	if err != nil {
		t.Fatal(err)
	}
	noSec := strings.Replace(string(data), `"mrope_section":[16,24,24]`, `"factor":1`, 1)
	_, err = FromHFSpecs("x", []byte(noSec))
	var ie *Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "rope_scaling.mrope_section") {
		t.Errorf("missing mrope_section: %v", err)
	}
	bad := strings.Replace(string(data), `[16,24,24]`, `[16,24,20]`, 1)
	if _, err := FromHFSpecs("x", []byte(bad)); err == nil || !strings.Contains(err.Error(), "mrope_section") {
		t.Errorf("sections summing to 60: %v", err)
	}
	q3, err := os.ReadFile("testdata/qwen3_vl_8b.json")
	if err != nil {
		t.Fatal(err)
	}
	noSec3 := strings.Replace(string(q3), `"mrope_section":[24,20,20],`, ``, 1)
	ss, err := FromHFSpecs("x", []byte(noSec3))
	if err != nil || len(ss) != 2 || !strings.Contains(string(ss[0].YAML), "mrope_section: [24, 20, 20]") {
		t.Errorf("qwen3_vl default section: %v %s", err, ss)
	}
}
