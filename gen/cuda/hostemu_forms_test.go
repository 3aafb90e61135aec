package cuda_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/verify/cudahost"
)

// ropeFormMutations are deliberate bugs in the generated RoPE kernel and
// launchers, each a replacement of one line of the emitted .cu, that the
// verify harness's engine-form cases (verify/harness_rope_forms.go, run by
// Lib.Verify) must catch.
var ropeFormMutations = []struct {
	name, yaml, old, new string
}{
	{"slot map ignored (token t written to row t)", testSpecs[0],
		"dt = slots[t];", "dt = t + 0 * slots[t];"},
	{"head stride ignored (heads HEAD_DIM apart)", testSpecs[0],
		"const long long hoff = h * o.head_stride;", "const long long hoff = h * (long long)kHeadDim;"},
	{"out of place: dims beyond ROTARY_DIM not copied", testSpecs[2], // rope_half_partial
		"it.c0.store(it.row + it.e);\n\t\treturn;", "return;"},
	{"out of place: rotation reads the destination", testSpecs[1], // rope_il_partial
		"const store_t *srow = o.src + (t * o.stride + hoff);", "const store_t *srow = it.row;"},
	{"packed QKV: k heads placed after k_heads q heads", "name: rope_gqa\nencoding: rope\nhead_dim: 16\nlayout: half\n",
		"op(qkv + row_len(q_heads), k_heads, stride, kHeadDim)", "op(qkv + row_len(k_heads), k_heads, stride, kHeadDim)"},
	{"shift applies the attention factor", testSpecs[3], // rope_yarn
		"(const int *)0, 1, delta, (const int *)0, 0, tokens,\n\t                   1.0f, 1.0f,", "(const int *)0, 1, delta, (const int *)0, 0, tokens,\n\t                   kAttention, 1.0f,"},
	{"shift ignores seq_len (default frequencies)", testSpecs[4], // rope_dynamic
		"1.0f, 1.0f, seq_len - 1, stream);", "1.0f, 1.0f, 0 * seq_len, stream);"},
	// 16-bit storage: Lib.Verify's storage-rounded check must catch them too.
	{"f16: slot map ignored", "name: rope_f16\nencoding: rope\nhead_dim: 64\nlayout: half\ndtype: f16\n",
		"dt = slots[t];", "dt = t + 0 * slots[t];"},
	{"bf16 interleaved: packed QKV k heads misplaced", "name: rope_il_bf16\nencoding: rope\nhead_dim: 32\nlayout: interleaved\ndtype: bf16\n",
		"op(qkv + row_len(q_heads), k_heads, stride, kHeadDim)", "op(qkv + row_len(k_heads), k_heads, stride, kHeadDim)"},
	{"bf16: shift with the attention factor", "name: rope_yarn_bf16\nencoding: rope\nhead_dim: 64\nlayout: half\nbase: 1000000\ndtype: bf16\nscaling: {type: yarn, factor: 16, original_max_position: 4096}\n",
		"(const int *)0, 1, delta, (const int *)0, 0, tokens,\n\t                   1.0f, 1.0f,", "(const int *)0, 1, delta, (const int *)0, 0, tokens,\n\t                   kAttention, 1.0f,"},
}

// TestHostEmulationRoPEFormsBroken checks that the harness catches each of
// ropeFormMutations: the mutated .cu still builds, and Lib.Verify reports
// failures.
func TestHostEmulationRoPEFormsBroken(t *testing.T) {
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, m := range ropeFormMutations {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each builds and runs its own library
			c := derive(t, m.yaml)
			dir := write(t, c)
			cu := filepath.Join(dir, c.Input().Name+".cu")
			src, err := os.ReadFile(cu)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(src), m.old); n != 1 {
				t.Fatalf("%s.cu has %d copies of %q, want 1: update the mutation", c.Input().Name, n, m.old)
			}
			if err := os.WriteFile(cu, []byte(strings.Replace(string(src), m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := cudahost.Build(c.Input(), cu)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := l.Verify()
			if r.OK() {
				t.Fatalf("the harness passed the broken kernel (%d cases, max error/bound %.3g)", r.Cases, r.MaxRatio)
			}
			t.Logf("caught: %d failures, first: %s", len(r.Failures), r.Failures[0])
		})
	}
}
