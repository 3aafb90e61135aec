package attention

import (
	"bytes"
	"go/format"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// TestFiles checks the engine's output for each family: two files, the
// same bytes twice, gofmt-clean, the HeadDim constant only where the family
// asks for it, the table argument only for rpe_bias, and an error naming
// the family for an unknown one.
func TestFiles(t *testing.T) {
	s := &spec.Spec{Name: "pkg", File: "pkg.yaml", Heads: 4}
	for _, tc := range []struct {
		term                Term
		headDim, table, rot bool
	}{
		{Term{Family: "rope", What: "rotation"}, false, false, true},
		{Term{Family: "alibi", What: "ALiBi bias", HeadDim: 24}, true, false, false},
		{Term{Family: "rpe_bias", What: "bucket bias", HeadDim: 8}, true, true, false},
		{Term{Family: "xl", What: "Transformer-XL relative terms"}, false, false, false},
	} {
		a, err := Files(s, tc.term)
		if err != nil {
			t.Fatalf("%s: %v", tc.term.Family, err)
		}
		b, _ := Files(s, tc.term)
		if len(a) != 2 || a[0].Name != "pkg_attention.go" || a[1].Name != "pkg_attention_test.go" {
			t.Fatalf("%s: files %v", tc.term.Family, []string{a[0].Name, a[1].Name})
		}
		for i, f := range a {
			if !bytes.Equal(f.Data, b[i].Data) {
				t.Errorf("%s: %s differs between two runs", tc.term.Family, f.Name)
			}
			if g, err := format.Source(f.Data); err != nil || !bytes.Equal(g, f.Data) {
				t.Errorf("%s: %s is not gofmt-clean (%v)", tc.term.Family, f.Name, err)
			}
		}
		src := string(a[0].Data)
		if got := strings.Contains(src, "\nconst HeadDim = "); got != tc.headDim {
			t.Errorf("%s: HeadDim constant emitted = %v, want %v", tc.term.Family, got, tc.headDim)
		}
		if got := strings.Contains(src, "func Attention(out, q, k, v []float32, table []float32,"); got != tc.table {
			t.Errorf("%s: table argument = %v, want %v", tc.term.Family, got, tc.table)
		}
		if got := strings.Contains(src, "func AttentionRotated("); got != tc.rot {
			t.Errorf("%s: AttentionRotated emitted = %v, want %v", tc.term.Family, got, tc.rot)
		}
	}
	if _, err := Files(s, Term{Family: "xl2"}); err == nil || !strings.Contains(err.Error(), `"xl2"`) {
		t.Errorf("unknown family: err = %v, want one naming it", err)
	}
}
