package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotRefusesHostileSpecs: plot validates its spec like gen does, so
// mrope_section entries whose int64 sum wraps around to rotary_dim/2 (they
// used to draw, or fail in gonum with "series has 0 x and 0 y values") and
// specs over 64 MiB are refused with the file, line and field.
func TestPlotRefusesHostileSpecs(t *testing.T) {
	dir := t.TempDir()
	mrope := filepath.Join(dir, "mrope.yaml")
	os.WriteFile(mrope, []byte("name: m\nencoding: rope\nhead_dim: 128\nlayout: half\n"+
		"mrope_section: [4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387968]\n"), 0o644)
	huge := filepath.Join(dir, "huge.yaml")
	os.WriteFile(huge, []byte("name: h\nencoding: alibi\nheads: 3\n#"), 0o644)
	if err := os.Truncate(huge, 65<<20); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, want string }{
		{mrope, mrope + ":5: mrope_section[0]: must be an integer in [1, 64]"},
		{huge, huge + ": input file too large"},
	} {
		out := filepath.Join(dir, "x.png")
		code, _, errs := runCLI("plot", "-o", out, c.spec)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("plot %s: code %d, stderr %q; want code 1 and %q", c.spec, code, errs, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("plot %s wrote %s", c.spec, out)
		}
	}
}
