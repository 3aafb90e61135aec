package cuda_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// shapes returns (lq, lk, qOffset) triples as cudahost.RelShapes.
func shapes(sh ...[3]int) []cudahost.RelShape {
	out := make([]cudahost.RelShape, len(sh))
	for i, x := range sh {
		out[i] = cudahost.RelShape{Lq: x[0], Lk: x[1], QOffset: x[2]}
	}
	return out
}

// relWideSpecs exercise the kernels' paths that verify's shapes (lk ≤ 515,
// head_dim ≤ 64) do not reach: several 1024-key tiles with the middle
// range straddling a tile boundary and both clipped ranges present
// (rpefull64 at lk = 2100), several 256-dim chunks of Output (head_dim 300),
// a query row too wide to stage in shared memory (head_dim 4100), and an
// xl head too wide for the __constant__ divisor table (head_dim 8200: the
// divisors come from pow on the device).
var relWideSpecs = []struct {
	yaml   string
	shapes []cudahost.RelShape
	relN   []int
}{
	{"name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		shapes([3]int{3, 2100, 1000}, [3]int{2, 1500, 0}, [3]int{2, 1100, 5000}, [3]int{1, 3000, math.MaxInt32 - 1}), nil},
	{"name: rpe_wide300\nencoding: rpe_full\nhead_dim: 300\nr_max: 40\n",
		shapes([3]int{3, 1300, 600}, [3]int{2, 0, 0}, [3]int{1, 90, 45}), nil},
	{"name: rpe_wide4100\nencoding: rpe_full\nhead_dim: 4100\nr_max: 3\n",
		shapes([3]int{2, 40, 20}, [3]int{1, 7, 0}), nil},
	{"name: xl_wide8200\nencoding: xl\nhead_dim: 8200\nbase: 10000\n",
		shapes([3]int{2, 30, 7}, [3]int{1, 5, 0}), []int{0, 1, 3}},
}

// TestHostEmulationRelWide runs relWideSpecs' shapes on the host-emulated
// rpe_full and xl kernels against the float64 reference, and compiles
// them to PTX.
func TestHostEmulationRelWide(t *testing.T) {
	for _, w := range relWideSpecs {
		c := derive(t, w.yaml)
		t.Run(c.Input().Name, func(t *testing.T) {
			t.Parallel() // each builds and runs its own library
			if _, ok := cuda.Clang(); ok {
				if _, err := cuda.CompilePTX(write(t, c), c.Input().Name+".cu"); err != nil {
					t.Error(err)
				}
			}
			l := buildLib(t, w.yaml)
			r := l.VerifyShapes(w.shapes, w.relN)
			verify.Emit(t, r)
			if r.Cases == 0 {
				t.Errorf("%s: no cases ran", c.Input().Name)
			}
		})
	}
}

// cudaMutations are deliberate bugs in the generated kernels, each a
// replacement of one line of the emitted .cu, that Lib.Verify (the verify
// harness, or the storage check for f16 and bf16) must catch.
var cudaMutations = []struct {
	name, yaml, old, new string
}{
	{"scores middle row sign (p−j read as j−p)", "name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		"aK + (size_t)(kSpan + p - (ja + r)) * kHeadDim", "aK + (size_t)(kSpan - p + (ja + r)) * kHeadDim"},
	{"scores clipped rows swapped", "name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		"j < nh ? s_end[0] : j >= fl ? s_end[1]", "j < nh ? s_end[1] : j >= fl ? s_end[0]"},
	{"output drops the row-0 end bucket", "name: rpefull_r1\nencoding: rpe_full\nhead_dim: 5\nr_max: 1\n",
		"acc = fmaf(wl, ld(aV + x), acc);", "(void)wl;"},
	{"output middle row off by one", "name: rpefull_wide\nencoding: rpe_full\nhead_dim: 12\nr_max: 700\n",
		"ld(aV + (size_t)(kSpan + p - j) * kHeadDim + x)", "ld(aV + (size_t)(kSpan + p - j - 1) * kHeadDim + x)"},
	{"scores write one past the row", "name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
		"for (int j = j0 + tid; j < j1; j += nt) {", "for (int j = j0 + tid; j <= j1; j += nt) {"},
	{"128-bit path uses the wrong element", "name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
		"acc[j & 3] = fmaf(q(x + j), v[j], acc[j & 3]);", "acc[j & 3] = fmaf(q(x + j), v[j & 1], acc[j & 3]);"},
	{"xl u and v swapped", "name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
		"s_qu[x] = qx + ld(u + x);", "s_qu[x] = qx + ld(v + x);"},
	{"xl relative row off by one", "name: xl6\nencoding: xl\nhead_dim: 6\nbase: 500\n",
		"const store_t *ri = r + (size_t)(lq - 1 - i) * kHeadDim;", "const store_t *ri = r + (size_t)(lq - i) * kHeadDim;"},
	{"xl relative angle in f32", "name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
		"sincos_angle((double)(n - 1 - m) / divisor(i), &s, &c);", "sincosf((float)(n - 1 - m) / (float)divisor(i), &s, &c);"},
	{"bf16 rope Inverse rotates forward", "name: rope_il_bf16\nencoding: rope\nhead_dim: 32\nlayout: interleaved\ndtype: bf16\n",
		"s_s[i] = sign * (attn * s);", "s_s[i] = attn * s;"},
	{"f16 rpe_bias AddBias subtracts the bias", "name: rpe_f16\nencoding: rpe_bias\nheads: 3\nbuckets: {num: 32, max_distance: 128, bidirectional: false}\ndtype: f16\n",
		"st(row + j, j < nv ? ld(row + j) + b :", "st(row + j, j < nv ? ld(row + j) - b :"},
}

// TestHostEmulationBroken checks that Lib.Verify catches each of
// cudaMutations: the mutated .cu still builds, and Lib.Verify reports
// failures.
func TestHostEmulationBroken(t *testing.T) {
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	for _, m := range cudaMutations {
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
