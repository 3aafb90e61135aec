package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInputTooLarge: a spec over MaxInputBytes is refused naming the file
// and the limit, by Load from its size before it is read, and by Parse and
// ParseAll from its length.
func TestInputTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: Load must refuse it by its size, without reading it.
	if err := f.Truncate(MaxInputBytes + 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, load := range []func(string) error{
		func(p string) error { _, err := Load(p); return err },
		func(p string) error { _, err := LoadAll(p); return err },
	} {
		err := load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "64 MiB") {
			t.Errorf("Load of a 65 MiB file: %v, want an error naming %s and 64 MiB", err, path)
		}
	}
	data := []byte("name: a\nencoding: alibi\nheads: 3\n" + strings.Repeat("#", MaxInputBytes))
	for _, parse := range []func() error{
		func() error { _, err := Parse("big.yaml", data); return err },
		func() error { _, err := ParseAll("big.yaml", data); return err },
	} {
		var e *Error
		if err := parse(); !errors.As(err, &e) || e.File != "big.yaml" || !strings.Contains(e.Msg, "64 MiB") {
			t.Errorf("Parse of %d bytes: %v, want an *Error naming the 64 MiB limit", len(data), err)
		}
	}
}

// TestReadInputStream: input that is not a regular file (here /dev/zero,
// endless) is cut off after MaxInputBytes+1 bytes.
func TestReadInputStream(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := ReadInput("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("ReadInput(/dev/zero) = %v, want the 64 MiB limit", err)
	}
}

// TestYAMLNodeLimit: junk lists, flow lists and mappings under the byte
// limit that yaml.v3 would take minutes and gigabytes to parse are refused
// before it runs, at the line where they pass MaxYAMLNodes.
func TestYAMLNodeLimit(t *testing.T) {
	const head = "name: a\nencoding: alibi\nheads: 3\n"
	n := 60 << 20
	// The bound starts at 2 and counts 2 per ':' and ',', 1 per '-'.
	for _, c := range []struct {
		name, src string
		line      int
	}{
		{"block list", head + "slopes:\n" + strings.Repeat("- 1\n", n/4), 4 + 65536 - 10 + 1},
		{"flow list", head + "slopes: [" + strings.Repeat("1,", n/2) + "1]\n", 4},
		{"keys", strings.Repeat("a: 1\n", n/5), 65536 / 2},
		{"documents", strings.Repeat("---\n", n/4), 65535 / 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			for _, parse := range []func() error{
				func() error { _, err := Parse("junk.yaml", []byte(c.src)); return err },
				func() error { _, err := ParseAll("junk.yaml", []byte(c.src)); return err },
			} {
				var e *Error
				if err := parse(); !errors.As(err, &e) || e.Line != c.line || !strings.Contains(e.Msg, "YAML nodes") {
					t.Errorf("got %v, want junk.yaml:%d: more than %d YAML nodes", err, c.line, MaxYAMLNodes)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	// Comment lines and long scalars are not counted: a spec with a large
	// comment still parses.
	src := head + strings.Repeat("# - a, b: [c, d]\n", 1<<14)
	if _, err := Parse("comments.yaml", []byte(src)); err != nil {
		t.Errorf("commented spec: %v", err)
	}
}
