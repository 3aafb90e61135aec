// Package cudahost runs posenc's generated CUDA kernels through a small
// driver program that serves kernel calls over stdin/stdout. One driver
// source (see driverSource) keeps every tensor in device memory
// (cudaMalloc, cudaMemcpy, cudaDeviceSynchronize, cudaEvents) and builds two
// ways:
//
//   - on the CPU (Build, target "cuda-host"): the system C++ compiler with
//     the host-emulation header posenc_cuda_host.h, which implements that
//     runtime subset and runs CUDA blocks one at a time, their threads as
//     fibers synchronized at __syncthreads;
//   - on a GPU (BuildGPU, target "cuda-gpu"): nvcc, on the real device.
//
// Lib's adapters turn the launchers into verify.RoPEKernels,
// verify.BiasKernels, verify.AbsoluteKernels, verify.RPEFullKernels,
// verify.XLKernels and verify.AttentionKernels, so the verify harness
// checks the CUDA source against the float64 reference, and Lib.Bench times
// launches against a device-to-device copy in the same process.
//
// Like the rest of package verify it never imports the generator: it reads
// the emitted .cu from disk and knows only the launcher contract of
// docs/design (posenc_<name>_<func>, device pointers, the Go API's
// layouts).
package cudahost

import (
	"bufio"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/posenc/posenc/spec"
)

// Header is posenc_cuda_host.h, the host-emulation header.
//
//go:embed posenc_cuda_host.h
var Header string

// HeaderName is the file name the generated drivers include.
const HeaderName = "posenc_cuda_host.h"

// Verify report targets.
const (
	// Target is the target of host-emulated CUDA kernels (Build).
	Target = "cuda-host"
	// TargetGPU is the target of kernels run on a CUDA device (BuildGPU).
	TargetGPU = "cuda-gpu"
	// TargetGPUEmulated is the target of the GPU code path built with the
	// host compiler and run on the CPU (GPUEmulatedToolchain): a check of
	// the driver and the kernels, never GPU numbers.
	TargetGPUEmulated = "cuda-gpu-emulated"
)

// Lib is a running driver for one generated .cu. Its methods are safe for
// concurrent use (calls are serialized).
type Lib struct {
	spec   *spec.Spec
	target string
	device string
	dir    string
	cmd    *exec.Cmd
	in     *bufio.Writer
	inc    io.Closer
	out    *bufio.Reader
	mu     sync.Mutex
	err    error

	// Misalign shifts every tensor by one element from its aligned
	// allocation, which makes the launchers take their scalar paths.
	Misalign bool
	// MisalignArrays shifts float array i of each request (bit i; an
	// attention call's arrays are out, q, k, v, …) alone by one element.
	MisalignArrays uint8
}

// Build compiles the generated .cu at cuPath (with its .cuh beside it) for
// spec s into a host executable (HostToolchain) and starts it. Close stops
// it.
func Build(s *spec.Spec, cuPath string) (*Lib, error) {
	tc, err := HostToolchain()
	if err != nil {
		return nil, err
	}
	return BuildWith(s, cuPath, tc)
}

// BuildGPU compiles the generated .cu at cuPath for spec s with nvcc
// (GPUToolchain) and starts the driver on the first CUDA device. It fails
// when nvcc is missing, the build fails, or there is no usable device.
func BuildGPU(s *spec.Spec, cuPath string) (*Lib, error) {
	tc, err := GPUToolchain()
	if err != nil {
		return nil, err
	}
	return BuildWith(s, cuPath, tc)
}

// BuildWith compiles the driver for the generated .cu at cuPath (with its
// .cuh beside it) and spec s with toolchain tc, starts it and waits for it
// to report its device. Close stops it.
func BuildWith(s *spec.Spec, cuPath string, tc Toolchain) (*Lib, error) {
	if tc.args == nil {
		return nil, errors.New("cudahost: a Toolchain must come from HostToolchain, GPUToolchain or GPUEmulatedToolchain")
	}
	abs, err := filepath.Abs(cuPath)
	if err != nil {
		return nil, err
	}
	src, err := driverSource(s, abs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "posenc-cudahost-")
	if err != nil {
		return nil, err
	}
	l := &Lib{spec: s, target: tc.Target, dir: dir}
	fail := func(err error) (*Lib, error) {
		l.Close()
		return nil, err
	}
	// The emulation header: a shared directory where it is precompiled
	// (pch.go), else a copy in the build directory.
	inc := dir
	if tc.Emulated {
		if pch := precompiledHeader(tc.Compiler); pch != "" {
			inc = pch
		} else if err := os.WriteFile(filepath.Join(dir, HeaderName), []byte(Header), 0o644); err != nil {
			return fail(err)
		}
	}
	drv := filepath.Join(dir, tc.src)
	if err := os.WriteFile(drv, []byte(src), 0o644); err != nil {
		return fail(err)
	}
	exe := filepath.Join(dir, "driver")
	cmd := exec.Command(tc.Compiler, tc.args(inc, drv, exe)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("cudahost: compiling %s with %s: %v\n%s", cuPath, filepath.Base(tc.Compiler), err, msg))
	}
	run := exec.Command(exe)
	run.Stderr = os.Stderr
	w, err := run.StdinPipe()
	if err != nil {
		return fail(err)
	}
	r, err := run.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := run.Start(); err != nil {
		return fail(err)
	}
	l.cmd, l.in, l.inc, l.out = run, bufio.NewWriter(w), w, bufio.NewReader(r)
	status, name, err := l.hello()
	if err != nil {
		return fail(fmt.Errorf("cudahost: driver did not start: %w", err))
	}
	if status != 0 {
		return fail(fmt.Errorf("cudahost: no usable CUDA device: cudaGetDeviceProperties: %s (cudaError_t %d)", name, status))
	}
	l.device = name
	return l, nil
}

// hello reads the driver's first message: a status and the device name.
func (l *Lib) hello() (int32, string, error) {
	var b [8]byte
	if _, err := io.ReadFull(l.out, b[:]); err != nil {
		return 0, "", err
	}
	le := binary.LittleEndian
	status, n := int32(le.Uint32(b[:4])), le.Uint32(b[4:])
	if n > 4096 {
		return 0, "", fmt.Errorf("device name of %d bytes", n)
	}
	name := make([]byte, n)
	if _, err := io.ReadFull(l.out, name); err != nil {
		return 0, "", err
	}
	return status, strings.TrimSpace(string(name)), nil
}

// Close stops the driver and removes its build directory.
func (l *Lib) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.cmd != nil {
		l.inc.Close()
		err = l.cmd.Wait()
		l.cmd = nil
	}
	os.RemoveAll(l.dir)
	return err
}

// Spec returns the spec the library was built for.
func (l *Lib) Spec() *spec.Spec { return l.spec }

// Target returns the verify target of the library's reports (Target,
// TargetGPU or TargetGPUEmulated, from its toolchain).
func (l *Lib) Target() string { return l.target }

// Device returns the name of the device the driver runs on, as
// cudaGetDeviceProperties reports it (the emulator names itself).
func (l *Lib) Device() string { return l.device }

// request writes one request: op with integer arguments ints (at most 7),
// float argument f, bench parameters reps and copyBytes (0 for a call),
// float arrays fa and int arrays ia. l.mu must be held.
func (l *Lib) request(op int32, ints []int64, f float32, reps, copyBytes int64, fa [][]float32, ia [][]int32) error {
	if l.err != nil {
		return l.err
	}
	if l.cmd == nil {
		return errors.New("cudahost: library closed")
	}
	if len(ints) > 7 || len(fa) > maxArrays || len(ia) > maxArrays {
		return fmt.Errorf("cudahost: request with %d ints, %d float and %d int arrays (at most 7, %d, %d)", len(ints), len(fa), len(ia), maxArrays, maxArrays)
	}
	var I [8]int64
	copy(I[:7], ints)
	if l.Misalign {
		I[7] = 1
	}
	I[7] |= int64(l.MisalignArrays) << 1
	w := l.in
	le := binary.LittleEndian
	var b [8]byte
	put32 := func(v uint32) { le.PutUint32(b[:4], v); w.Write(b[:4]) }
	put64 := func(v uint64) { le.PutUint64(b[:], v); w.Write(b[:]) }
	put32(uint32(op))
	for _, v := range I {
		put64(uint64(v))
	}
	put32(math.Float32bits(f))
	put64(uint64(reps))
	put64(uint64(copyBytes))
	put32(uint32(len(fa)))
	for _, a := range fa {
		put64(uint64(len(a)))
		writeWords(w, len(a), func(i int) uint32 { return math.Float32bits(a[i]) })
	}
	put32(uint32(len(ia)))
	for _, a := range ia {
		put64(uint64(len(a)))
		writeWords(w, len(a), func(i int) uint32 { return uint32(a[i]) })
	}
	if err := w.Flush(); err != nil {
		return l.broken(err)
	}
	return nil
}

// broken records a transport failure: the driver is unusable from now on.
func (l *Lib) broken(err error) error {
	l.err = fmt.Errorf("cudahost: driver: %w", err)
	return l.err
}

// maxArrays is kMaxArrays of the driver: float arrays, and int arrays, per
// request.
const maxArrays = 8

// call performs one request: op with integer arguments ints (at most 7),
// float argument f, float arrays fa (updated in place from the response)
// and int arrays ia. It returns the call's status: the launcher's
// cudaError_t, or a later error of the kernel's execution, or a driver
// status (−1 unknown op, −2 a write outside the arrays).
func (l *Lib) call(op int32, ints []int64, f float32, fa [][]float32, ia [][]int32) (int32, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.request(op, ints, f, 0, 0, fa, ia); err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	var b [4]byte
	if _, err := io.ReadFull(l.out, b[:]); err != nil {
		return 0, l.broken(err)
	}
	status := int32(le.Uint32(b[:]))
	buf := make([]byte, 4*min(wordChunk, maxLen(fa)))
	for _, a := range fa {
		for lo := 0; lo < len(a); lo += wordChunk {
			part := a[lo:min(lo+wordChunk, len(a))]
			if _, err := io.ReadFull(l.out, buf[:4*len(part)]); err != nil {
				return 0, l.broken(err)
			}
			for i := range part {
				part[i] = math.Float32frombits(le.Uint32(buf[4*i:]))
			}
		}
	}
	return status, nil
}

// wordChunk is the number of 4-byte words requests and responses encode at
// a time: arrays of a 256 MiB table are streamed through a 1 MiB buffer
// instead of a second copy of the table.
const wordChunk = 1 << 18

// writeWords writes n little-endian words word(0) … word(n−1) to w, a
// chunk at a time.
func writeWords(w io.Writer, n int, word func(i int) uint32) {
	buf := make([]byte, 4*min(wordChunk, n))
	for lo := 0; lo < n; lo += wordChunk {
		hi := min(lo+wordChunk, n)
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(buf[4*(i-lo):], word(i))
		}
		w.Write(buf[:4*(hi-lo)])
	}
}

// maxLen is the length of the longest of fa (0 for none).
func maxLen(fa [][]float32) int {
	n := 0
	for _, a := range fa {
		n = max(n, len(a))
	}
	return n
}

// bench performs one bench request (see driverSource) and returns the
// status and the two elapsed times in milliseconds.
func (l *Lib) bench(op int32, ints []int64, f float32, reps, copyBytes int64, fa [][]float32, ia [][]int32) (status int32, kernelMs, copyMs float64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.request(op, ints, f, reps, copyBytes, fa, ia); err != nil {
		return 0, 0, 0, err
	}
	var b [20]byte
	if _, err := io.ReadFull(l.out, b[:]); err != nil {
		return 0, 0, 0, l.broken(err)
	}
	le := binary.LittleEndian
	return int32(le.Uint32(b[:4])), math.Float64frombits(le.Uint64(b[4:12])), math.Float64frombits(le.Uint64(b[12:])), nil
}

// statusText describes a call's status.
func statusText(status int32) string {
	switch status {
	case -1:
		return "the driver does not know this operation"
	case -2:
		return "a kernel wrote outside its arrays or modified an input"
	}
	if s, ok := cudaErrors[status]; ok {
		return fmt.Sprintf("cudaError_t %d (%s)", status, s)
	}
	return fmt.Sprintf("cudaError_t %d", status)
}

// cudaErrors names the cudaError_t values a posenc launch most likely
// meets (CUDA runtime API, enum cudaError).
var cudaErrors = map[int32]string{
	1:   "cudaErrorInvalidValue",
	2:   "cudaErrorMemoryAllocation",
	9:   "cudaErrorInvalidConfiguration",
	98:  "cudaErrorInvalidDeviceFunction",
	100: "cudaErrorNoDevice",
	209: "cudaErrorNoKernelImageForDevice: built for another GPU architecture; set POSENC_NVCC_ARCH",
	700: "cudaErrorIllegalAddress",
	719: "cudaErrorLaunchFailure",
}

// mustCall is call for the adapters, whose signatures have no error
// result: a transport failure or a failed call panics.
func (l *Lib) mustCall(name string, op int32, ints []int64, f float32, fa [][]float32, ia [][]int32) {
	status, err := l.call(op, ints, f, fa, ia)
	if err != nil {
		panic(err)
	}
	if status != 0 {
		panic(fmt.Sprintf("cudahost: posenc_%s_%s: %s", l.spec.Name, name, statusText(status)))
	}
}

// RoundTrip returns x converted to the spec's storage type and back
// (identity for f32, round to nearest even for f16 and bf16).
func (l *Lib) RoundTrip(x []float32) []float32 {
	y := append([]float32(nil), x...)
	l.mustCall("round_trip", opRoundTrip, nil, 0, [][]float32{y}, nil)
	return y
}
