package cudahost

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/spec"
)

// zooCU generates the zoo spec name and writes its .cu and .cuh into a
// temporary directory; it returns the spec and the .cu's path.
func zooCU(t *testing.T, name string) (*spec.Spec, string) {
	t.Helper()
	s, err := spec.ZooSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	return s, writeCU(t, s)
}

// writeCU generates s into a temporary folder and returns the path of its
// .cu (beside its .cuh).
func writeCU(t *testing.T, s *spec.Spec) string {
	t.Helper()
	files, err := gen.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, f := range files {
		if ext := filepath.Ext(f.Name); ext == ".cu" || ext == ".cuh" {
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%s: %d CUDA files generated, want 2", s.Name, n)
	}
	return filepath.Join(dir, s.Name+".cu")
}

// buildEmulated builds the GPU code path of the .cu at cu with the host
// compiler (the driver nvcc would build, run through the emulator).
func buildEmulated(t *testing.T, s *spec.Spec, cu string) *Lib {
	t.Helper()
	tc, err := GPUEmulatedToolchain()
	if err != nil {
		t.Skip(err)
	}
	l, err := BuildWith(s, cu, tc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestGPUEmulated runs the device-memory driver (cudaMalloc, copies,
// synchronization, events) built with g++ against the emulation header
// through the verify harness for a RoPE, an ALiBi, an rpe_bias and an
// absolute spec of the zoo, and through the bench op (short cases).
func TestGPUEmulated(t *testing.T) {
	for _, name := range []string{"llama2_7b", "gptj_6b", "bloom_7b1", "t5_base", "transformer_base"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each builds and runs its own library
			s, cu := zooCU(t, name)
			l := buildEmulated(t, s, cu)
			if l.Target() != TargetGPUEmulated || !strings.Contains(l.Device(), "emulation") {
				t.Errorf("target %q, device %q", l.Target(), l.Device())
			}
			r := l.Verify()
			if r.Target != TargetGPUEmulated || r.Spec != name || r.Cases < 20 || !r.OK() || r.MaxRatio > 1 {
				t.Errorf("report %s/%s: %d cases, max ratio %g, failures %q", r.Spec, r.Target, r.Cases, r.MaxRatio, r.Failures)
			}

			if name == "bloom_7b1" {
				return // t5_base times the same softmax kernel, on 12 heads instead of 32
			}
			cases := append(BenchCases(s, true), AttentionBenchCases(s, true)...)
			if len(cases) == 0 {
				t.Fatal("no bench cases")
			}
			for _, c := range cases {
				var before [][]float32
				for _, a := range c.fa {
					before = append(before, append([]float32(nil), a...))
				}
				br, err := l.Bench(c, 2)
				if err != nil {
					t.Fatal(err)
				}
				if br.Reps != 2 || !(br.KernelMs > 0) || !(br.CopyMs > 0) || br.Tensor <= 0 || br.Bytes() != 2*br.Tensor {
					t.Errorf("%s %s: %+v", c.Kernel, c.Shape, br)
				}
				for _, v := range []float64{br.KernelGBs(), br.CopyGBs(), br.Ratio()} {
					if !(v > 0) || math.IsInf(v, 0) {
						t.Errorf("%s %s: GB/s or ratio %g", c.Kernel, c.Shape, v)
					}
				}
				if br.Spec != name || br.Target != TargetGPUEmulated || br.Device != l.Device() {
					t.Errorf("%s: ran on %q/%q", c.Kernel, br.Target, br.Device)
				}
				for i, a := range c.fa {
					for j := range a {
						if a[j] != before[i][j] {
							t.Fatalf("%s: Bench modified argument %d", c.Kernel, i)
						}
					}
				}
			}
			if _, err := l.Bench(cases[0], 0); err == nil {
				t.Error("Bench with 0 repetitions did not fail")
			}
			if other, err := spec.ZooSpec("llama2_7b"); err == nil && name != other.Name {
				if _, err := l.Bench(BenchCases(other, true)[0], 1); err == nil {
					t.Error("Bench ran a case of another spec")
				}
			}
		})
	}
}

// TestBenchCases checks the shapes and byte counts of the benches.
func TestBenchCases(t *testing.T) {
	var got []string
	for _, name := range []string{"llama2_7b", "gptj_6b", "bloom_7b1", "bloom_7b1:bf16", "t5_base", "transformer_base"} {
		zoo, dtype, _ := strings.Cut(name, ":")
		s, err := spec.ZooSpec(zoo)
		if err != nil {
			t.Fatal(err)
		}
		s.DType = dtype
		for _, short := range []bool{false, true} {
			for _, c := range append(BenchCases(s, short), AttentionBenchCases(s, short)...) {
				line := fmt.Sprintf("%s %v: %s %s %d %d", name, short, c.Kernel, c.Shape, c.Tokens, c.Tensor)
				if c.ReadOnly {
					line += " read"
				}
				if c.Flops > 0 {
					line += fmt.Sprintf(" flops=%d", c.Flops)
				}
				got = append(got, line)
			}
		}
	}
	want := []string{
		"llama2_7b false: apply tokens=16 heads=32 head_dim=128 16 262144",
		"llama2_7b false: apply_qk tokens=16 q_heads=32 k_heads=32 head_dim=128 16 524288",
		"llama2_7b false: apply tokens=4096 heads=32 head_dim=128 4096 67108864",
		"llama2_7b false: apply_qk tokens=4096 q_heads=32 k_heads=32 head_dim=128 4096 134217728",
		"llama2_7b false: apply_qk tokens=1 q_heads=32 k_heads=8 head_dim=128 1 20480",
		"llama2_7b false: apply_qk tokens=1024 q_heads=32 k_heads=8 head_dim=128 1024 20971520",
		"llama2_7b false: apply_qk tokens=1024 q_heads=32 k_heads=8 head_dim=128 cold(8 buffers) 1024 20971520",
		"llama2_7b false: apply_qk tokens=4096 q_heads=32 k_heads=8 head_dim=128 4096 83886080",
		"llama2_7b false: apply_qk tokens=4096 q_heads=32 k_heads=8 head_dim=128 cold(2 buffers) 4096 83886080",
		"llama2_7b false: apply_qk_strided tokens=16 q_heads=32 k_heads=8 v_heads=8 head_dim=128 16 327680",
		"llama2_7b false: apply_to tokens=16 heads=32 head_dim=128 16 262144",
		"llama2_7b false: apply_to_slots tokens=16 heads=8 head_dim=128 cache_slots=32 pages=16 16 65536",
		"llama2_7b false: shift tokens=16 heads=8 head_dim=128 delta=-512 16 65536",
		"llama2_7b false: apply_head_major tokens=16 heads=32 head_dim=128 16 262144",
		"llama2_7b false: apply_qk_strided tokens=4096 q_heads=32 k_heads=8 v_heads=8 head_dim=128 cold(2 buffers) 4096 83886080",
		"llama2_7b false: apply_to tokens=4096 heads=32 head_dim=128 cold(2 buffers) 4096 67108864",
		"llama2_7b false: apply_to_slots tokens=4096 heads=8 head_dim=128 cache_slots=8192 pages=16 cold(4 buffers) 4096 16777216",
		"llama2_7b false: shift tokens=4096 heads=8 head_dim=128 delta=-512 cold(10 buffers) 4096 16777216",
		"llama2_7b false: apply_head_major tokens=4096 heads=32 head_dim=128 cold(3 buffers) 4096 67108864",
		"llama2_7b false: attention_rotated decode lq=1 lk=32768 q_heads=32 kv_heads=32 head_dim=128 1 1073741824 read",
		"llama2_7b false: attention_rotated decode lq=1 lk=32768 q_heads=32 kv_heads=8 head_dim=128 1 268435456 read",
		"llama2_7b false: attention_rotated decode lq=1 lk=131072 q_heads=32 kv_heads=8 head_dim=128 1 1073741824 read",
		"llama2_7b false: attention_rotated decode lq=1 lk=32768 q_heads=64 kv_heads=8 head_dim=128 1 268435456 read",
		"llama2_7b false: attention decode lq=1 lk=32768 q_heads=32 kv_heads=32 head_dim=128 1 1073741824 read",
		"llama2_7b false: attention decode lq=1 lk=32768 q_heads=32 kv_heads=8 head_dim=128 1 268435456 read",
		"llama2_7b false: attention decode lq=1 lk=131072 q_heads=32 kv_heads=8 head_dim=128 1 1073741824 read",
		"llama2_7b false: attention decode lq=1 lk=32768 q_heads=64 kv_heads=8 head_dim=128 1 268435456 read",
		"llama2_7b false: attention_rotated causal prefill lq=lk=2048 heads=32 head_dim=128 2048 134217728 flops=34376515584",
		"llama2_7b false: attention causal prefill lq=lk=2048 heads=32 head_dim=128 2048 134217728 flops=34376515584",
		"llama2_7b true: apply tokens=16 heads=32 head_dim=128 16 262144",
		"llama2_7b true: apply_qk tokens=16 q_heads=32 k_heads=32 head_dim=128 16 524288",
		"llama2_7b true: apply_qk tokens=1 q_heads=32 k_heads=8 head_dim=128 1 20480",
		"llama2_7b true: apply_qk_strided tokens=16 q_heads=32 k_heads=8 v_heads=8 head_dim=128 16 327680",
		"llama2_7b true: apply_to tokens=16 heads=32 head_dim=128 16 262144",
		"llama2_7b true: apply_to_slots tokens=16 heads=8 head_dim=128 cache_slots=32 pages=16 16 65536",
		"llama2_7b true: shift tokens=16 heads=8 head_dim=128 delta=-512 16 65536",
		"llama2_7b true: apply_head_major tokens=16 heads=32 head_dim=128 16 262144",
		"llama2_7b true: attention decode lq=1 lk=256 q_heads=32 kv_heads=8 head_dim=128 1 2097152 read",
		"llama2_7b true: attention_rotated causal prefill lq=lk=16 heads=32 head_dim=128 16 1048576 flops=2228224",
		// GPT-J rotates 64 of 256 dims: a quarter of the tensor's bytes (apply_to
		// and apply_to_slots write whole heads: dims beyond rotary_dim are copied).
		"gptj_6b false: apply tokens=16 heads=32 head_dim=256 16 131072",
		"gptj_6b false: apply_qk tokens=16 q_heads=32 k_heads=32 head_dim=256 16 262144",
		"gptj_6b false: apply tokens=4096 heads=32 head_dim=256 4096 33554432",
		"gptj_6b false: apply_qk tokens=4096 q_heads=32 k_heads=32 head_dim=256 4096 67108864",
		"gptj_6b false: apply_qk tokens=1 q_heads=32 k_heads=8 head_dim=256 1 10240",
		"gptj_6b false: apply_qk tokens=1024 q_heads=32 k_heads=8 head_dim=256 1024 10485760",
		"gptj_6b false: apply_qk tokens=1024 q_heads=32 k_heads=8 head_dim=256 cold(4 buffers) 1024 10485760",
		"gptj_6b false: apply_qk tokens=4096 q_heads=32 k_heads=8 head_dim=256 4096 41943040",
		"gptj_6b false: apply_qk tokens=4096 q_heads=32 k_heads=8 head_dim=256 cold(2 buffers) 4096 41943040",
		"gptj_6b false: apply_qk_strided tokens=16 q_heads=32 k_heads=8 v_heads=8 head_dim=256 16 163840",
		"gptj_6b false: apply_to tokens=16 heads=32 head_dim=256 16 524288",
		"gptj_6b false: apply_to_slots tokens=16 heads=8 head_dim=256 cache_slots=32 pages=16 16 131072",
		"gptj_6b false: shift tokens=16 heads=8 head_dim=256 delta=-512 16 32768",
		"gptj_6b false: apply_head_major tokens=16 heads=32 head_dim=256 16 131072",
		"gptj_6b false: apply_qk_strided tokens=4096 q_heads=32 k_heads=8 v_heads=8 head_dim=256 cold(2 buffers) 4096 41943040",
		"gptj_6b false: apply_to tokens=4096 heads=32 head_dim=256 cold(2 buffers) 4096 134217728",
		"gptj_6b false: apply_to_slots tokens=4096 heads=8 head_dim=256 cache_slots=8192 pages=16 cold(2 buffers) 4096 33554432",
		"gptj_6b false: shift tokens=4096 heads=8 head_dim=256 delta=-512 cold(5 buffers) 4096 8388608",
		"gptj_6b false: apply_head_major tokens=4096 heads=32 head_dim=256 cold(2 buffers) 4096 33554432",
		"gptj_6b false: attention_rotated decode lq=1 lk=32768 q_heads=32 kv_heads=32 head_dim=256 1 2147483648 read",
		"gptj_6b false: attention_rotated decode lq=1 lk=32768 q_heads=32 kv_heads=8 head_dim=256 1 536870912 read",
		"gptj_6b false: attention_rotated decode lq=1 lk=131072 q_heads=32 kv_heads=8 head_dim=256 1 2147483648 read",
		"gptj_6b false: attention_rotated decode lq=1 lk=32768 q_heads=64 kv_heads=8 head_dim=256 1 536870912 read",
		"gptj_6b false: attention decode lq=1 lk=32768 q_heads=32 kv_heads=32 head_dim=256 1 2147483648 read",
		"gptj_6b false: attention decode lq=1 lk=32768 q_heads=32 kv_heads=8 head_dim=256 1 536870912 read",
		"gptj_6b false: attention decode lq=1 lk=131072 q_heads=32 kv_heads=8 head_dim=256 1 2147483648 read",
		"gptj_6b false: attention decode lq=1 lk=32768 q_heads=64 kv_heads=8 head_dim=256 1 536870912 read",
		"gptj_6b false: attention_rotated causal prefill lq=lk=2048 heads=32 head_dim=256 2048 268435456 flops=68753031168",
		"gptj_6b false: attention causal prefill lq=lk=2048 heads=32 head_dim=256 2048 268435456 flops=68753031168",
		"gptj_6b true: apply tokens=16 heads=32 head_dim=256 16 131072",
		"gptj_6b true: apply_qk tokens=16 q_heads=32 k_heads=32 head_dim=256 16 262144",
		"gptj_6b true: apply_qk tokens=1 q_heads=32 k_heads=8 head_dim=256 1 10240",
		"gptj_6b true: apply_qk_strided tokens=16 q_heads=32 k_heads=8 v_heads=8 head_dim=256 16 163840",
		"gptj_6b true: apply_to tokens=16 heads=32 head_dim=256 16 524288",
		"gptj_6b true: apply_to_slots tokens=16 heads=8 head_dim=256 cache_slots=32 pages=16 16 131072",
		"gptj_6b true: shift tokens=16 heads=8 head_dim=256 delta=-512 16 32768",
		"gptj_6b true: apply_head_major tokens=16 heads=32 head_dim=256 16 131072",
		"gptj_6b true: attention decode lq=1 lk=256 q_heads=32 kv_heads=8 head_dim=256 1 4194304 read",
		"gptj_6b true: attention_rotated causal prefill lq=lk=16 heads=32 head_dim=256 16 2097152 flops=4456448",
		"bloom_7b1 false: softmax heads=32 lq=512 lk=512 512 33554432",
		"bloom_7b1 false: softmax heads=32 lq=1 lk=512 q_offset=511 1 65536",
		"bloom_7b1 false: softmax heads=32 lq=1 lk=4096 q_offset=4095 1 524288",
		"bloom_7b1 false: softmax heads=32 lq=1 lk=32768 q_offset=32767 1 4194304",
		"bloom_7b1 false: attention decode lq=1 lk=32768 q_heads=32 kv_heads=32 head_dim=128 1 1073741824 read",
		"bloom_7b1 false: attention decode lq=1 lk=131072 q_heads=32 kv_heads=32 head_dim=128 1 4294967296 read",
		"bloom_7b1 false: attention causal prefill lq=lk=2048 heads=32 head_dim=128 2048 134217728 flops=34376515584",
		"bloom_7b1 true: softmax heads=32 lq=16 lk=512 16 1048576",
		"bloom_7b1 true: attention decode lq=1 lk=256 q_heads=32 kv_heads=32 head_dim=128 1 8388608 read",
		"bloom_7b1 true: attention causal prefill lq=lk=16 heads=32 head_dim=128 16 1048576 flops=2228224",
		// bf16 storage: half the bytes, and prefill of 8192 tokens too (the
		// tensor cores' case; flops = 4·32·128·8192·8193/2).
		"bloom_7b1:bf16 false: softmax heads=32 lq=512 lk=512 512 16777216",
		"bloom_7b1:bf16 false: softmax heads=32 lq=1 lk=512 q_offset=511 1 32768",
		"bloom_7b1:bf16 false: softmax heads=32 lq=1 lk=4096 q_offset=4095 1 262144",
		"bloom_7b1:bf16 false: softmax heads=32 lq=1 lk=32768 q_offset=32767 1 2097152",
		"bloom_7b1:bf16 false: attention decode lq=1 lk=32768 q_heads=32 kv_heads=32 head_dim=128 1 536870912 read",
		"bloom_7b1:bf16 false: attention decode lq=1 lk=131072 q_heads=32 kv_heads=32 head_dim=128 1 2147483648 read",
		"bloom_7b1:bf16 false: attention causal prefill lq=lk=2048 heads=32 head_dim=128 2048 67108864 flops=34376515584",
		"bloom_7b1:bf16 false: attention causal prefill lq=lk=8192 heads=32 head_dim=128 8192 268435456 flops=549822922752",
		"bloom_7b1:bf16 true: softmax heads=32 lq=16 lk=512 16 524288",
		"bloom_7b1:bf16 true: attention decode lq=1 lk=256 q_heads=32 kv_heads=32 head_dim=128 1 4194304 read",
		"bloom_7b1:bf16 true: attention causal prefill lq=lk=16 heads=32 head_dim=128 16 524288 flops=2228224",
		"t5_base false: softmax heads=12 lq=512 lk=512 512 12582912",
		"t5_base false: softmax heads=12 lq=1 lk=512 q_offset=511 1 24576",
		"t5_base false: softmax heads=12 lq=1 lk=4096 q_offset=4095 1 196608",
		"t5_base false: softmax heads=12 lq=1 lk=32768 q_offset=32767 1 1572864",
		"t5_base false: attention decode lq=1 lk=32768 q_heads=12 kv_heads=12 head_dim=64 1 201326592 read",
		"t5_base false: attention decode lq=1 lk=131072 q_heads=12 kv_heads=12 head_dim=64 1 805306368 read",
		"t5_base false: attention causal prefill lq=lk=2048 heads=12 head_dim=64 2048 25165824 flops=6445596672",
		"t5_base true: softmax heads=12 lq=16 lk=512 16 393216",
		"t5_base true: attention decode lq=1 lk=256 q_heads=12 kv_heads=12 head_dim=64 1 1572864 read",
		"t5_base true: attention causal prefill lq=lk=16 heads=12 head_dim=64 16 196608 flops=417792",
		"transformer_base false: add tokens=16 d_model=512 16 32768",
		"transformer_base false: add tokens=4096 d_model=512 4096 8388608",
		"transformer_base true: add tokens=16 d_model=512 16 32768",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bench cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A kernel with a wrong angle fails the harness under the GPU-mode driver,
// as it does under the host build.
func TestGPUEmulatedBrokenKernel(t *testing.T) {
	s, cu := zooCU(t, "llama2_7b")
	src, err := os.ReadFile(cu)
	if err != nil {
		t.Fatal(err)
	}
	const good, bad = "const float r = (float)rd, z = r * r;", "const float r = (float)rd * 1.0001f, z = r * r;"
	if strings.Count(string(src), good) != 1 {
		t.Fatalf("%s has no single %q to break", cu, good)
	}
	if err := os.WriteFile(cu, []byte(strings.Replace(string(src), good, bad, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	l := buildEmulated(t, s, cu)
	r := l.Verify()
	if r.OK() || r.MaxRatio <= 1 || r.Target != TargetGPUEmulated {
		t.Fatalf("broken kernel passed: %s/%s %d cases, max ratio %g", r.Spec, r.Target, r.Cases, r.MaxRatio)
	}
}

// guardCU is a hand-written .cu for the sinusoidal spec "guard" whose add
// writes one element past x and whose encode writes to its positions.
const guardCU = `typedef float posenc_guard_t;

__global__ void guard_kernel(float *x, int *pos, int n) {
	if (threadIdx.x == 0) {
		if (x)
			x[n] = 1.0f;
		else
			pos[0] = -1;
	}
}

static cudaError_t guard_launch(float *x, int *pos, int n) {
#ifdef POSENC_CUDA_HOST
	posenc_host::launch(dim3(1), dim3(32), [&]() { guard_kernel(x, pos, n); });
#else
	guard_kernel<<<1, 32>>>(x, pos, n);
#endif
	return cudaGetLastError();
}

extern "C" cudaError_t posenc_guard_add(float *x, const int *pos, int tokens, cudaStream_t) {
	return guard_launch(x, (int *)pos, tokens * 8);
}

extern "C" cudaError_t posenc_guard_encode(float *dst, const int *pos, int tokens, cudaStream_t) {
	return guard_launch(nullptr, (int *)pos, tokens * 8);
}
`

// The driver's guard bands catch a write past an array and a write to an
// input, in device memory.
func TestGPUEmulatedGuards(t *testing.T) {
	s, err := spec.Parse("guard.yaml", []byte("name: guard\nencoding: sinusoidal\nd_model: 8\ntargets: [cuda]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cu := filepath.Join(t.TempDir(), "guard.cu")
	if err := os.WriteFile(cu, []byte(guardCU), 0o644); err != nil {
		t.Fatal(err)
	}
	l := buildEmulated(t, s, cu)
	k := l.Absolute()
	for name, f := range map[string]func(){
		"add":    func() { k.Add(make([]float32, 16), []int32{0, 1}) },
		"encode": func() { k.Encode(make([]float32, 8), 3) },
	} {
		msg := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			f()
			return ""
		}()
		if !strings.Contains(msg, "outside its arrays or modified an input") {
			t.Errorf("%s: got %q, want a guard failure", name, msg)
		}
	}
}

// Without nvcc the GPU build fails with an error naming it.
func TestGPUWithoutNVCC(t *testing.T) {
	t.Setenv("NVCC", "posenc-no-such-nvcc")
	if _, err := GPUToolchain(); err == nil || !strings.Contains(err.Error(), "nvcc not found") {
		t.Errorf("GPUToolchain: %v", err)
	}
	s, err := spec.ZooSpec("llama2_7b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildGPU(s, "nonexistent.cu"); err == nil || !strings.Contains(err.Error(), "nvcc not found") {
		t.Errorf("BuildGPU: %v", err)
	}
}

// The one driver source serves both builds: nvcc sees no emulation header
// and the storage conversions are the CUDA headers' host functions.
func TestDriverSourceBothBuilds(t *testing.T) {
	for _, tc := range []struct{ name, dtype, to, from string }{
		{"rope", "f32", "return v;", "return v;"},
		{"rope_h", "f16", "return __float2half_rn(v);", "return __half2float(v);"},
		{"rope_b", "bf16", "return __float2bfloat16_rn(v);", "return __bfloat162float(v);"},
	} {
		s, err := spec.Parse(tc.name+".yaml", []byte("name: "+tc.name+"\nencoding: rope\nhead_dim: 64\nlayout: half\ndtype: "+tc.dtype+"\ntargets: [cuda]\n"))
		if err != nil {
			t.Fatal(err)
		}
		src, err := driverSource(s, "/x/"+tc.name+".cu")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"#ifndef __CUDACC__\n#include \"posenc_cuda_host.h\"\n#endif\n#include \"/x/" + tc.name + ".cu\"",
			"static inline T to_store(float v) { " + tc.to + " }",
			"static inline float from_store(T v) { " + tc.from + " }",
			"cudaMalloc", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
			"cudaDeviceSynchronize", "cudaEventElapsedTime",
		} {
			if !strings.Contains(src, want) {
				t.Errorf("%s: driver lacks %q", tc.name, want)
			}
		}
		if strings.Contains(hostOnlyCut(src), "posenc_host::") {
			t.Errorf("%s: driver uses the emulator's namespace outside #ifndef __CUDACC__, which nvcc builds lack", tc.name)
		}
	}
}

// hostOnlyCut returns src without its #ifndef __CUDACC__ … #endif blocks
// (the driver's host-emulation-only parts, which nest no other block).
func hostOnlyCut(src string) string {
	var b strings.Builder
	for {
		i := strings.Index(src, "#ifndef __CUDACC__")
		if i < 0 {
			return b.String() + src
		}
		b.WriteString(src[:i])
		j := strings.Index(src[i:], "#endif")
		if j < 0 {
			return b.String()
		}
		src = src[i+j+len("#endif"):]
	}
}
