package importer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkEcho checks an importer error message built from hostile input: no
// raw control byte reaches it, the escape of ESC does, and it stays short.
func checkEcho(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	msg := err.Error()
	for _, r := range msg {
		if r < 0x20 || r == 0x7f {
			t.Errorf("%s: message holds raw control byte %#x: %.200q", what, r, msg)
			break
		}
	}
	if len(msg) > 2000 {
		t.Errorf("%s: message is %d bytes; long input values must be cut", what, len(msg))
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: message %.300q lacks %q", what, msg, w)
		}
	}
}

// hfConfig is testdata/llama2_7b.json with the changes set applied.
func hfConfig(t *testing.T, set func(m map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "llama2_7b.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	set(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHFErrorsEscapeAndCutInput(t *testing.T) {
	evil := "\x1b[2J\x1b]0;pwned\x07"
	huge := evil + strings.Repeat("A", 1<<20)

	_, err := FromHF("m", hfConfig(t, func(m map[string]any) { m["model_type"] = huge }))
	checkEcho(t, "huge model_type", err, `\x1b[2J`, "… (1048590 bytes)")

	_, err = FromHF("m", hfConfig(t, func(m map[string]any) {
		m["rope_scaling"] = map[string]any{"rope_type": "linear", "factor": 2, evil: 1}
	}))
	checkEcho(t, "control bytes in a rope_scaling key", err, `rope_scaling.\x1b[2J`)

	_, err = FromHF("m", hfConfig(t, func(m map[string]any) {
		m["rope_scaling"] = map[string]any{"rope_type": huge, "factor": 2}
	}))
	checkEcho(t, "huge rope_type", err, `\x1b]0;pwned\a`, "bytes)")

	_, err = FromHF("m", hfConfig(t, func(m map[string]any) { m["num_attention_heads"] = huge }))
	checkEcho(t, "huge string for a number", err, "num_attention_heads", "bytes)")

	_, err = FromHF("m", hfConfig(t, func(m map[string]any) { m["rope_theta"] = json.Number("1" + strings.Repeat("0", 1<<20)) }))
	checkEcho(t, "a megabyte number", err, "rope_theta", "(1048577 bytes)")
}

func TestGGUFErrorsEscapeAndCutInput(t *testing.T) {
	evil := "\x1b[2J\x1b]0;pwned\x07"
	// Strings over the reader's in-memory limit are kept as lengths only;
	// 500 bytes is read and must be cut.
	huge := evil + strings.Repeat("B", 500)

	f := llamaGGUF().without("general.architecture").with(ggufKV{"general.architecture", strv(huge)})
	_, err := FromGGUF("m", bytes.NewReader(f.encode()))
	checkEcho(t, "huge architecture", err, "general.architecture", `\x1b[2J`, "… (514 bytes)")

	f = llamaGGUF().with(ggufKV{"llama.rope." + evil, u32v(1)})
	_, err = FromGGUF("m", bytes.NewReader(f.encode()))
	checkEcho(t, "control bytes in a rope key", err, `"llama.rope.\x1b[2J`)

	f = llamaGGUF().without("llama.rope.freq_base").with(ggufKV{"llama.rope.freq_base", strv(huge)})
	_, err = FromGGUF("m", bytes.NewReader(f.encode()))
	checkEcho(t, "huge string for a number", err, "llama.rope.freq_base", `\x1b`, "(514 bytes)")
}

func TestQuoteInput(t *testing.T) {
	if got := quoteInput("llama"); got != `"llama"` {
		t.Errorf(`quoteInput("llama") = %s`, got)
	}
	long := strings.Repeat("é", 100) // 200 bytes: the cut must fall on a rune boundary
	got := quoteInput(long)
	if want := `"` + strings.Repeat("é", 40) + `"… (200 bytes)`; got != want {
		t.Errorf("quoteInput(100 é) = %s, want %s", got, want)
	}
	if got := (&Error{Source: "GGUF", Field: "a\x00b", Msg: "x\ny"}).Error(); got != `GGUF: "a\x00b": x\ny` {
		t.Errorf("Error() = %s", got)
	}
}
