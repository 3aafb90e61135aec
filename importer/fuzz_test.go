package importer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/posenc/posenc/spec"
)

// Seed corpora live in testdata/fuzz/FuzzFromHF and testdata/fuzz/FuzzFromGGUF
// (go test fuzz v1 files); TestWriteFuzzCorpus regenerates them.

// checkImport is the property both fuzz targets assert: an import either
// fails with an *Error or yields YAML that spec.Parse accepts.
func checkImport(t *testing.T, out []byte, err error) {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not an *importer.Error", err)
		}
		if out != nil {
			t.Fatalf("output alongside error %v", err)
		}
		return
	}
	if _, perr := spec.Parse("fuzz.yaml", out); perr != nil {
		t.Fatalf("imported spec does not parse: %v\n%s", perr, out)
	}
}

func FuzzFromHF(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := FromHF("fuzz", data)
		checkImport(t, out, err)
		// Every spec of a multi-spec config (text and vision towers,
		// Gemma 3's two bases) parses too.
		specs, err := FromHFSpecs("fuzz", data)
		if err != nil {
			checkImport(t, nil, err)
			return
		}
		for _, s := range specs {
			checkImport(t, s.YAML, nil)
		}
	})
}

// ggufSeeds are encoded headers covering every architecture branch.
func ggufSeeds() [][]byte {
	withTensor := llamaGGUF()
	withTensor.tensors = append(withTensor.tensors, "rope_freqs.weight")
	seeds := []ggufFile{
		llamaGGUF(),
		withTensor,
		arch("qwen2",
			ggufKV{"qwen2.context_length", u32v(131072)},
			ggufKV{"qwen2.embedding_length", u32v(3584)},
			ggufKV{"qwen2.attention.head_count", u32v(28)},
			ggufKV{"qwen2.rope.freq_base", f32v(1e6)},
			ggufKV{"qwen2.rope.scaling.type", strv("yarn")},
			ggufKV{"qwen2.rope.scaling.factor", f32v(4)},
			ggufKV{"qwen2.rope.scaling.attn_factor", f32v(0.9)},
			ggufKV{"qwen2.rope.scaling.original_context_length", u32v(32768)}),
		arch("gptneox",
			ggufKV{"gptneox.context_length", u32v(2048)},
			ggufKV{"gptneox.embedding_length", u32v(2048)},
			ggufKV{"gptneox.attention.head_count", u32v(8)},
			ggufKV{"gptneox.rope.dimension_count", u32v(64)},
			ggufKV{"gptneox.rope.scale_linear", f32v(2)}),
		arch("bloom", ggufKV{"bloom.attention.head_count", u32v(112)}),
		arch("mpt", ggufKV{"mpt.attention.head_count", u32v(32)}, ggufKV{"mpt.attention.max_alibi_bias", f32v(8)}),
		arch("t5", ggufKV{"t5.attention.head_count", u32v(12)}, ggufKV{"t5.attention.relative_buckets_count", u32v(32)}),
		arch("bert", ggufKV{"bert.embedding_length", u32v(768)}, ggufKV{"bert.context_length", u32v(512)}),
	}
	be := llamaGGUF()
	be.order, be.version = binary.BigEndian, 2
	seeds = append(seeds, be)
	var out [][]byte
	for _, s := range seeds {
		out = append(out, s.encode())
	}
	return out
}

func FuzzFromGGUF(f *testing.F) {
	for _, s := range ggufSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := FromGGUF("fuzz", bytes.NewReader(data))
		checkImport(t, out, err)
	})
}

// TestWriteFuzzCorpus rewrites the checked-in seed corpora when
// POSENC_WRITE_FUZZ_CORPUS=1; otherwise it checks that they exist.
func TestWriteFuzzCorpus(t *testing.T) {
	hf, _ := filepath.Glob("testdata/*.json")
	var hfSeeds [][]byte
	for _, file := range hf {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		hfSeeds = append(hfSeeds, data)
	}
	sets := map[string][][]byte{"FuzzFromHF": hfSeeds, "FuzzFromGGUF": ggufSeeds()}
	for target, seeds := range sets {
		dir := filepath.Join("testdata", "fuzz", target)
		if os.Getenv("POSENC_WRITE_FUZZ_CORPUS") != "1" {
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) == 0 {
				t.Errorf("seed corpus %s is missing; run with POSENC_WRITE_FUZZ_CORPUS=1", dir)
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(s)) + ")\n"
			name := filepath.Join(dir, "seed"+strconv.Itoa(i))
			if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
