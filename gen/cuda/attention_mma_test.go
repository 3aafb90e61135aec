package cuda_test

import (
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// mmaSpecs are bf16 specs with the tensor-core kernel: ALiBi (head dim 48,
// whose staged rows do not divide a tile; 6 heads, so 6·lq rows of one KV
// head fill a 64-row tile), T5's buckets (head dim 16, one mma step), rope
// (half layout, its keys rotated inside and rounded to bf16), M-RoPE.
var mmaSpecs = []string{
	"name: alibi_mma\nencoding: alibi\nheads: 6\nhead_dim: 48\ndtype: bf16\n",
	"name: rpe_t5_mma\nencoding: rpe_bias\nheads: 4\nhead_dim: 16\nbuckets: {num: 32, max_distance: 128, bidirectional: true}\ndtype: bf16\n",
	"name: rope_mma\nencoding: rope\nhead_dim: 64\nlayout: half\ndtype: bf16\n",
	"name: mrope_mma\nencoding: rope\nhead_dim: 32\nlayout: half\nmax_position: 64\nmrope_section: [4, 6, 6]\ndtype: bf16\n",
}

// TestAttentionMMA runs verify.RunAttentionStored on the bf16 specs'
// launchers with the kernel forced through the templates' macros: "mma"
// sends every call to the tensor-core kernel (POSENC_ATTN_DECODE_ROWS 0:
// decode calls too), "mma-always" and "mma-never" with every call split
// and none, "main" keeps every call on the FMA kernel (POSENC_ATTN_MMA 0),
// which bf16 prefill no longer reaches by default; "mma-element-loads"
// loads k and v fragments element by element (POSENC_ATTN_MMA_LDMATRIX 0)
// instead of with ldmatrix; "mma-two-parts" splits p into two bf16 parts
// in p·v for every sequence (POSENC_ATTN_MMA_TWO_PART_KEYS 0; by default
// two from 2048 keys, the 4100-key case, and three below, every other); "mma-sync-loads" loads each key tile when
// it is computed (POSENC_ATTN_MMA_ASYNC 0), where by default the next
// tile's k and v come in by cp.async (the emulator's copies land at the
// wait, NaN until then); "mma-64-keys" runs key tiles of 64
// (POSENC_ATTN_MMA_KEYS 64: 64-bit key masks, and dynamic shared memory
// over the 48 KiB a launch gets unasked, which the emulator refuses unless
// the launcher raised the kernel's limit), on every spec; "mma-8-warps"
// tiles of 128 rows (POSENC_ATTN_MMA_WARPS 8, with 64 keys: 100 KiB of
// dynamic shared memory), ALiBi and rope; "mma-2-row-tiles" two m16 tiles
// of rows a warp (POSENC_ATTN_MMA_ROW_TILES 2: 128-row tiles, q's
// fragments loaded from its own shared memory, 84 KiB), on ALiBi (q·k's
// steps in pairs and an odd last one) and rope (keys rotated inside), and
// with 64 keys (134 KiB) on ALiBi. ALiBi's head dim
// 48 takes q·k's odd last step (two matrices a load), T5's 16 that step
// alone.
func TestAttentionMMA(t *testing.T) {
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	const mma = "#define POSENC_ATTN_DECODE_ROWS 0\n"
	type policy struct{ name, defines string }
	all := []policy{
		{"mma", mma},
		{"mma-always", mma + "#define POSENC_ATTN_TARGET_BLOCKS 1073741824\n"},
		{"mma-never", mma + "#define POSENC_ATTN_TARGET_BLOCKS 1\n"},
		{"main", mma + "#define POSENC_ATTN_MMA 0\n"},
		{"mma-element-loads", mma + "#define POSENC_ATTN_MMA_LDMATRIX 0\n"},
		{"mma-two-parts", mma + "#define POSENC_ATTN_MMA_TWO_PART_KEYS 0\n"},
		{"mma-sync-loads", mma + "#define POSENC_ATTN_MMA_ASYNC 0\n"},
		{"mma-2-row-tiles-64-keys", mma + "#define POSENC_ATTN_MMA_ROW_TILES 2\n#define POSENC_ATTN_MMA_KEYS 64\n"},
		{"mma-2-row-tiles", mma + "#define POSENC_ATTN_MMA_ROW_TILES 2\n"},
		{"mma-64-keys", mma + "#define POSENC_ATTN_MMA_KEYS 64\n"},
		{"mma-8-warps", mma + "#define POSENC_ATTN_MMA_KEYS 64\n#define POSENC_ATTN_MMA_WARPS 8\n"},
	}
	rowTiles, keys64, warps8 := all[len(all)-3], all[len(all)-2], all[len(all)-1]
	for i, y := range mmaSpecs {
		ps := []policy{all[0], keys64}
		switch i {
		case 0:
			ps = all
		case 2:
			ps = []policy{all[0], all[3], rowTiles, keys64, warps8}
		}
		for _, p := range ps {
			c := derive(t, y)
			t.Run(c.Input().Name+"/"+p.name, func(t *testing.T) {
				t.Parallel() // each builds and runs its own library
				l := buildDefined(t, c, p.defines, "_attention_mma_kernel")
				r := verify.RunAttentionStored(l.Spec(), l.Attention())
				r.Target = "cuda-host-attention-" + p.name
				verify.Emit(t, r)
				if r.Cases < 40 || r.MaxRatio > 1 {
					t.Errorf("%s: %d cases, max ratio %g", c.Input().Name, r.Cases, r.MaxRatio)
				}
			})
		}
	}
}

// TestAttentionMMAChosen checks, through the emulator's count of mma
// calls (cudahost's TensorCoresUsed), which kernel the launchers pick by
// default: the tensor-core one for a bf16 prefill (contiguous and paged)
// and for one query of a GQA group of 6 heads (not with
// POSENC_ATTN_DECODE_MMA_ROWS 0), the decode kernel for one query of one
// head per KV head, and never the tensor cores when
// POSENC_ATTN_MMA is 0, nor for a q that is not 16-byte aligned; with
// tiles of 128 rows (POSENC_ATTN_MMA_WARPS 8) as by default.
func TestAttentionMMAChosen(t *testing.T) {
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, tc := range []struct {
		name, defines string
		prefill, gqa  bool // the prefill calls' and the GQA decode call's expected answers
	}{
		{"default", "", true, true},
		{"off", "#define POSENC_ATTN_MMA 0\n", false, false},
		{"gqa-decode-fma", "#define POSENC_ATTN_DECODE_MMA_ROWS 0\n", true, false},
		// Tiles of 128 rows: 100 KiB of dynamic shared memory, which the
		// launcher must ask for, or the emulator refuses the launch.
		{"8-warps", "#define POSENC_ATTN_MMA_KEYS 64\n#define POSENC_ATTN_MMA_WARPS 8\n", true, true},
		// Two row tiles a warp: 84 KiB, asked for as well.
		{"2-row-tiles", "#define POSENC_ATTN_MMA_ROW_TILES 2\n", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := derive(t, mmaSpecs[0])
			l := buildDefined(t, c, tc.defines, "_attention_mma_kernel")
			k := l.Attention()
			const heads, hd = 6, 48
			o := verify.AttentionOptions{QHeads: heads, KVHeads: heads, Scale: 0.125, Causal: true}
			r := rand.New(rand.NewPCG(1, 2))
			data := func(n int) []float32 {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				return x
			}
			pos := func(n int) []int32 {
				p := make([]int32, n)
				for i := range p {
					p[i] = int32(i)
				}
				return p
			}
			used := func(what string, want bool) {
				t.Helper()
				got, err := l.TensorCoresUsed()
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s: tensor cores used %v, want %v", what, got, want)
				}
			}
			used("before any call", false)
			const lq, lk = 40, 40
			row := heads * hd
			kv := pos(lk)
			k.Attention(make([]float32, lq*row), data(lq*row), data(lk*row), data(lk*row), nil, pos(lq), kv, o)
			used("prefill", tc.prefill)
			k.Attention(make([]float32, row), data(row), data(lk*row), data(lk*row), nil, []int32{lk - 1}, kv, o)
			used("decode", false)
			// One query over a KV head shared by all 6 heads: 6 rows per KV
			// head, from POSENC_ATTN_DECODE_MMA_ROWS (5) on the tensor cores.
			og := o
			og.KVHeads = 1
			k.Attention(make([]float32, row), data(row), data(lk*hd), data(lk*hd), nil, []int32{lk - 1}, kv, og)
			used("GQA decode", tc.gqa)
			slots := pos(lk)
			k.AttentionPaged(make([]float32, lq*row), data(lq*row), data(lk*row), data(lk*row), nil,
				pos(lq), []int32{0, lq}, slots, kv, []int32{0, lk}, o)
			used("paged prefill", tc.prefill)
			// q one element off 16 bytes, k and v aligned: the tensor-core
			// kernel, which copies q in 128-bit pieces, is not run.
			l.MisalignArrays = 1 << 1
			k.Attention(make([]float32, lq*row), data(lq*row), data(lk*row), data(lk*row), nil, pos(lq), kv, o)
			used("prefill, q misaligned", false)
			l.MisalignArrays = 0
		})
	}
}
