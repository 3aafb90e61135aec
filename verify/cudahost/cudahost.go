// Package cudahost runs posenc's generated CUDA kernels on the CPU: the
// generated <name>.cu is compiled with the system C++ compiler against the
// host-emulation header posenc_cuda_host.h (CUDA blocks run one at a time,
// their threads as fibers synchronized at __syncthreads), together with a
// small driver that serves kernel calls over stdin/stdout. Lib's adapters
// turn the launchers into verify.RoPEKernels, verify.BiasKernels and
// verify.AbsoluteKernels, so the verify harness checks the CUDA source
// against the float64 reference (target "cuda-host").
//
// Like the rest of package verify it never imports the generator: it reads
// the emitted .cu from disk and knows only the launcher contract of
// DESIGN.md (posenc_<name>_<func>, device pointers, the Go API's layouts).
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
	"sync"

	"github.com/posenc/posenc/spec"
)

// Header is posenc_cuda_host.h, the host-emulation header.
//
//go:embed posenc_cuda_host.h
var Header string

// HeaderName is the file name the generated drivers include.
const HeaderName = "posenc_cuda_host.h"

// Target is the verify report target of host-emulated CUDA kernels.
const Target = "cuda-host"

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

// Lib is a running host-emulation driver for one generated .cu. Its methods
// are safe for concurrent use (calls are serialized).
type Lib struct {
	spec *spec.Spec
	dir  string
	cmd  *exec.Cmd
	in   *bufio.Writer
	inc  io.Closer
	out  *bufio.Reader
	mu   sync.Mutex
	err  error

	// Misalign shifts every tensor by one element from its 16-byte aligned
	// allocation, which makes the launchers take their scalar paths.
	Misalign bool
}

// Build compiles the generated .cu at cuPath (with its .cuh beside it) for
// spec s into a host executable (C++20, -O1) and starts it. Close stops it.
func Build(s *spec.Spec, cuPath string) (*Lib, error) {
	cxx, ok := CXX()
	if !ok {
		return nil, errors.New("cudahost: no C++ compiler found (set $CXX)")
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
	l := &Lib{spec: s, dir: dir}
	fail := func(err error) (*Lib, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, HeaderName), []byte(Header), 0o644); err != nil {
		return fail(err)
	}
	drv := filepath.Join(dir, "driver.cpp")
	if err := os.WriteFile(drv, []byte(src), 0o644); err != nil {
		return fail(err)
	}
	exe := filepath.Join(dir, "driver")
	cmd := exec.Command(cxx, "-std=c++20", "-O1", "-fno-strict-aliasing", "-w", "-I", dir, "-o", exe, drv)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("cudahost: compiling %s: %v\n%s", cuPath, err, msg))
	}
	l.cmd = exec.Command(exe)
	l.cmd.Stderr = os.Stderr
	w, err := l.cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	r, err := l.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := l.cmd.Start(); err != nil {
		return fail(err)
	}
	l.in, l.inc, l.out = bufio.NewWriter(w), w, bufio.NewReader(r)
	return l, nil
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

// call performs one request: op with integer arguments ints (at most 7),
// float argument f, float arrays fa (updated in place from the response)
// and int arrays ia. It returns the launcher's cudaError_t.
func (l *Lib) call(op int32, ints []int64, f float32, fa [][]float32, ia [][]int32) (int32, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	if l.cmd == nil {
		return 0, errors.New("cudahost: library closed")
	}
	var I [8]int64
	copy(I[:7], ints)
	if l.Misalign {
		I[7] = 1
	}
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
	put32(uint32(len(fa)))
	for _, a := range fa {
		put64(uint64(len(a)))
		buf := make([]byte, 4*len(a))
		for i, v := range a {
			le.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		w.Write(buf)
	}
	put32(uint32(len(ia)))
	for _, a := range ia {
		put64(uint64(len(a)))
		buf := make([]byte, 4*len(a))
		for i, v := range a {
			le.PutUint32(buf[4*i:], uint32(v))
		}
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		l.err = fmt.Errorf("cudahost: driver: %w", err)
		return 0, l.err
	}
	if _, err := io.ReadFull(l.out, b[:4]); err != nil {
		l.err = fmt.Errorf("cudahost: driver: %w", err)
		return 0, l.err
	}
	status := int32(le.Uint32(b[:4]))
	for _, a := range fa {
		buf := make([]byte, 4*len(a))
		if _, err := io.ReadFull(l.out, buf); err != nil {
			l.err = fmt.Errorf("cudahost: driver: %w", err)
			return 0, l.err
		}
		for i := range a {
			a[i] = math.Float32frombits(le.Uint32(buf[4*i:]))
		}
	}
	return status, nil
}

// mustCall is call for the adapters, whose signatures have no error
// result: a transport failure or a launcher error panics.
func (l *Lib) mustCall(name string, op int32, ints []int64, f float32, fa [][]float32, ia [][]int32) {
	status, err := l.call(op, ints, f, fa, ia)
	if err != nil {
		panic(err)
	}
	if status != 0 {
		panic(fmt.Sprintf("cudahost: posenc_%s_%s returned cudaError_t %d", l.spec.Name, name, status))
	}
}

// RoundTrip returns x converted to the spec's storage type and back
// (identity for f32, round to nearest even for f16 and bf16).
func (l *Lib) RoundTrip(x []float32) []float32 {
	y := append([]float32(nil), x...)
	l.mustCall("round_trip", opRoundTrip, nil, 0, [][]float32{y}, nil)
	return y
}

// checkLen panics, in the gonum/blas style of the generated Go API, when
// an argument's length is not the one the call needs.
func checkLen(fn, arg string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("cudahost: %s: len(%s) = %d, want %d", fn, arg, got, want))
	}
}
