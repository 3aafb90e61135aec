package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// emulateGPUEnv names the test-only environment variable that makes -gpu
// build the device-memory driver with the host C++ compiler and the
// emulation header instead of nvcc (docs/internals.md): rows and benches
// then carry the target cuda-gpu-emulated, never cuda-gpu.
const emulateGPUEnv = "POSENC_GPU_EMULATE"

// gpuToolchain returns how -gpu builds the CUDA driver: nvcc for the GPU of
// this machine, or, with POSENC_GPU_EMULATE=1, the host compiler against
// the emulation header. Without nvcc the error names it.
func gpuToolchain() (cudahost.Toolchain, error) {
	if os.Getenv(emulateGPUEnv) == "1" {
		return cudahost.GPUEmulatedToolchain()
	}
	return cudahost.GPUToolchain()
}

// gpuLabel describes a toolchain for headers and progress lines.
func gpuLabel(tc cudahost.Toolchain) string {
	if tc.Emulated {
		return emulateGPUEnv + "=1: the GPU code path built with " + filepath.Base(tc.Compiler) + " and run on the CPU by the host emulator, not on a GPU"
	}
	return "nvcc -O3 -arch=" + cudahost.NVCCArch()
}

// cudaSpecs returns the specs whose CUDA output is checked: a CUDA backend
// exists for the encoding, the spec lists the cuda target and -targets (only)
// does not leave it out.
func cudaSpecs(specs []*spec.Spec, only map[string]bool) []*spec.Spec {
	var out []*spec.Spec
	for _, s := range specs {
		if gen.Backends(s.Encoding).CUDA && s.HasTarget(spec.TargetCUDA) && (cudaWanted(only, cudaChecks[0]) || cudaWanted(only, cudaChecks[1])) {
			out = append(out, s)
		}
	}
	return out
}

// verifyCUDA checks the CUDA output of every spec that asks for it, from the
// packages already generated under dir: the PTX compile check with clang
// (target cuda-ptx) and the kernels run on the CPU through host emulation
// against the float64 reference (target cuda-host; f16 and bf16 storage
// under the storage-rounded bounds of Lib.Verify); with gpu set, the same
// kernels run by the driver gpu builds (target cuda-gpu, or
// cuda-gpu-emulated). A missing tool is a failed row, never a silent pass.
func verifyCUDA(specs []*spec.Spec, dir string, only map[string]bool, gpu *cudahost.Toolchain, p *progress) []row {
	var rows []row
	for _, s := range cudaSpecs(specs, only) {
		pkg := filepath.Join(dir, s.Name)
		cu := s.Name + ".cu"
		p.Step("CUDA %s", s.Name)

		if cudaWanted(only, "cuda-ptx") {
			ptx := row{Row: verify.Row{Spec: s.Name, Target: "cuda-ptx"}}
			if _, ok := cuda.Clang(); !ok {
				ptx.Note = "not run: clang not found"
			} else if _, err := cuda.CompilePTX(pkg, cu); err != nil {
				ptx.Cases, ptx.Failures, ptx.Worst = 1, 1, firstLine(err.Error())
			} else {
				ptx.Cases, ptx.Worst = 1, "clang --cuda-gpu-arch="+cuda.PTXArch
			}
			rows = append(rows, ptx)
		}

		if cudaWanted(only, cudahost.Target) {
			host := row{Row: verify.Row{Spec: s.Name, Target: cudahost.Target}}
			if tc, err := cudahost.HostToolchain(); err != nil {
				host.Note = "not run: no C++ compiler for host emulation"
				rows = append(rows, host)
			} else {
				rows = append(rows, runCUDA(s, filepath.Join(pkg, cu), tc, p))
			}
		}
		if gpu != nil {
			p.Step("CUDA %s (%s)", s.Name, gpu.Target)
			rows = append(rows, runCUDA(s, filepath.Join(pkg, cu), *gpu, p))
		}
	}
	return rows
}

// runCUDA builds the driver of the .cu at cuPath with tc, runs the verify
// harness through it and returns the row (a build failure is a failed
// row).
func runCUDA(s *spec.Spec, cuPath string, tc cudahost.Toolchain, p *progress) row {
	lib, err := cudahost.BuildWith(s, cuPath, tc)
	if err != nil {
		p.Printf("%s %s: %v", s.Name, tc.Target, err)
		return row{Row: verify.Row{Spec: s.Name, Target: tc.Target, Cases: 1, Failures: 1, Worst: firstLine(err.Error())}}
	}
	defer lib.Close()
	if tc.Target == cudahost.TargetGPU {
		p.Printf("%s %s: device %s (%s)", s.Name, tc.Target, lib.Device(), gpuLabel(tc))
	}
	r := lib.Verify()
	for i, f := range r.Failures {
		if i == 5 {
			break
		}
		p.Printf("%s %s: %s", s.Name, r.Target, f)
	}
	return row{Row: r.Row()}
}

// cudaSteps is the number of progress steps verifyCUDA takes.
func cudaSteps(specs []*spec.Spec, only map[string]bool, gpu bool) int {
	n := len(cudaSpecs(specs, only))
	if gpu {
		n *= 2
	}
	return n
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// checkGPU fails early, naming nvcc, when -gpu cannot build for a GPU.
func checkGPU(gpu bool) (*cudahost.Toolchain, error) {
	if !gpu {
		return nil, nil
	}
	tc, err := gpuToolchain()
	if err != nil {
		return nil, fmt.Errorf("-gpu: %w", err)
	}
	return &tc, nil
}
