package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const llamaCfg = "../../importer/testdata/llama31_8b.json"

// -o DIR/ (new or existing) and -o DIR (existing) write DIR/NAME.yaml for
// a config needing one spec, as they do for several.
func TestImportHFOneSpecIntoDirectory(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ o, want string }{
		{filepath.Join(dir, "new") + "/", filepath.Join(dir, "new", "x.yaml")},
		{filepath.Join(dir, "nested", "new") + "/", filepath.Join(dir, "nested", "new", "x.yaml")},
		{existing + "/", filepath.Join(existing, "x.yaml")},
		{existing, filepath.Join(existing, "x.yaml")}, // (with -force: the case above wrote it)
	} {
		code, _, errs := runCLI("import-hf", "-force", "-name", "x", "-o", c.o, llamaCfg)
		if code != 0 {
			t.Errorf("import-hf -o %s: code %d: %s", c.o, code, errs)
			continue
		}
		ss, err := loadSpecs(nil, []string{c.want})
		if err != nil || len(ss) != 1 || ss[0].Name != "x" {
			t.Errorf("import-hf -o %s: %s: %v %v", c.o, c.want, err, ss)
		}
	}
	// -o FILE still writes that file.
	file := filepath.Join(dir, "spec.yaml")
	if code, _, errs := runCLI("import-hf", "-name", "x", "-o", file, llamaCfg); code != 0 {
		t.Fatalf("import-hf -o FILE: code %d: %s", code, errs)
	}
	if ss, err := loadSpecs(nil, []string{file}); err != nil || ss[0].Name != "x" {
		t.Errorf("%s: %v", file, err)
	}
}

// An existing spec file is replaced only with -force, for -o FILE and for
// -o DIR/ (where none of the specs is written when one exists).
func TestImportRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("import-hf", "-name", "x", "-o", file, llamaCfg)
	if code == 0 || !strings.Contains(errs, "-force") || !strings.Contains(errs, file) {
		t.Errorf("import-hf over an existing file: code %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI("import-hf", "-name", "x", "-o", dir+"/", llamaCfg)
	if code == 0 || !strings.Contains(errs, "-force") {
		t.Errorf("import-hf -o DIR/ over an existing file: code %d, stderr %q", code, errs)
	}
	if b, _ := os.ReadFile(file); string(b) != "mine\n" {
		t.Fatalf("%s was overwritten without -force", file)
	}

	// Gemma 3: g3_global.yaml exists, so g3_local.yaml is not written either.
	g3 := "../../importer/testdata/gemma3_4b.json"
	global := filepath.Join(dir, "g3_global.yaml")
	if err := os.WriteFile(global, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("import-hf", "-name", "g3", "-o", dir, g3); code == 0 || !strings.Contains(errs, "-force") {
		t.Errorf("import-hf of two specs over an existing one: code %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "g3_local.yaml")); err == nil {
		t.Errorf("g3_local.yaml was written though g3_global.yaml was refused")
	}

	for _, args := range [][]string{
		{"import-hf", "-force", "-name", "x", "-o", file, llamaCfg},
		{"import-hf", "-name", "g3", "-o", dir, "-force", g3},
	} {
		if code, _, errs := runCLI(args...); code != 0 {
			t.Fatalf("%q: code %d: %s", args, code, errs)
		}
	}
	for _, p := range []string{file, global, filepath.Join(dir, "g3_local.yaml")} {
		if ss, err := loadSpecs(nil, []string{p}); err != nil || len(ss) != 1 {
			t.Errorf("%s after -force: %v", p, err)
		}
	}

	// import-gguf too.
	gguf := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(gguf, miniGGUF(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("import-gguf", "-name", "x", "-o", file, gguf); code == 0 || !strings.Contains(errs, "-force") {
		t.Errorf("import-gguf over an existing file: code %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI("import-gguf", "-force", "-name", "x", "-o", file, gguf); code != 0 {
		t.Errorf("import-gguf -force: code %d: %s", code, errs)
	}
}

// Errors name the input file as given, never "config.json" for a file of
// another name; an unusable name taken from the path suggests -name; a
// rejected spec cites its line, not a NAME.yaml file that does not exist.
func TestImportErrorsNameTheInput(t *testing.T) {
	dir := t.TempDir()
	hf, err := os.ReadFile(llamaCfg)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("import-hf", "-name", "x", bad)
	if code == 0 || !strings.HasPrefix(errs, "posenc import-hf: "+bad+": not valid JSON") || strings.Contains(errs, "config.json") {
		t.Errorf("broken JSON: code %d, stderr %q; want the error to name %s", code, errs, bad)
	}
	for _, c := range []struct{ path, name string }{
		{filepath.Join(dir, "llama4_maverick_17b_128e_test.json"), "llama4_maverick_17b_128e_test"},
		{filepath.Join(dir, "type", "config.json"), "type"},
	} {
		os.MkdirAll(filepath.Dir(c.path), 0o755)
		if err := os.WriteFile(c.path, hf, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, errs := runCLI("import-hf", c.path)
		if code != 2 || !strings.Contains(errs, c.path) || !strings.Contains(errs, `"`+c.name+`"`) || !strings.Contains(errs, "-name") || strings.Contains(errs, ".yaml") {
			t.Errorf("import-hf %s: code %d, stderr %q; want a usage error naming the file and suggesting -name", c.path, code, errs)
		}
		if stdout != "" {
			t.Errorf("import-hf %s wrote %q", c.path, stdout)
		}
		if code, _, errs := runCLI("import-hf", "-name", "ok_name", c.path); code != 0 {
			t.Errorf("import-hf -name ok_name %s: code %d: %s", c.path, code, errs)
		}
	}
	code, _, errs = runCLI("import-hf", "-name", "type", llamaCfg)
	if code != 2 || !strings.Contains(errs, "-name") || !strings.Contains(errs, `"type"`) {
		t.Errorf("import-hf -name type: code %d, stderr %q", code, errs)
	}
	// import-gguf names its input too.
	g := filepath.Join(dir, "broken.gguf")
	if err := os.WriteFile(g, []byte("GGUF\x03"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI("import-gguf", "-name", "x", g)
	if code == 0 || !strings.HasPrefix(errs, "posenc import-gguf: "+g+": ") {
		t.Errorf("broken GGUF: code %d, stderr %q; want the error to name %s", code, errs, g)
	}
}

// explain reads a multi-document file (import-hf's stdout for Gemma 3) and
// explains every spec in turn.
func TestExplainMultiDocument(t *testing.T) {
	code, yaml, errs := runCLI("import-hf", "-name", "g3", "../../importer/testdata/gemma3_4b.json")
	if code != 0 {
		t.Fatalf("import-hf: code %d: %s", code, errs)
	}
	both := filepath.Join(t.TempDir(), "both.yaml")
	if err := os.WriteFile(both, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("explain", both)
	if code != 0 {
		t.Fatalf("explain: code %d: %s", code, errs)
	}
	l, g := strings.Index(out, "g3_local ("+both+")"), strings.Index(out, "\ng3_global ("+both+")")
	if l != 0 || g < 0 {
		t.Errorf("explain of two specs: local at %d, global at %d:\n%s", l, g, out)
	}
}
