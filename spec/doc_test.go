package spec

import (
	"os"
	"strings"
	"testing"
)

// TestDocKeyTables: docs/spec.md gives each encoding's keys in one table
// under its "## <encoding>" heading; a blank line inside a table would end
// it there and show the rest as a table without a header.
func TestDocKeyTables(t *testing.T) {
	data, err := os.ReadFile("../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, enc := range []string{RoPE, ALiBi} { // rpe_bias is described in prose
		start := -1
		for i, l := range lines {
			if l == "## "+enc {
				start = i
				break
			}
		}
		if start < 0 {
			t.Errorf("docs/spec.md: no heading ## %s", enc)
			continue
		}
		// The first table after the heading, up to its first non-table line.
		i := start + 1
		for i < len(lines) && !strings.HasPrefix(lines[i], "|") {
			i++
		}
		rows := map[string]bool{}
		for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			if k, _, ok := strings.Cut(strings.TrimPrefix(lines[i], "| `"), "`"); ok {
				rows[k] = true
			}
		}
		for _, k := range encodingKeys[enc] {
			if !rows[k] {
				t.Errorf("docs/spec.md ## %s: key %s is not in the section's first table (line %d on)", enc, k, start+1)
			}
		}
	}
}
