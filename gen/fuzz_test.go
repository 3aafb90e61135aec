package gen_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/importer"
	"github.com/posenc/posenc/spec"
)

// hostileSpecs are the inputs of issue 13 that used to panic or exhaust
// memory in gen; Parse must now refuse them (TestLimitsRefused in spec/
// checks the field and line).
var hostileSpecs = []string{
	"name: a\nencoding: alibi\nheads: 2\nslopes: [1e39, 1]\n",
	"name: r\nencoding: rope\nhead_dim: 64\nlayout: half\nscaling:\n  type: linear\n  factor: 1e-320\n",
	"name: r\nencoding: rope\nhead_dim: 64\nlayout: half\nscaling:\n  type: yarn\n  factor: 4\n  original_max_position: 4096\n  attention_factor: 1e300\n",
	"name: r\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1, 2]\n  long_factor: [1, 2]\n  attention_factor: 1e39\n",
	"name: r\nencoding: rope\nhead_dim: 64\nlayout: half\nscaling:\n  type: yarn\n  factor: 1e-20\n  original_max_position: 4096\n",
	"name: r\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1e300, 1e-300]\n  long_factor: [1, 2]\n",
	"name: b\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 32\n  max_distance: 2147483647\n",
	"name: b\nencoding: rpe_bias\nheads: 2\nr_max: 1073741824\n",
	"name: b\nencoding: rpe_bias\nheads: 2\nr_max: 16777216\n",
	"name: r\nencoding: rope\nhead_dim: 65536\nlayout: half\n",
	"name: l\nencoding: learned\nd_model: 65536\nmax_len: 2147483647\n",
}

// cheap reports whether generating s takes well under a second, so the
// fuzzers spend their inputs on shapes rather than on one large spec.
func cheap(s *spec.Spec) bool {
	return s.HeadDim <= 128 && s.DModel <= 1024 && s.Heads <= 256 && s.RMax <= 512 &&
		(s.Buckets == nil || s.Buckets.MaxDistance <= 512) &&
		float64(s.MaxPosition)*float64(s.HeadDim) <= 1<<20 && float64(s.MaxLen)*float64(s.DModel) <= 1<<20
}

// checkGenerate is the end-to-end property: a spec either fails to parse
// with an *spec.Error or generates without an error (and never panics).
func checkGenerate(t *testing.T, data []byte) {
	s, err := spec.Parse("fuzz.yaml", data)
	if err != nil {
		var e *spec.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v (%T) is not a *spec.Error", err, err)
		}
		return
	}
	if !cheap(s) {
		return
	}
	if _, err := gen.Generate(s); err != nil {
		t.Fatalf("Parse accepted the spec but Generate failed: %v\n%s", err, data)
	}
}

// FuzzParseGenerate runs Parse → Generate on arbitrary YAML, seeded with
// the zoo, the golden specs, the specs at the limits and hostile ones.
func FuzzParseGenerate(f *testing.F) {
	for _, pat := range []string{"../spec/zoo/*.yaml", "../verify/testdata/golden/specs/*.yaml", "../spec/testdata/limits/*.yaml"} {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, h := range hostileSpecs {
		f.Add([]byte(h))
	}
	f.Fuzz(checkGenerate)
}

// FuzzFromHFGenerate runs a Hugging Face config through the importer and
// the result through Parse → Generate: the importer must refuse what the
// generator cannot build.
func FuzzFromHFGenerate(f *testing.F) {
	paths, _ := filepath.Glob("../importer/testdata/*.json")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model_type": "t5", "num_heads": 8, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 2147483647}`))
	f.Add([]byte(`{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 1e-320}}`))
	f.Add([]byte(`{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "attention_factor": 1e300}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := importer.FromHF("fuzz", data)
		if err != nil {
			return // importer.FuzzFromHF checks the error's type
		}
		checkGenerate(t, out)
	})
}

// ggufCorpus returns the inputs of importer's checked-in FuzzFromGGUF seed
// corpus (the GGUF headers its tests encode: every architecture branch,
// big-endian, truncated), each file a "go test fuzz v1" []byte(...) entry.
func ggufCorpus(t testing.TB) [][]byte {
	paths, _ := filepath.Glob("../importer/testdata/fuzz/FuzzFromGGUF/*")
	var out [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		header, body, ok := strings.Cut(string(data), "\n")
		body = strings.TrimSpace(body)
		if !ok || header != "go test fuzz v1" || !strings.HasPrefix(body, "[]byte(") || !strings.HasSuffix(body, ")") {
			t.Fatalf("%s: not a one-value []byte fuzz corpus entry", p)
		}
		v, err := strconv.Unquote(body[len("[]byte(") : len(body)-1])
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, []byte(v))
	}
	if len(out) == 0 {
		t.Fatal("no FuzzFromGGUF seeds under ../importer/testdata/fuzz")
	}
	return out
}

// FuzzFromGGUFGenerate runs a GGUF header through the importer and the
// result through Parse → Generate, seeded with importer's GGUF seeds: the
// importer must refuse what the generator cannot build.
func FuzzFromGGUFGenerate(f *testing.F) {
	for _, s := range ggufCorpus(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := importer.FromGGUF("fuzz", bytes.NewReader(data))
		if err != nil {
			return // importer.FuzzFromGGUF checks the error's type
		}
		checkGenerate(t, out)
	})
}

// TestGGUFCorpusImports: the GGUF seeds of FuzzFromGGUFGenerate include
// headers the importer accepts and whose specs are cheap enough for
// checkGenerate to generate, so the fuzzer starts from inputs that reach
// Generate rather than only from refusals.
func TestGGUFCorpusImports(t *testing.T) {
	generated := 0
	for _, seed := range ggufCorpus(t) {
		out, err := importer.FromGGUF("seed", bytes.NewReader(seed))
		if err != nil {
			continue
		}
		s, err := spec.Parse("seed.yaml", out)
		if err != nil {
			t.Errorf("imported spec does not parse: %v\n%s", err, out)
			continue
		}
		if !cheap(s) {
			continue
		}
		if _, err := gen.Generate(s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		generated++
	}
	if generated == 0 {
		t.Error("no FuzzFromGGUF seed imports to a spec checkGenerate generates")
	}
	t.Logf("%d seeds reach Generate", generated)
}

// TestHostileSpecsRefused: every hostile seed is refused by Parse, so the
// fuzzers' seeds are exercised as errors, not skipped as costly.
func TestHostileSpecsRefused(t *testing.T) {
	for _, h := range hostileSpecs {
		if _, err := spec.Parse("hostile.yaml", []byte(h)); err == nil {
			t.Errorf("Parse accepted %q", h)
		}
	}
}
