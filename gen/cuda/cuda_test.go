package cuda_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// longFactors returns n longrope factors "[a, a+d, …]".
func longFactors(n int, a, d float64) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatFloat(a+d*float64(i), 'g', -1, 64))
	}
	b.WriteString("]")
	return b.String()
}

// testSpecs are the specs of the compile check and the host-emulation
// test: every RoPE layout and scaling family, causal ALiBi with a
// non-power-of-two head count, both rpe_bias rules, every absolute
// encoding, rpe_full and xl, and f16/bf16 storage (M-RoPE and Llama 4's
// ScaleQ included).
var testSpecs = []string{
	"name: rope_half\nencoding: rope\nhead_dim: 64\nlayout: half\n",
	"name: rope_il_partial\nencoding: rope\nhead_dim: 48\nrotary_dim: 24\nlayout: interleaved\n",
	"name: rope_half_partial\nencoding: rope\nhead_dim: 40\nrotary_dim: 20\nlayout: half\n",
	"name: rope_yarn\nencoding: rope\nhead_dim: 64\nlayout: half\nbase: 1000000\nscaling: {type: yarn, factor: 4, original_max_position: 4096}\n",
	"name: rope_dynamic\nencoding: rope\nhead_dim: 32\nlayout: interleaved\nscaling: {type: dynamic, factor: 2, original_max_position: 64}\n",
	"name: rope_longrope\nencoding: rope\nhead_dim: 16\nlayout: half\nmax_position: 131072\nscaling: {type: longrope, factor: 32, original_max_position: 4096, short_factor: " +
		longFactors(8, 1, 0.25) + ", long_factor: " + longFactors(8, 1.5, 2) + "}\n",
	"name: rope_llama3\nencoding: rope\nhead_dim: 64\nlayout: half\nbase: 500000\nscaling: {type: llama3, factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position: 8192}\n",
	"name: alibi6\nencoding: alibi\nheads: 6\n",
	"name: alibi_bidir\nencoding: alibi\nheads: 4\ncausal: false\n",
	"name: rpe_t5\nencoding: rpe_bias\nheads: 3\nbuckets: {num: 32, max_distance: 128, bidirectional: true}\n",
	"name: rpe_clamp\nencoding: rpe_bias\nheads: 2\nr_max: 5\n",
	"name: sin512\nencoding: sinusoidal\nd_model: 512\n",
	"name: sin_odd\nencoding: sinusoidal\nd_model: 14\n",
	"name: alg\nencoding: algebraic\nd_model: 24\nmax_len: 100\n",
	"name: bin\nencoding: binary\nd_model: 16\nmax_len: 1000\n",
	"name: learned\nencoding: learned\nd_model: 20\nmax_len: 50\n",
	"name: mix\nencoding: mixture\nd_model: 18\nmax_len: 40\n",
	"name: rope_f16\nencoding: rope\nhead_dim: 64\nlayout: half\ndtype: f16\n",
	"name: rope_il_bf16\nencoding: rope\nhead_dim: 32\nlayout: interleaved\ndtype: bf16\nscaling: {type: dynamic, factor: 2, original_max_position: 64}\n",
	"name: alibi_bf16\nencoding: alibi\nheads: 6\ndtype: bf16\n",
	"name: rpe_f16\nencoding: rpe_bias\nheads: 3\nbuckets: {num: 32, max_distance: 128, bidirectional: false}\ndtype: f16\n",
	"name: sin_f16\nencoding: sinusoidal\nd_model: 64\ndtype: f16\n",
	"name: mix_bf16\nencoding: mixture\nd_model: 18\nmax_len: 40\ndtype: bf16\n",
	// 16-bit M-RoPE (three axes, consecutive sections) and Llama 4's ScaleQ.
	"name: mrope_bf16\nencoding: rope\nhead_dim: 32\nlayout: half\nmax_position: 64\nmrope_section: [4, 6, 6]\ndtype: bf16\n",
	"name: temp_f16\nencoding: rope\nhead_dim: 24\nlayout: interleaved\nattn_temperature: {floor_scale: 3, attn_scale: 0.25}\ndtype: f16\n",
	// rpe_full and xl: the specs of gen/relative/testdata (rpefull64,
	// rpefull_r1, rpefull_wide, xl6, xl64; head widths with and without the
	// 128-bit path, r_max 1) and f16/bf16 storage. hostemu_rel_test.go adds
	// wider heads and longer rows.
	"name: rpefull64\nencoding: rpe_full\nhead_dim: 64\nr_max: 128\n",
	"name: rpefull_r1\nencoding: rpe_full\nhead_dim: 5\nr_max: 1\n",
	"name: rpefull_wide\nencoding: rpe_full\nhead_dim: 12\nr_max: 700\n",
	"name: xl6\nencoding: xl\nhead_dim: 6\nbase: 500\n",
	"name: xl64\nencoding: xl\nhead_dim: 64\nbase: 10000\n",
	"name: rpefull_f16\nencoding: rpe_full\nhead_dim: 24\nr_max: 4\ndtype: f16\n",
	"name: xl_bf16\nencoding: xl\nhead_dim: 16\ndtype: bf16\n",
}

// derive parses and derives one test spec (targets: cuda only).
func derive(t testing.TB, y string) family.Derived {
	t.Helper()
	s, err := spec.Parse("test/"+strings.SplitN(strings.TrimPrefix(y, "name: "), "\n", 2)[0]+".yaml", []byte(y+"targets: [cuda]\n"))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, y)
	}
	c, err := gen.Derive(s)
	if err != nil {
		t.Fatalf("derive %s: %v", s.Name, err)
	}
	return c
}

// write emits c's CUDA files into a fresh directory and returns it.
func write(t testing.TB, c family.Derived) string {
	t.Helper()
	files, err := c.CUDAFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%s: %d files, want 2", c.Input().Name, len(files))
	}
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFilesHeaderAndDeterminism(t *testing.T) {
	for _, y := range testSpecs {
		c := derive(t, y)
		a, err := c.CUDAFiles()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := c.CUDAFiles()
		for i, f := range a {
			if string(f.Data) != string(b[i].Data) {
				t.Errorf("%s: output is not deterministic", f.Name)
			}
			first, _, _ := strings.Cut(string(f.Data), "\n")
			if want := "// Code generated by posenc from " + c.Input().File + ". DO NOT EDIT."; first != want {
				t.Errorf("%s: first line %q, want %q", f.Name, first, want)
			}
		}
		if !strings.Contains(string(a[1].Data), "cudaError_t posenc_"+c.Input().Name+"_") {
			t.Errorf("%s: header declares no launcher", a[1].Name)
		}
	}
	// No cuda target: no files.
	s, err := spec.Parse("x.yaml", []byte("name: x\nencoding: alibi\nheads: 2\ntargets: [go]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := gen.Derive(s)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := c.CUDAFiles(); f != nil || err != nil {
		t.Errorf("Files without the cuda target = %v, %v; want nil, nil", f, err)
	}
}

// needClang skips t where clang is missing, or fails it when
// POSENC_REQUIRE_CLANG is set (CI's).
func needClang(t *testing.T) {
	t.Helper()
	if _, ok := cuda.Clang(); !ok {
		if os.Getenv("POSENC_REQUIRE_CLANG") != "" {
			t.Fatal("clang not found and POSENC_REQUIRE_CLANG is set")
		}
		t.Skip("clang not found")
	}
}

// TestCompilePTX compiles every test spec to PTX with clang (no CUDA SDK).
// It is skipped when clang is missing unless POSENC_REQUIRE_CLANG is set.
func TestCompilePTX(t *testing.T) {
	needClang(t)
	for _, y := range testSpecs {
		c := derive(t, y)
		t.Run(c.Input().Name, func(t *testing.T) {
			t.Parallel() // one clang process per spec
			compilePTXChecks(t, c)
		})
	}
}

// compilePTXChecks is TestCompilePTX for one spec.
func compilePTXChecks(t *testing.T, c family.Derived) {
	dir := write(t, c)
	ptx, err := cuda.CompilePTX(dir, c.Input().Name+".cu")
	if err != nil {
		t.Error(err)
		return
	}
	if !strings.Contains(ptx, ".entry") || !strings.Contains(ptx, ".target "+cuda.PTXArch) {
		t.Errorf("%s: PTX has no kernel entry for %s", c.Input().Name, cuda.PTXArch)
	}
	// The 128-bit path is there where the layout allows it (loads
	// through const __restrict__ pointers go to the read-only path,
	// ld.global.nc).
	cu, err := os.ReadFile(filepath.Join(dir, c.Input().Name+".cu"))
	if err != nil {
		t.Fatal(err)
	}
	if vecOK := strings.Contains(string(cu), "_kernel<kVec>,"); vecOK && !strings.Contains(ptx, "ld.global.v4") && !strings.Contains(ptx, "ld.global.nc.v4") {
		t.Errorf("%s: no 128-bit loads in the PTX", c.Input().Name)
	}
}

// TestZooPTX compiles the CUDA output of every zoo spec that targets cuda,
// and bf16 copies of llama31_8b (rope), bloom_7b1 (alibi) and t5_base
// (rpe_bias), whose attention adds the tensor-core kernel, and checks
// that no kernel keeps anything in local memory (PTX .local: a lambda
// left as a call with its captures, an array indexed at run time, a
// choice between a global and a local lvalue).
func TestZooPTX(t *testing.T) {
	needClang(t)
	zoo, err := spec.Zoo()
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zoo {
		if z.Name == "llama31_8b" || z.Name == "bloom_7b1" || z.Name == "t5_base" {
			c := *z
			c.Name, c.DType = z.Name+"_bf16", "bf16"
			zoo = append(zoo, &c)
		}
	}
	for _, s := range zoo {
		if !s.HasTarget(spec.TargetCUDA) {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel() // one clang process per spec
			c, err := gen.Derive(s)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			ptx, err := cuda.CompilePTX(write(t, c), s.Name+".cu")
			if err != nil {
				t.Fatal(err)
			}
			if k := localMemoryKernels(ptx); len(k) > 0 {
				t.Errorf("%s: local memory in %s", s.Name, strings.Join(k, ", "))
			}
		})
	}
}

// localMemoryKernels returns the entry points (and device functions left
// as calls) of ptx that declare local memory (a .local state space:
// spilled or address-taken variables).
func localMemoryKernels(ptx string) []string {
	var names []string
	entry := ""
	for _, line := range strings.Split(ptx, "\n") {
		if i := strings.Index(line, ".entry "); i >= 0 {
			entry = strings.TrimSuffix(strings.TrimSpace(line[i+len(".entry "):]), "(")
		} else if i := strings.Index(line, ".func "); i >= 0 {
			entry = strings.TrimSuffix(strings.TrimSpace(line[i+len(".func "):]), "(")
		} else if strings.Contains(line, ".local ") && strings.Contains(line, "__local_depot") {
			names = append(names, entry)
		}
	}
	return names
}

// approxRe matches the PTX of the approximate intrinsics -use_fast_math
// substitutes for sincosf and expf (__sincosf, __expf).
var approxRe = regexp.MustCompile(`\b(sin|cos|ex2|lg2)\.approx`)

// TestFastMathPTX compiles every test spec as nvcc's -use_fast_math would
// (cuda.FastMathFlags: clang's fast-math switches and __USE_FAST_MATH__,
// with which the prelude maps sincosf and expf to the approximate
// intrinsics, as nvcc's headers do) and checks that no kernel computes
// through an approximate sin, cos or exp. Then it checks that the check
// can fail: the same source with sincos_angle calling sincosf, and with
// the softmax's posenc_expf guard removed, does show them.
func TestFastMathPTX(t *testing.T) {
	needClang(t)
	t.Run("specs", func(t *testing.T) {
		for _, y := range testSpecs {
			c := derive(t, y)
			t.Run(c.Input().Name, func(t *testing.T) {
				t.Parallel() // one clang process per spec
				dir := write(t, c)
				ptx, err := cuda.CompilePTXWith(dir, c.Input().Name+".cu", cuda.FastMathFlags...)
				if err != nil {
					t.Fatal(err)
				}
				if m := approxRe.FindString(ptx); m != "" {
					t.Errorf("%s: PTX under fast math has %s", c.Input().Name, m)
				}
			})
		}
	})
	// The mutations: each must bring an approximate instruction back.
	for _, m := range []struct{ yaml, old, new string }{
		{testSpecs[0], "const float r = (float)rd, z = r * r;", "float sf, cf;\n\tsincosf((float)rd, &sf, &cf);\n\tconst float r = (float)rd + 0.0f * (sf + cf), z = r * r;\n\t*s = sf;\n\t*c = cf;\n\treturn;"},
		{"name: alibi6\nencoding: alibi\nheads: 6\n", "#define expf posenc_expf", ""},
	} {
		c := derive(t, m.yaml)
		dir := write(t, c)
		cu := filepath.Join(dir, c.Input().Name+".cu")
		src, err := os.ReadFile(cu)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), m.old) {
			t.Fatalf("%s: mutation target %q not in the .cu", c.Input().Name, m.old)
		}
		if err := os.WriteFile(cu, []byte(strings.Replace(string(src), m.old, m.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		ptx, err := cuda.CompilePTXWith(dir, c.Input().Name+".cu", cuda.FastMathFlags...)
		if err != nil {
			t.Fatal(err)
		}
		if !approxRe.MatchString(ptx) {
			t.Errorf("%s: the mutated kernel (%q) shows no approximate instruction: the check cannot fail", c.Input().Name, m.old)
		}
	}
}
