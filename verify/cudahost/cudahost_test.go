package cudahost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// emuProgram exercises the emulator without any generated code: a block
// reduction through warp shuffles and shared memory across several
// barriers, a grid of several blocks, and the f16/bf16 conversions at
// their rounding edge cases.
const emuProgram = `#include "posenc_cuda_host.h"
#include <cstdio>

__global__ void reduce(const float *x, float *out, int n) {
	__shared__ float red[32];
	float v = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		v += x[i];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	v = (int)threadIdx.x < (int)(blockDim.x >> 5) ? red[threadIdx.x] : 0.0f;
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if (threadIdx.x == 0)
		out[blockIdx.x] = v;
}

int main() {
	static float x[10000], out[4];
	for (int i = 0; i < 10000; ++i)
		x[i] = (float)(i % 7);
	posenc_host::launch(dim3(4), dim3(256), [&]() { reduce(x, out, 10000); });
	std::printf("sum %g\n", (double)(out[0] + out[1] + out[2] + out[3]));
	const float f16in[] = {1.0f, 65504.0f, 65520.0f, 65519.0f, 5.960464477539063e-08f, 2.98023223876953125e-08f,
	                       4.470348358154297e-08f, 1.00048828125f, 1.000732421875f, -2.5f};
	for (float f : f16in)
		std::printf("f16 %04x %.9g\n", __half_as_ushort(__float2half_rn(f)), (double)__half2float(__float2half_rn(f)));
	const float bfin[] = {1.0f, 1.00390625f, 1.01171875f, 3.0e38f, -0.0f};
	for (float f : bfin)
		std::printf("bf16 %04x\n", __bfloat16_as_ushort(__float2bfloat16_rn(f)));
	std::printf("err %d\n", (int)cudaGetLastError());
	posenc_host::launch(dim3(1), dim3(2048), [&]() {});
	std::printf("bad %d\n", (int)cudaGetLastError());
	// Dynamic shared memory: over 48 KiB only once the kernel's limit is
	// raised; 0xff bytes as each block starts, shared by its threads.
	static int marker;
	const void *f = &marker;
	unsigned int seen[2] = {0u, 0u};
	auto dyn = [&]() {
		unsigned int *d = reinterpret_cast<unsigned int *>(posenc_host::dynamic_shared());
		if (threadIdx.x == 0) {
			seen[blockIdx.x] = d[16383];
			d[16383] = 7u;
		}
		__syncthreads();
		if (threadIdx.x == 1 && d[16383] != 7u)
			seen[blockIdx.x] = 0u;
	};
	posenc_host::launch(dim3(2), dim3(2), dyn, 64 << 10, f);
	std::printf("dyn over 48 KiB %d\n", (int)cudaGetLastError());
	std::printf("raise %d\n", (int)cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10));
	posenc_host::launch(dim3(2), dim3(2), dyn, 64 << 10, f);
	std::printf("dyn %d %08x %08x\n", (int)cudaGetLastError(), seen[0], seen[1]);
	std::printf("raise past 227 KiB %d\n", (int)cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 228 << 10));
}
`

func TestEmulator(t *testing.T) {
	cxx, ok := CXX()
	if !ok {
		t.Skip("no C++ compiler")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{HeaderName: Header, "emu.cpp": emuProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Both fiber switches: the x86-64 one (where it applies) and ucontext.
	for _, def := range []string{"-DPOSENC_HOST_DEFAULT_SWITCH", "-DPOSENC_HOST_UCONTEXT"} {
		t.Run(def, func(t *testing.T) { runEmuProgram(t, cxx, dir, def) })
	}
}

// runEmuProgram builds emu.cpp in dir with the extra flag def and checks its
// output.
func runEmuProgram(t *testing.T, cxx, dir, def string) {
	exe := filepath.Join(dir, "emu"+def)
	if msg, err := exec.Command(cxx, "-std=c++20", "-O1", def, "-I", dir, "-o", exe, filepath.Join(dir, "emu.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	got, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	// Sum of i%7 over i < 10000: 1428 full cycles of 21 plus 0+1+2+3.
	want := strings.Join([]string{
		"sum 29994",
		"f16 3c00 1",
		"f16 7bff 65504",
		"f16 7c00 inf", // halfway to 65536 rounds to even: Inf
		"f16 7bff 65504",
		"f16 0001 5.96046448e-08", // smallest subnormal
		"f16 0000 0",              // half of it: ties to even (0)
		"f16 0001 5.96046448e-08", // 0.75 of it
		"f16 3c00 1",              // 1 + 2^-11: tie, to even
		"f16 3c01 1.00097656",     // 1 + 1.5·2^-11: up
		"f16 c100 -2.5",
		"bf16 3f80",
		"bf16 3f80", // 1 + 2^-8: tie, to even
		"bf16 3f82", // 1 + 3·2^-8: tie, to even (up)
		"bf16 7f62",
		"bf16 8000",
		"err 0",
		"bad 9", // 2048 threads per block: cudaErrorInvalidConfiguration
		"dyn over 48 KiB 1",
		"raise 0",
		"dyn 0 ffffffff ffffffff", // block 1 starts from 0xff bytes again
		"raise past 227 KiB 1",
	}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("emulator output:\n%s\nwant:\n%s", got, want)
	}
}

// runtimeProgram exercises the emulator's CUDA runtime subset: allocation
// alignment, copies in every direction, memset, an invalid copy kind,
// events and the device query.
const runtimeProgram = `#include "posenc_cuda_host.h"
#include <cstdio>
#include <thread>

int main() {
	float *d = nullptr, *e = nullptr, h[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
	const int mst = (int)cudaMalloc((void **)&d, 4 * sizeof(float));
	std::printf("malloc %d %d\n", mst, (int)((uintptr_t)d % 256));
	cudaMalloc((void **)&e, 4 * sizeof(float));
	void *z = &h;
	const int zst = (int)cudaMalloc(&z, 0);
	std::printf("zero %d %d\n", zst, z == nullptr);
	std::printf("h2d %d\n", (int)cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
	std::printf("d2d %d\n", (int)cudaMemcpy(e, d, sizeof h, cudaMemcpyDeviceToDevice));
	std::printf("memset %d\n", (int)cudaMemset(d, 0, sizeof h));
	const int bst = (int)cudaMemcpy(back, e, sizeof back, cudaMemcpyDeviceToHost);
	std::printf("d2h %d %g %g %g %g\n", bst, back[0], back[1], back[2], back[3]);
	cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost);
	std::printf("zeroed %g\n", back[3]);
	std::printf("kind %d %s\n", (int)cudaMemcpy(back, d, 4, (cudaMemcpyKind)7), cudaGetErrorString(cudaErrorInvalidMemcpyDirection));
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	float ms = -1;
	std::printf("unrecorded %d\n", (int)cudaEventElapsedTime(&ms, a, b));
	cudaEventRecord(a, 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	cudaEventRecord(b, 0);
	cudaEventSynchronize(b);
	const int st = (int)cudaEventElapsedTime(&ms, a, b);
	std::printf("elapsed %d %d\n", st, ms >= 19 && ms < 10000);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	cudaDeviceProp p;
	std::printf("device %d %s\n", (int)cudaGetDeviceProperties(&p, 0), p.name);
	std::printf("sync %d last %d\n", (int)cudaDeviceSynchronize(), (int)cudaGetLastError());
	cudaFree(d);
	cudaFree(e);
	cudaFree(nullptr);
}
`

func TestEmulatorRuntime(t *testing.T) {
	cxx, ok := CXX()
	if !ok {
		t.Skip("no C++ compiler")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{HeaderName: Header, "rt.cpp": runtimeProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "rt")
	if msg, err := exec.Command(cxx, "-std=c++20", "-O1", "-I", dir, "-o", exe, filepath.Join(dir, "rt.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	got, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"malloc 0 0",
		"zero 0 1",
		"h2d 0",
		"d2d 0",
		"memset 0",
		"d2h 0 1 2 3 4",
		"zeroed 0",
		"kind 21 invalid copy direction for memcpy",
		"unrecorded 600",
		"elapsed 0 1",
		"device 0 host emulation (posenc_cuda_host.h, CPU)",
		"sync 0 last 0",
	}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("runtime program output:\n%s\nwant:\n%s", got, want)
	}
}
