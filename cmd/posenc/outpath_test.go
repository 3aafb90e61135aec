package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty -o would write the packages into the current folder.
func TestGenRefusesEmptyO(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, _, errs := runCLI("gen", "-o", "", "-zoo", "bert_base")
	if code != 2 || !strings.Contains(errs, "-o") {
		t.Fatalf("gen -o \"\": code %d, stderr %q; want a usage error naming -o", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("gen -o \"\" wrote %d entries into the current folder", len(ents))
	}
}

// miniGGUF is a minimal Llama GGUF header (no tensors).
func miniGGUF() []byte {
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	w(uint32(3))
	w(uint64(0)) // tensors
	w(uint64(4)) // metadata pairs
	str("general.architecture")
	w(uint32(8)) // string
	str("llama")
	for _, kv := range []struct {
		k string
		v uint32
	}{{"llama.context_length", 4096}, {"llama.embedding_length", 4096}, {"llama.attention.head_count", 32}} {
		str(kv.k)
		w(uint32(4)) // uint32
		w(kv.v)
	}
	return b.Bytes()
}

// import-hf and import-gguf refuse an -o that is their input file, under
// any spelling of its path or a link to it, and leave the input intact.
func TestImportRefusesOutputOverInput(t *testing.T) {
	hf, err := os.ReadFile("../../importer/testdata/llama31_8b.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.json")
	gguf := filepath.Join(dir, "m.gguf")
	for p, data := range map[string][]byte{cfg: hf, gguf: miniGGUF()} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(cfg, link); err != nil {
		t.Fatal(err)
	}
	// Both inputs import when -o is elsewhere.
	if code, _, errs := runCLI("import-hf", "-name", "x", "-o", filepath.Join(dir, "x.yaml"), cfg); code != 0 {
		t.Fatalf("import-hf: code %d: %s", code, errs)
	}
	if code, _, errs := runCLI("import-gguf", "-name", "x", "-o", filepath.Join(dir, "y.yaml"), gguf); code != 0 {
		t.Fatalf("import-gguf: code %d: %s", code, errs)
	}
	for _, c := range []struct{ cmd, out, in string }{
		{"import-hf", cfg, cfg},
		{"import-hf", filepath.Join(dir, "sub", "..", "cfg.json"), cfg},
		{"import-hf", link, cfg},
		{"import-hf", cfg, link},
		{"import-gguf", gguf, gguf},
		{"import-gguf", filepath.Join(dir, ".", "m.gguf"), gguf},
	} {
		code, _, errs := runCLI(c.cmd, "-name", "x", "-o", c.out, c.in)
		if code != 2 || !strings.Contains(errs, "-o") || !strings.Contains(errs, "input") {
			t.Errorf("%s -o %s %s: code %d, stderr %q; want a usage error naming -o", c.cmd, c.out, c.in, code, errs)
		}
	}
	if got, _ := os.ReadFile(cfg); !bytes.Equal(got, hf) {
		t.Errorf("%s was overwritten", cfg)
	}
	if got, _ := os.ReadFile(gguf); !bytes.Equal(got, miniGGUF()) {
		t.Errorf("%s was overwritten", gguf)
	}

	// Several specs into a directory: none of them may land on the input.
	multi, err := os.ReadFile("../../importer/testdata/gemma3_4b.json")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "g3_global.yaml")
	if err := os.WriteFile(in, multi, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("import-hf", "-name", "g3", "-o", dir+"/", in)
	if code != 2 || !strings.Contains(errs, "-o") {
		t.Errorf("import-hf -o DIR onto its input: code %d, stderr %q", code, errs)
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, multi) {
		t.Errorf("%s was overwritten", in)
	}
	if _, err := os.Stat(filepath.Join(dir, "g3_local.yaml")); err == nil {
		t.Errorf("import-hf wrote g3_local.yaml before refusing")
	}
}
