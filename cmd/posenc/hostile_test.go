package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mropeOverflow is the reported spec whose four mrope_section entries near
// 2^62 summed, in int64, to rotary_dim/2 = 64.
const mropeOverflow = "name: m\nencoding: rope\nhead_dim: 128\nlayout: half\n" +
	"mrope_section: [4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387968]\n"

// sparse creates a file of size bytes starting with head, without writing
// the zeros after it.
func sparse(t *testing.T, path string, head []byte, size int64) string {
	t.Helper()
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHostileInputsRefused: the reproducers of the issue "unbounded inputs
// exhaust memory" fail with exit status 1 and an error naming the file
// (and the line and field where there is one), in every command that
// reads them.
func TestHostileInputsRefused(t *testing.T) {
	dir := t.TempDir()
	mrope := filepath.Join(dir, "mrope.yaml")
	os.WriteFile(mrope, []byte(mropeOverflow), 0o644)
	huge := sparse(t, filepath.Join(dir, "huge.yaml"), []byte("name: h\nencoding: alibi\nheads: 3\n#"), 65<<20)
	junk := filepath.Join(dir, "junk.yaml")
	os.WriteFile(junk, []byte("name: j\nencoding: alibi\nheads: 3\nslopes:\n"+strings.Repeat("- 1\n", 1<<20)), 0o644)
	gemma := filepath.Join(dir, "gemma.json")
	os.WriteFile(gemma, []byte(`{"model_type": "gemma3_text", "num_hidden_layers": 1000000000}`), 0o644)
	hugeJSON := sparse(t, filepath.Join(dir, "config.json"), []byte(`{"model_type": "llama", "x": "`), 65<<20)
	le := binary.LittleEndian
	gguf := le.AppendUint64(le.AppendUint64(le.AppendUint32([]byte("GGUF"), 3), 0), 1)
	gguf = le.AppendUint32(append(le.AppendUint64(gguf, 1), 'k'), ggufArrayType)
	gguf = le.AppendUint64(le.AppendUint32(gguf, ggufStringType), 1<<40)
	hugeGGUF := sparse(t, filepath.Join(dir, "model.gguf"), gguf, 65<<20)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "-o", filepath.Join(dir, "out"), mrope}, mrope + ":5: mrope_section[0]: must be an integer in [1, 64]"},
		{[]string{"explain", mrope}, mrope + ":5: mrope_section[0]"},
		{[]string{"verify", mrope}, mrope + ":5: mrope_section[0]"},
		{[]string{"gen", "-o", filepath.Join(dir, "out"), huge}, huge + ": input file too large: 68157440 bytes, the limit is 64 MiB"},
		{[]string{"explain", huge}, huge + ": input file too large"},
		{[]string{"explain", junk}, junk + ":65531: more than 65536 YAML nodes"},
		{[]string{"import-hf", gemma}, "num_hidden_layers: must be an integer in [1, 1024], got 1e+09"},
		{[]string{"import-hf", hugeJSON}, hugeJSON + ": input file too large"},
		{[]string{"import-gguf", hugeGGUF}, hugeGGUF + ": header larger than the 64 MiB limit"},
	} {
		code, _, errs := runCLI(c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("posenc %s: code %d, stderr %q; want code 1 and %q", c.args[0], code, errs, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("gen wrote %s for a refused spec", filepath.Join(dir, "out"))
	}
}

// GGUF value types used above (importer's ggufArray and ggufString).
const (
	ggufStringType = 8
	ggufArrayType  = 9
)
