package cuda_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// attnSpecs are specs whose .cu has the attention form beyond the rope ones
// of testSpecs: ALiBi (causal, a non-power-of-two head count), both
// rpe_bias rules with head_dim, one of them odd, rpe_full with an odd head
// dim and three buckets (most keys clamped) and with 139 (q·aK per key,
// not per bucket), xl with head dim 10, and f32 M-RoPE (three axes in
// consecutive sections; Qwen3-VL's interleaved sections over an interleaved
// layout with partial rotary; two axes with per-axis frequencies).
var attnSpecs = []string{
	"name: alibi_attn\nencoding: alibi\nheads: 6\nhead_dim: 24\n",
	"name: rpe_t5_attn\nencoding: rpe_bias\nheads: 4\nhead_dim: 13\nbuckets: {num: 32, max_distance: 128, bidirectional: true}\n",
	"name: rpe_clamp_attn\nencoding: rpe_bias\nheads: 2\nhead_dim: 16\nr_max: 5\n",
	"name: rpefull_attn\nencoding: rpe_full\nhead_dim: 13\nr_max: 2\n",
	"name: xl_attn\nencoding: xl\nhead_dim: 10\nbase: 10000\n",
	// 139 buckets: too many rows of q·aK for the term's table (formed per key).
	"name: rpefull_wide_attn\nencoding: rpe_full\nhead_dim: 8\nr_max: 70\n",
	"name: mrope_attn\nencoding: rope\nhead_dim: 32\nlayout: half\nmax_position: 64\nmrope_section: [4, 6, 6]\n",
	"name: mrope_il_attn\nencoding: rope\nhead_dim: 40\nrotary_dim: 24\nlayout: interleaved\nmrope_section: [4, 4, 4]\nmrope_interleaved: true\n",
	"name: mrope_vision_attn\nencoding: rope\nhead_dim: 24\nlayout: half\nmrope_section: [6, 6]\nmrope_freqs: per_axis\n",
}

// TestAttnTiles checks the tile sizes of every head dim a spec may have:
// Rows·hd ≤ 2048, Keys a power of two in [8, 32], the tiles within the
// shared-memory budget.
func TestAttnTiles(t *testing.T) {
	for hd := 1; hd <= 1024; hd++ {
		r, k, err := cuda.AttnTiles(hd)
		if err != nil {
			t.Fatal(err)
		}
		if r < 1 || (r > 1 && r*hd > 2048) || k < 8 || k > 32 || k&(k-1) != 0 || 4*(r*hd+k*(hd+1)+r*k) > 40<<10 {
			t.Errorf("hd %d: rows %d, keys %d", hd, r, k)
		}
	}
	// rpe_full and xl (a second query tile) get no attention form past
	// these head dims (docs/design/attention.md, "Blocks").
	for _, c := range []struct {
		fam string
		hd  int
		ok  bool
	}{{"rpe_full", 1136, true}, {"rpe_full", 1137, false}, {"xl", 1022, true}, {"xl", 1024, false}, {"xl", 64, true}} {
		if got := cuda.HasAttentionTiles(c.fam, c.hd); got != c.ok {
			t.Errorf("HasAttentionTiles(%q, %d) = %v, want %v", c.fam, c.hd, got, c.ok)
		}
	}
}

// TestAttentionPTX compiles the attention specs to PTX, plain and as
// -use_fast_math would (no approximate exp may appear), and checks their
// launchers (the paged one too) are declared.
func TestAttentionPTX(t *testing.T) {
	needClang(t)
	for _, y := range append(attnSpecs, testSpecs[0], testSpecs[4], mmaSpecs[0], mmaSpecs[3]) {
		c := derive(t, y)
		dir := write(t, c)
		name := c.Input().Name
		h, err := os.ReadFile(filepath.Join(dir, name+".cuh"))
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range []string{"_attention(", "_attention_paged("} {
			if !strings.Contains(string(h), "posenc_"+name+fn) {
				t.Errorf("%s: no %s launcher in the .cuh", name, fn)
			}
		}
		for _, flags := range [][]string{nil, cuda.FastMathFlags} {
			ptx, err := cuda.CompilePTXWith(dir, name+".cu", flags...)
			if err != nil {
				t.Error(err)
				continue
			}
			if !strings.Contains(ptx, "attention_kernel") || !strings.Contains(ptx, "attention_combine_kernel") {
				t.Errorf("%s: PTX lacks the attention kernels", name)
			}
			bf16 := strings.Contains(y, "dtype: bf16")
			for _, op := range []string{"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
				"redux.sync.or.b32", "cvt.rn.bf16x2.f32", "cp.async.cg.shared.global", "cp.async.wait_all"} {
				if bf16 != strings.Contains(ptx, op) {
					t.Errorf("%s: %s in the PTX: %v, want %v (bf16 storage: the tensor-core kernel)", name, op, !bf16, bf16)
				}
			}
			// Indexed shuffles: the tensor-core kernel's positions, and
			// the decode kernel's lane turn of a half-layout rope key (its
			// partner dims from another lane; not M-RoPE's, staged).
			laneTurn := strings.Contains(y, "layout: half") && !strings.Contains(y, "mrope")
			if want := bf16 || laneTurn; want != strings.Contains(ptx, "shfl.sync.idx.b32") {
				t.Errorf("%s: shfl.sync.idx.b32 in the PTX: %v, want %v (the tensor-core kernel, or the lane turn of half rope)", name, !want, want)
			}
			if m := approxRe.FindString(ptx); m != "" {
				t.Errorf("%s: PTX under %v has %s", name, flags, m)
			}
		}
	}
}

// TestAttentionMMAMinBlocksPTX checks that POSENC_ATTN_MMA_MIN_BLOCKS
// reaches the tensor-core kernel's __launch_bounds__ (PTX .minnctapersm,
// which caps ptxas's registers a thread) and that the default asks one
// block.
func TestAttentionMMAMinBlocksPTX(t *testing.T) {
	needClang(t)
	c := derive(t, mmaSpecs[0])
	dir := write(t, c)
	for _, tc := range []struct {
		flags []string
		want  string
	}{{nil, ".minnctapersm 1"}, {[]string{"-DPOSENC_ATTN_MMA_MIN_BLOCKS=3"}, ".minnctapersm 3"}} {
		ptx, err := cuda.CompilePTXWith(dir, c.Input().Name+".cu", tc.flags...)
		if err != nil {
			t.Fatal(err)
		}
		// The tensor-core kernels' entries (one a form), each up to its body.
		n := 0
		for _, e := range strings.Split(ptx, ".entry ")[1:] {
			if !strings.Contains(e[:strings.Index(e, "(")], "_attention_mma_kernel") {
				continue
			}
			n++
			if head := e[:strings.Index(e, "{")]; !strings.Contains(head, tc.want) {
				t.Errorf("%v: the tensor-core kernel's entry lacks %s:\n%s", tc.flags, tc.want, head)
			}
		}
		if n == 0 {
			t.Errorf("%v: no tensor-core kernel in the PTX", tc.flags)
		}
	}
}

// TestAttentionHostEmulation runs the attention specs' attention kernels
// on the CPU through verify.RunAttention (Lib.Verify adds it to the bias
// harness; TestHostEmulation runs that for the rope specs).
func TestAttentionHostEmulation(t *testing.T) {
	// The rope specs: half and interleaved, partial rotary, and dynamic NTK
	// (the max_pos argument).
	for _, y := range append(attnSpecs, testSpecs[0], testSpecs[1], testSpecs[4]) {
		c := derive(t, y)
		t.Run(c.Input().Name, func(t *testing.T) {
			t.Parallel() // each builds and runs its own library
			l := buildLib(t, y)
			r := verify.RunAttention(l.Spec(), l.Attention())
			r.Target = "cuda-host-attention"
			verify.Emit(t, r)
			if r.Cases < 40 {
				t.Errorf("%s: %d attention cases", c.Input().Name, r.Cases)
			}
		})
	}
}

// TestAttentionSplitPolicy runs the attention harness with the kernel
// choice and the split policy forced through the templates' macros:
// "never" never splits (POSENC_ATTN_TARGET_BLOCKS and
// POSENC_ATTN_DECODE_TARGET_BLOCKS 1: the 4100-key decode row walks all
// its tiles in one block), "always" splits every call of enough key tiles
// (2^30: prefill tiles too, and the combine's frames for every row; the
// decode kernel's splits down to one key tile each,
// POSENC_ATTN_DECODE_MIN_CHUNK 1: 129 splits of the 4100-key row);
// "main" runs every call on the main kernel (POSENC_ATTN_DECODE_ROWS 0),
// "decode" every call of a spec that has it on the decode kernel with
// tiles of kDecRows rows (prefill rows too, many tiles), "decode-one-row"
// with tiles of one row (POSENC_ATTN_DECODE_ONE_ROW), "decode-staged" (rope)
// with rotated keys staged through shared memory
// (POSENC_ATTN_DECODE_LANE_TURN 0). ALiBi, rope, rpe_full and M-RoPE (the key entries
// of a split index kids); the kernel choice for ALiBi, rope and M-RoPE.
func TestAttentionSplitPolicy(t *testing.T) {
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	never := "#define POSENC_ATTN_TARGET_BLOCKS 1\n#define POSENC_ATTN_DECODE_TARGET_BLOCKS 1\n"
	always := "#define POSENC_ATTN_TARGET_BLOCKS 1073741824\n#define POSENC_ATTN_DECODE_TARGET_BLOCKS 1073741824\n" +
		"#define POSENC_ATTN_DECODE_MIN_CHUNK 1\n"
	type policy struct{ name, defines string }
	splits := []policy{{"never", never}, {"always", always}}
	kernels := append(splits, policy{"main", "#define POSENC_ATTN_DECODE_ROWS 0\n"},
		policy{"decode", "#define POSENC_ATTN_DECODE_ROWS (1ll << 40)\n#define POSENC_ATTN_DECODE_ONE_ROW 0\n"},
		policy{"decode-one-row", "#define POSENC_ATTN_DECODE_ROWS (1ll << 40)\n#define POSENC_ATTN_DECODE_ONE_ROW (1ll << 40)\n"})
	// rpe_full too: its aV enters acc key by key, which the splits carry.
	for _, y := range []string{attnSpecs[0], testSpecs[0], attnSpecs[3], attnSpecs[5], attnSpecs[6]} {
		ps := splits
		if y == attnSpecs[0] || y == testSpecs[0] || y == attnSpecs[6] {
			ps = kernels
		}
		if y == testSpecs[0] {
			// Rope's rotated keys staged through shared memory, as M-RoPE's
			// are, not turned in the lanes.
			ps = append(ps[:len(ps):len(ps)], policy{"decode-staged", "#define POSENC_ATTN_DECODE_LANE_TURN 0\n"})
		}
		for _, p := range ps {
			c := derive(t, y)
			t.Run(c.Input().Name+"/"+p.name, func(t *testing.T) {
				t.Parallel() // each builds and runs its own library
				l := buildDefined(t, c, p.defines, "")
				r := verify.RunAttention(l.Spec(), l.Attention())
				r.Target = "cuda-host-attention-" + p.name
				verify.Emit(t, r)
			})
		}
	}
}

// TestMRoPEAttentionSignatures checks the M-RoPE launchers' parameters:
// qids and kids after v (after the caches when paged), as the Go API's
// Attention and AttentionPaged; the rotated form takes qids only; no
// max_pos.
func TestMRoPEAttentionSignatures(t *testing.T) {
	c := derive(t, attnSpecs[6])
	files, err := c.CUDAFiles()
	if err != nil {
		t.Fatal(err)
	}
	h := string(files[1].Data)
	T := "posenc_mrope_attn_t"
	for _, want := range []string{
		"posenc_mrope_attn_attention(" + T + " *out, const " + T + " *q, const " + T + " *k, const " + T + " *v, " +
			"const int *qids, const int *kids, const int *qpos, const int *kpos, int lq, int lk, int qheads, int kvheads, " +
			"float scale, int causal, int window, cudaStream_t stream);",
		"posenc_mrope_attn_attention_rotated(" + T + " *out, const " + T + " *q, const " + T + " *k, const " + T + " *v, " +
			"const int *qids, const int *qpos, const int *kpos, int lq, int lk, int qheads, int kvheads, " +
			"float scale, int causal, int window, cudaStream_t stream);",
		"posenc_mrope_attn_attention_paged(" + T + " *out, const " + T + " *q, const " + T + " *k_cache, const " + T + " *v_cache, " +
			"const int *qids, const int *kids, const int *qpos, const int *q_start, const int *slots, const int *kpos, const int *k_start, " +
			"int lq, int lk, int nseq, long long cache_slots, int qheads, int kvheads, float scale, int causal, int window, cudaStream_t stream);",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("%s lacks\n%s", files[1].Name, want)
		}
	}
}

// buildDefined writes c's CUDA files with defines (#define lines) put
// before the .cu's source, checks that the source holds want (when not
// empty), and builds the host-emulated library, closed when t ends.
func buildDefined(t *testing.T, c family.Derived, defines, want string) *cudahost.Lib {
	t.Helper()
	cu := filepath.Join(write(t, c), c.Input().Name+".cu")
	src, err := os.ReadFile(cu)
	if err != nil {
		t.Fatal(err)
	}
	if want != "" && !strings.Contains(string(src), want) {
		t.Fatalf("%s: the .cu has no %s", c.Input().Name, want)
	}
	if err := os.WriteFile(cu, append([]byte(defines), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := cudahost.Build(c.Input(), cu)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
