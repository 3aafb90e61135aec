package main

import (
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify/cudahost"
)

// needCXX skips a test of the emulated GPU path on a machine without a
// C++ compiler.
func needCXX(t *testing.T) {
	t.Helper()
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
}

// verify -gpu under POSENC_GPU_EMULATE=1 runs the GPU code path end to end
// on the CPU and says so: its rows are cuda-gpu-emulated, never cuda-gpu.
func TestVerifyGPUEmulated(t *testing.T) {
	needCXX(t)
	t.Setenv(emulateGPUEnv, "1")
	code, out, errs := runCLI("verify", "-gpu", "-targets", "go,cuda", "-zoo", "llama2_7b")
	if code != 0 {
		t.Fatalf("verify -gpu: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, re := range []string{
		`(?m)^llama2_7b\s+cuda-host\s+\d+\s.*\sok$`,
		`(?m)^llama2_7b\s+cuda-gpu-emulated\s+\d+\s.*\sok$`,
		`(?m)^posenc: cuda-gpu-emulated rows: POSENC_GPU_EMULATE=1: .* not on a GPU$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("verify -gpu output lacks %s:\n%s", re, out)
		}
	}
	if regexp.MustCompile(`(?m)\scuda-gpu\s`).MatchString(out) {
		t.Errorf("an emulated run printed a cuda-gpu row:\n%s", out)
	}
	if !strings.Contains(errs, "posenc: CUDA llama2_7b (cuda-gpu-emulated)") {
		t.Errorf("no progress line for the emulated GPU step:\n%s", errs)
	}
}

// bench -gpu under POSENC_GPU_EMULATE=1 times the RoPE launchers and the
// device-to-device copy in the driver, and labels the numbers emulated.
// With POSENC_GPU_LOCK set (where flock exists), it times under that lock.
func TestBenchGPUEmulated(t *testing.T) {
	needCXX(t)
	t.Setenv(emulateGPUEnv, "1")
	lock := runtime.GOOS == "linux" || runtime.GOOS == "darwin"
	if lock {
		t.Setenv(gpuLockEnv, filepath.Join(t.TempDir(), "gpu.lock"))
	}
	code, out, errs := runCLI("bench", "-gpu", "-zoo", "llama2_7b")
	if code != 0 {
		t.Fatalf("bench -gpu: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if lock && !strings.Contains(errs, "waiting for the GPU lock ") {
		t.Errorf("bench -gpu with %s did not take the lock:\n%s", gpuLockEnv, errs)
	}
	num := `\d+\.\d+`
	for _, re := range []string{
		`(?m)^posenc bench -gpu: EMULATED on the CPU \(POSENC_GPU_EMULATE=1: .*\); short sizes, 1 launch per case$`,
		`bytes moved = 2 × the bytes the kernel updates \(MiB column; RoPE with rotary_dim < head_dim: the rotated dims only\)`,
		`(?m)^SPEC\s+TARGET\s+KERNEL\s+SHAPE\s+MiB\s+KERNEL GB/s\s+D2D COPY GB/s\s+× copy\s+TFLOP/s$`,
		`(?m)^llama2_7b\s+cuda-gpu-emulated\s+apply\s+tokens=16 heads=32 head_dim=128\s+0\.25\s+` + num + `\s+` + num + `\s+` + num + `\s+-$`,
		`(?m)^llama2_7b\s+cuda-gpu-emulated\s+apply_qk\s+tokens=16 q_heads=32 k_heads=32 head_dim=128\s+0\.50\s+` + num + `\s+` + num + `\s+` + num + `\s+-$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("bench -gpu output lacks %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "goal") || strings.Contains(out, "tokens=4096") || strings.Contains(out, "attention") {
		t.Errorf("an emulated bench ran the large sizes, judged the goal or timed the attention form without -attention:\n%s", out)
	}
}

// bench -gpu -attention times the attention form's cases only: decode as
// K+V read, causal prefill as TFLOP/s (emulated: the short sizes).
func TestBenchGPUAttentionEmulated(t *testing.T) {
	needCXX(t)
	t.Setenv(emulateGPUEnv, "1")
	code, out, errs := runCLI("bench", "-gpu", "-attention", "-zoo", "llama2_7b", "-zoo", "t5_base")
	if code != 0 {
		t.Fatalf("bench -gpu -attention: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	num := `\d+\.\d+`
	for _, re := range []string{
		`(?m)^SPEC\s+TARGET\s+KERNEL\s+SHAPE\s+MiB\s+KERNEL GB/s\s+D2D COPY GB/s\s+× copy\s+TFLOP/s$`,
		`(?m)^llama2_7b\s+cuda-gpu-emulated\s+attention\s+decode lq=1 lk=256 q_heads=32 kv_heads=8 head_dim=128\s+2\.00\s+` + num + `\s+` + num + `\s+` + num + `\s+-$`,
		`(?m)^llama2_7b\s+cuda-gpu-emulated\s+attention_rotated\s+causal prefill lq=lk=16 heads=32 head_dim=128\s+1\.00\s+` + num + `\s+` + num + `\s+` + num + `\s+` + num + `$`,
		`(?m)^t5_base\s+cuda-gpu-emulated\s+attention\s+decode lq=1 lk=256 q_heads=12 kv_heads=12 head_dim=64\s+1\.50\s+`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("bench -gpu -attention output lacks %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, " apply ") || strings.Contains(out, "softmax") {
		t.Errorf("bench -gpu -attention timed other kernels:\n%s", out)
	}
	if code, _, errs := runCLI("bench", "-attention", "-zoo", "llama2_7b"); code == 0 || !strings.Contains(errs, "-attention") {
		t.Errorf("bench -attention without -gpu: code %d, stderr %q", code, errs)
	}
}

// -gpu without nvcc fails at once, naming nvcc: never a silent pass.
func TestGPUWithoutNVCC(t *testing.T) {
	t.Setenv(emulateGPUEnv, "")
	t.Setenv("NVCC", "posenc-no-such-nvcc")
	for _, cmd := range []string{"verify", "bench"} {
		code, out, errs := runCLI(cmd, "-gpu", "-zoo", "llama2_7b")
		if code != 1 || !strings.Contains(errs, "nvcc not found") || out != "" {
			t.Errorf("%s -gpu without nvcc: code %d\nstdout:\n%s\nstderr:\n%s", cmd, code, out, errs)
		}
	}
}

func TestPrintGPUBenchGoal(t *testing.T) {
	mk := func(kernel string, tokens int, kms, cms float64) cudahost.BenchResult {
		return cudahost.BenchResult{
			BenchCase: cudahost.BenchCase{Kernel: kernel, Shape: "s", Tokens: tokens, Tensor: 1 << 26},
			Spec:      "r", Target: cudahost.TargetGPU, Device: "Some GPU", Reps: 10, KernelMs: kms, CopyMs: cms,
		}
	}
	tc := cudahost.Toolchain{Target: cudahost.TargetGPU, Compiler: "/usr/bin/nvcc"}
	var b strings.Builder
	printGPUBench(&b, []cudahost.BenchResult{mk("apply", 16, 1, 0.1), mk("apply", 4096, 1, 0.9), mk("apply_qk", 4096, 1, 0.8)}, tc, 10)
	out := b.String()
	// 2·64 MiB·10 in 1 ms: 1342.2 GB/s; the copy in 0.8 ms: 1677.7 GB/s.
	for _, re := range []string{
		`posenc bench -gpu: Some GPU \(nvcc -O3 -arch=`,
		`per case 10 launches, then 10 device-to-device copies`,
		`(?m)^r\s+cuda-gpu\s+apply_qk\s+s\s+64\.00\s+1342\.2\s+1677\.7\s+0\.80\s+-$`,
		`(?m)^posenc: RoPE at ≥ 1024 tokens: lowest × copy 0\.80 \(goal ≥ 0\.85: NOT met\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "attention:") {
		t.Errorf("the attention legend without attention rows:\n%s", out)
	}

	// Attention rows: decode reads its 64 MiB once (10 in 1 ms: 671.1 GB/s;
	// the copy moves twice that in 0.5 ms: 2684.4 GB/s, × copy 0.50); the
	// prefill's 10^9 flops 10 times in 1 ms: 10.0 TFLOP/s.
	dec := mk("attention", 1, 1, 0.5)
	dec.ReadOnly = true
	pre := mk("attention", 2048, 1, 0.5)
	pre.Flops = 1e9
	b.Reset()
	printGPUBench(&b, []cudahost.BenchResult{dec, pre}, tc, 10)
	out = b.String()
	for _, re := range []string{
		`(?m)^attention: decode moves the K\+V bytes it reads`,
		`(?m)^r\s+cuda-gpu\s+attention\s+s\s+64\.00\s+671\.1\s+2684\.4\s+0\.50\s+-$`,
		`(?m)^r\s+cuda-gpu\s+attention\s+s\s+64\.00\s+1342\.2\s+2684\.4\s+0\.50\s+10\.0$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
}

// buildDrivers builds several drivers at once; when one fails it returns
// that failure and stops the others (Close removes their build
// directories, which TMPDIR holds here), leaving nothing running.
func TestBuildDriversFailure(t *testing.T) {
	needCXX(t)
	tc, err := cudahost.GPUEmulatedToolchain()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	var cs []*spec.Spec
	for _, name := range []string{"bloom_7b1", "t5_base", "bert_base"} {
		s, err := spec.ZooSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, s)
	}
	// t5_base's package is not generated: its driver cannot compile.
	if _, err := generateAll([]*spec.Spec{cs[0], cs[2]}, dir, false); err != nil {
		t.Fatal(err)
	}
	p := newProgress(io.Discard, 3)
	libs, err := buildDrivers(cs, dir, tc, p)
	p.Done()
	if err == nil || libs != nil || !strings.Contains(err.Error(), "t5_base.cu") {
		t.Fatalf("buildDrivers with t5_base missing: libs %v, err %v", libs, err)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "posenc-cudahost-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("build directories left after the failure: %v (%v)", left, err)
	}

	// All generated: every driver starts, in cs's order.
	if _, err := generateAll(cs[1:2], dir, false); err != nil {
		t.Fatal(err)
	}
	p = newProgress(io.Discard, 3)
	libs, err = buildDrivers(cs, dir, tc, p)
	p.Done()
	if err != nil || len(libs) != len(cs) {
		t.Fatalf("buildDrivers: %d libs, err %v", len(libs), err)
	}
	for i, l := range libs {
		if r := l.Verify(); r.Spec != cs[i].Name || !r.OK() {
			t.Errorf("driver %d: %s/%s ok=%v, want %s", i, r.Spec, r.Target, r.OK(), cs[i].Name)
		}
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}
}
