package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Not a terminal: one plain line per step, as posenc always printed.
func TestProgressPlain(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 2)
	if p.tty {
		t.Fatal("a bytes.Buffer taken for a terminal")
	}
	p.Step("testing %d packages (%s)", 3, "native")
	p.Printf("t5_base cuda-host: %s\n", "a failure")
	p.Step("CUDA %s", "t5_base")
	p.Done()
	p.Done()
	want := "posenc: testing 3 packages (native)\nposenc: t5_base cuda-host: a failure\nposenc: CUDA t5_base\n"
	if b.String() != want {
		t.Errorf("plain progress:\n%q\nwant:\n%q", b.String(), want)
	}
}

// A terminal: one status line rewritten in place, lasting lines printed
// above it, nothing left at the end.
func TestProgressTTY(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, tty: true, total: 2, start: time.Now()}
	p.Printf("before any step")
	p.Step("generating 1 packages")
	p.Printf("llama2_7b: a warning")
	p.Step("CUDA llama2_7b (cuda-gpu)")
	p.Done()
	status := func(k int, what string) string {
		return `\rposenc \[` + string(rune('0'+k)) + `/2\] ` + regexp.QuoteMeta(what) + `  \d+s\x1b\[K`
	}
	re := regexp.MustCompile(`^posenc: before any step\n` +
		status(1, "generating 1 packages") +
		`\r\x1b\[Kposenc: llama2_7b: a warning\n` +
		status(1, "generating 1 packages") +
		status(2, "CUDA llama2_7b (cuda-gpu)") +
		`\r\x1b\[K$`)
	if !re.MatchString(b.String()) {
		t.Errorf("terminal progress:\n%q\ndoes not match\n%s", b.String(), re)
	}
}

// The status line never wraps: the step's text is cut to the width.
func TestProgressTTYWidth(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, tty: true, width: 40, total: 12, start: time.Now()}
	p.Step("%s", strings.Repeat("é", 100))
	line := strings.TrimSuffix(strings.TrimPrefix(b.String(), "\r"), "\x1b[K")
	if n := utf8.RuneCountInString(line); n > 39 || !strings.Contains(line, "…") || !strings.HasPrefix(line, "posenc [1/12] éé") || !regexp.MustCompile(`  \d+s$`).MatchString(line) {
		t.Errorf("status line of %d runes: %q", n, line)
	}
	p.Done()
}

// A regular file gives plain lines (terminals: progress_linux_test.go).
func TestProgressNotInteractive(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := interactive(f); ok {
		t.Error("a regular file taken for a terminal")
	}
	if p := newProgress(f, 1); p.tty {
		t.Error("newProgress on a file renders a status line")
	}
}

func TestProgressElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                          "0s",
		59*time.Second + 999e6:     "59s",
		65 * time.Second:           "1m05s",
		3723 * time.Second:         "1h02m03s",
		26*time.Hour + time.Second: "26h00m01s",
	} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}
