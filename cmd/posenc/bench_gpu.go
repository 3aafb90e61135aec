package main

// bench -gpu: the CUDA drivers built side by side, then timed one spec at a
// time on the device, and their table.

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify/cudahost"
)

// ropeGoal is the bench's goal for RoPE on a GPU: at least this fraction of
// the device-to-device copy's bandwidth at ropeGoalTokens tokens or more.
const (
	ropeGoal       = 0.85
	ropeGoalTokens = 1024
)

// benchGPU runs the CUDA bench cases benchCases gives (cudahost.BenchCases,
// or AttentionBenchCases for -attention) of every spec with CUDA kernels
// through the driver tc builds and prints kernel GB/s, device-to-device
// copy GB/s, their ratio and, for attention prefill, TFLOP/s, measured in
// one process.
// The drivers are built first, several at a time (buildDrivers), and then
// timed one spec at a time, so that none of its compilers runs beside a
// timed kernel; with POSENC_GPU_LOCK set, the timing waits for that lock
// (gpuLock), so that other bench processes' timings do not run beside it
// either (their builds may: tools/gpu/attn_call.sh times a baseline build
// among them for that reason).
// Emulated (POSENC_GPU_EMULATE=1) it runs the short cases once each.
func benchGPU(specs []*spec.Spec, dir string, tc cudahost.Toolchain, benchCases func(*spec.Spec, bool) []cudahost.BenchCase, short bool, reps int, stdout, stderr io.Writer) error {
	if tc.Emulated {
		short, reps = true, 1
	}
	var cs []*spec.Spec
	steps := 1
	for _, s := range cudaSpecs(specs, nil) {
		if n := len(benchCases(s, short)); n > 0 {
			cs = append(cs, s)
			steps += 1 + n
		}
	}
	if len(cs) == 0 {
		return fmt.Errorf("-gpu: none of the specs has CUDA kernels with a GPU bench (rope, alibi, rpe_bias or an absolute encoding, with cuda among its targets)")
	}
	p := newProgress(stderr, steps)
	defer p.Done()
	for _, s := range specs {
		if !slices.Contains(cs, s) {
			p.Printf("%s: no GPU bench cases (encoding %s, targets %v): bench -gpu covers rope, alibi, rpe_bias and the absolute encodings", s.Name, s.Encoding, s.Targets)
		}
	}
	p.Step("generating %d packages", len(cs))
	if _, err := generateAll(cs, dir, false); err != nil {
		return err
	}
	libs, err := buildDrivers(cs, dir, tc, p)
	if err != nil {
		return err
	}
	release, err := gpuLock(p)
	if err != nil {
		closeDrivers(libs)
		return err
	}
	defer release()
	// Each driver is closed after its cases; on an error, the rest too
	// (before the lock is released).
	defer closeDrivers(libs)
	var results []cudahost.BenchResult
	for i, s := range cs {
		for _, c := range benchCases(s, short) {
			p.Step("%s: %s %s (%s, %s)", s.Name, c.Kernel, c.Shape, tc.Target, countNoun(reps, "launch", "launches"))
			r, err := libs[i].Bench(c, reps)
			if err != nil {
				return err
			}
			// Each row as it comes (stderr), so that a run stopped by a
			// timeout still tells what it measured; the table follows.
			tf := ""
			if r.Flops > 0 {
				tf = fmt.Sprintf(", %.1f TFLOP/s", r.TFLOPs())
			}
			p.Printf("%s %s %s: %.1f GB/s, %.2f × copy%s", r.Spec, r.Kernel, r.Shape, r.KernelGBs(), r.Ratio(), tf)
			results = append(results, r)
		}
		err := libs[i].Close()
		libs[i] = nil
		if err != nil {
			return fmt.Errorf("%s: CUDA driver: %w", s.Name, err)
		}
	}
	p.Done()
	printGPUBench(stdout, results, tc, reps)
	return nil
}

// buildDrivers builds and starts the CUDA driver of every spec in cs
// (generated under dir), up to GOMAXPROCS at a time: nvcc and the host
// compiler take a core each for a minute or so per spec, and a GPU machine
// has many cores. It returns them in cs's order or, when a build fails,
// closes the others and returns the first failure in cs's order.
func buildDrivers(cs []*spec.Spec, dir string, tc cudahost.Toolchain, p *progress) ([]*cudahost.Lib, error) {
	libs := make([]*cudahost.Lib, len(cs))
	errs := make([]error, len(cs))
	slots := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, s := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			p.Step("%s: building the CUDA driver (%s)", s.Name, filepath.Base(tc.Compiler))
			libs[i], errs[i] = cudahost.BuildWith(s, filepath.Join(dir, s.Name, s.Name+".cu"), tc)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			closeDrivers(libs)
			return nil, err
		}
	}
	return libs, nil
}

// closeDrivers stops the drivers in libs that are still running (not nil).
func closeDrivers(libs []*cudahost.Lib) {
	for _, l := range libs {
		if l != nil {
			l.Close()
		}
	}
}

// printGPUBench writes the GPU bench table under a header that says where
// and how it was measured and what GB/s counts.
func printGPUBench(w io.Writer, rs []cudahost.BenchResult, tc cudahost.Toolchain, reps int) {
	device := ""
	if len(rs) > 0 {
		device = rs[0].Device
	}
	if tc.Emulated {
		fmt.Fprintf(w, "posenc bench -gpu: EMULATED on the CPU (%s); short sizes, %s per case\n", gpuLabel(tc), countNoun(reps, "launch", "launches"))
	} else {
		fmt.Fprintf(w, "posenc bench -gpu: %s (%s); per case %s, then %s, each after a warm-up, timed with cudaEvents in one process\n",
			device, gpuLabel(tc), countNoun(reps, "launch", "launches"), countNoun(reps, "device-to-device copy", "device-to-device copies"))
	}
	fmt.Fprintln(w, "GB/s = bytes moved / time, 1 GB = 1e9 bytes; bytes moved = 2 × the bytes the kernel updates (MiB column; RoPE with rotary_dim < head_dim: the rotated dims only) for the in-place kernel (read + write) and for the copy of the same bytes (read + write); × copy = copy time ÷ kernel time")
	if slices.ContainsFunc(rs, func(r cudahost.BenchResult) bool { return r.ReadOnly || r.Flops > 0 }) {
		fmt.Fprintln(w, "attention: decode moves the K+V bytes it reads (MiB column, read once; × copy can reach 2), against a copy of them; prefill (causal) counts 4 × heads × head_dim flops per unmasked query-key pair (TFLOP/s column), MiB = q, k, v and out")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tTARGET\tKERNEL\tSHAPE\tMiB\tKERNEL GB/s\tD2D COPY GB/s\t× copy\tTFLOP/s")
	for _, r := range rs {
		tf := "-"
		if r.Flops > 0 {
			tf = fmt.Sprintf("%.1f", r.TFLOPs())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%.1f\t%.1f\t%.2f\t%s\n", r.Spec, r.Target, r.Kernel, r.Shape,
			float64(r.Tensor)/(1<<20), r.KernelGBs(), r.CopyGBs(), r.Ratio(), tf)
	}
	tw.Flush()
	if tc.Emulated {
		return
	}
	worst, n := 0.0, 0
	for _, r := range rs {
		if (r.Kernel == "apply" || r.Kernel == "apply_qk") && r.Tokens >= ropeGoalTokens {
			if n == 0 || r.Ratio() < worst {
				worst = r.Ratio()
			}
			n++
		}
	}
	if n > 0 {
		verdict := "met"
		if worst < ropeGoal {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "posenc: RoPE at ≥ %d tokens: lowest × copy %.2f (goal ≥ %.2f: %s)\n", ropeGoalTokens, worst, ropeGoal, verdict)
	}
}

// countNoun returns "n thing" with the singular or plural form.
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
