package cudahost

// The compilers and the toolchains that build a generated .cu's driver:
// the host C++ compiler against the emulation header, or nvcc for a GPU.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// CXX returns the C++ compiler Build uses: $CXX when set, else g++ or
// clang++ from PATH; ok is false when none is found.
func CXX() (path string, ok bool) {
	names := []string{"g++", "clang++"}
	if c := os.Getenv("CXX"); c != "" {
		names = []string{c}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, true
		}
	}
	return "", false
}

// NVCC returns the CUDA compiler BuildGPU uses: $NVCC when set, else nvcc
// from PATH, checked by running `nvcc --version`. The error says "nvcc not
// found" when there is none.
func NVCC() (string, error) {
	name := os.Getenv("NVCC")
	if name == "" {
		name = "nvcc"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("cudahost: nvcc not found (%s is not on PATH; install the CUDA toolkit or set $NVCC)", name)
	}
	if out, err := exec.Command(p, "--version").CombinedOutput(); err != nil {
		return "", fmt.Errorf("cudahost: nvcc not found: %s --version: %v\n%s", p, err, out)
	}
	return p, nil
}

// NVCCArch returns the -arch value of GPU builds: $POSENC_NVCC_ARCH when
// set (e.g. sm_90), else "native", the GPU of the building machine (CUDA
// 11.6 or later).
func NVCCArch() string {
	if a := os.Getenv("POSENC_NVCC_ARCH"); a != "" {
		return a
	}
	return "native"
}

// NVCCFlags returns extra nvcc flags of GPU builds, the space-separated
// words of $POSENC_NVCC_FLAGS: e.g. -use_fast_math, to check that the
// kernels keep their bounds when built as ggml builds its CUDA code
// (docs/gpu.md, "Fast math").
func NVCCFlags() []string { return strings.Fields(os.Getenv("POSENC_NVCC_FLAGS")) }

// Toolchain is one way of building the driver: a compiler command line and
// the target its reports carry.
type Toolchain struct {
	// Target names the reports of libraries built with it: Target,
	// TargetGPU or TargetGPUEmulated.
	Target string
	// Emulated is true when the driver runs on the CPU through the
	// host-emulation header.
	Emulated bool
	// Compiler is the compiler's path.
	Compiler string

	src  string                              // the driver's file name
	args func(inc, src, exe string) []string // the compiler's arguments (inc: the directory of HeaderName)
}

// hostFlags are the host compiler's code flags for the driver (C++20,
// -O1: the fibers need no more), which its precompiled header shares
// (pch.go).
var hostFlags = []string{"-std=c++20", "-O1", "-fno-strict-aliasing"}

// hostToolchain is the host C++ compiler with the emulation header.
func hostToolchain(target string) (Toolchain, error) {
	cxx, ok := CXX()
	if !ok {
		return Toolchain{}, errors.New("cudahost: no C++ compiler found (set $CXX)")
	}
	return Toolchain{Target: target, Emulated: true, Compiler: cxx, src: "driver.cpp",
		args: func(inc, src, exe string) []string {
			return append(append([]string(nil), hostFlags...), "-w", "-I", inc, "-o", exe, src)
		}}, nil
}

// HostToolchain builds the driver with the host C++ compiler against the
// emulation header (target cuda-host).
func HostToolchain() (Toolchain, error) { return hostToolchain(Target) }

// GPUEmulatedToolchain builds the GPU code path (the same driver source
// nvcc compiles) with the host C++ compiler against the emulation header,
// for tests on machines without a GPU (target cuda-gpu-emulated).
func GPUEmulatedToolchain() (Toolchain, error) { return hostToolchain(TargetGPUEmulated) }

// GPUToolchain builds the driver with nvcc for the GPU of this machine
// (target cuda-gpu):
//
//	nvcc -O3 -std=c++17 -arch=$(NVCCArch) $(NVCCFlags) -o driver driver.cu
//
// It fails, saying "nvcc not found", when NVCC does.
func GPUToolchain() (Toolchain, error) {
	nvcc, err := NVCC()
	if err != nil {
		return Toolchain{}, err
	}
	return Toolchain{Target: TargetGPU, Compiler: nvcc, src: "driver.cu",
		args: func(_, src, exe string) []string {
			return append(append([]string{"-O3", "-std=c++17", "-arch=" + NVCCArch()}, NVCCFlags()...), "-o", exe, src)
		}}, nil
}
