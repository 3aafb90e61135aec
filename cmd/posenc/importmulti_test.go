package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import-hf of a config needing two specs (Gemma 3): -o DIR/ writes one
// file per spec; stdout holds both as YAML documents that loadSpecs reads
// back; -o FILE is refused.
func TestImportHFMulti(t *testing.T) {
	dir := t.TempDir()
	cfg := "../../importer/testdata/gemma3_4b.json"
	out := filepath.Join(dir, "specs") + "/"
	if code, _, errs := runCLI("import-hf", "-name", "g3", "-o", out, cfg); code != 0 {
		t.Fatalf("import-hf -o dir: code %d: %s", code, errs)
	}
	for _, n := range []string{"g3_local", "g3_global"} {
		ss, err := loadSpecs(nil, []string{filepath.Join(out, n+".yaml")})
		if err != nil || len(ss) != 1 || ss[0].Name != n {
			t.Errorf("%s: %v %v", n, err, ss)
		}
	}
	code, stdout, errs := runCLI("import-hf", "-name", "g3", cfg)
	if code != 0 || strings.Count(stdout, "\n---\n") != 1 {
		t.Fatalf("stdout: code %d: %s\n%s", code, errs, stdout)
	}
	both := filepath.Join(dir, "both.yaml")
	if err := os.WriteFile(both, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	ss, err := loadSpecs(nil, []string{both})
	if err != nil || len(ss) != 2 || ss[0].Name != "g3_local" || ss[1].Name != "g3_global" || ss[1].Scaling == nil {
		t.Fatalf("multi-document file: %v %v", err, ss)
	}
	if code, _, errs := runCLI("import-hf", "-o", filepath.Join(dir, "one.yaml"), cfg); code == 0 || !strings.Contains(errs, "directory") {
		t.Errorf("-o FILE for two specs: code %d: %s", code, errs)
	}
}
