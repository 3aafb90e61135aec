package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/posenc/posenc/verify/cudahost"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stdout)
	short := fs.Bool("short", false, "cache-resident sizes only (skip the 64 MiB runs)")
	benchtime := fs.String("benchtime", "300ms", "go test -benchtime for each benchmark")
	gpu := fs.Bool("gpu", false, "benchmark the CUDA kernels on this machine's GPU instead of the CPU variants (needs nvcc and a CUDA device): GB/s and ratio to a device-to-device copy")
	reps := fs.Int("reps", 100, "with -gpu: timed launches (and copies) per case")
	attention := fs.Bool("attention", false, "with -gpu: time the attention form instead (decode over 32768 and 131072 keys as K+V GB/s, causal prefill of 2048 tokens, and 8192 for f16/bf16, as TFLOP/s; rope, alibi and rpe_bias specs)")
	var zoo multiFlag
	fs.Var(&zoo, "zoo", "benchmark the named zoo spec (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *reps < 1 {
		return fmt.Errorf("%w: -reps %d: want at least 1", errUsage, *reps)
	}
	if *attention && !*gpu {
		return fmt.Errorf("%w: -attention times the CUDA attention form: it needs -gpu (the CPU form's benchmarks run without it)", errUsage)
	}
	if err := checkBenchtime(*benchtime); err != nil {
		return err
	}
	specs, err := loadSpecs(zoo, fs.Args())
	if err != nil {
		return err
	}
	tc, err := checkGPU(*gpu)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, done, err := scratchDir(root, "bench")
	if err != nil {
		return err
	}
	defer done()
	if tc != nil {
		cases := cudahost.BenchCases
		if *attention {
			cases = cudahost.AttentionBenchCases
		}
		return benchGPU(specs, dir, *tc, cases, *short, *reps, stdout, stderr)
	}
	if _, err := generateAll(specs, dir, false); err != nil {
		return err
	}
	p := newProgress(stderr, len(specs))
	defer p.Done()
	var results []benchResult
	for _, s := range specs {
		p.Step("benchmarking %s", s.Name)
		pkg := "./" + filepath.ToSlash(mustRel(root, filepath.Join(dir, s.Name)))
		args := []string{"test", "-run", "^$", "-bench", ".", "-benchtime", *benchtime, "-count=1"}
		if *short {
			args = append(args, "-short")
		}
		out, err := runCapture(goCmd(root, nil, append(args, pkg)...))
		if err != nil {
			return fmt.Errorf("benchmarking %s:\n%s", s.Name, tail(out, 40))
		}
		results = append(results, parseBench(s.Name, out)...)
	}
	p.Done()
	printBench(stdout, results)
	return nil
}

// checkBenchtime accepts what go test's -benchtime does, a positive
// duration (300ms, 2s) or a positive iteration count (100x), and refuses
// anything else before go test runs: go test would answer with its whole
// flag list, and the error line would be lost above it.
func checkBenchtime(v string) error {
	if n, ok := strings.CutSuffix(v, "x"); ok {
		if c, err := strconv.ParseInt(n, 10, 0); err == nil && c > 0 {
			return nil
		}
	} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return nil
	}
	return fmt.Errorf("%w: -benchtime %q: want a positive duration (300ms, 2s) or iteration count (100x)", errUsage, v)
}

// benchResult is one kernel variant at one size, with the same-process
// copy() and plain-Go-loop figures it is compared with. Kernels that are
// not bandwidth-bound (rpe_full, xl: O(L²·d) work on O(L·d) data) report
// no MB/s; they have Ns, the time per call, and NaiveNs, the time of the
// naive O(L²·d) form of the same call (BenchmarkNaive<Kernel>).
type benchResult struct {
	Spec, Kernel, Variant, Size string
	MBs, CopyMBs, PlainMBs      float64
	Ns, NaiveNs                 float64
	// XCopy is the kernel's throughput ÷ copy()'s timed back to back in every
	// iteration (Benchmark<Kernel>CopyRatio/<variant>, metric x-copy), or 0.
	XCopy float64
}

// benchLine matches "BenchmarkX/a/b-8   100   123 ns/op[   456.7 MB/s][   0.62 x-copy]".
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) MB/s)?(?:\s+([\d.]+) x-copy)?`)

// parseBench reads go test -bench output. Names follow the generated
// benchmarks' convention: Benchmark<Kernel>/<variant>[/<size>], with
// BenchmarkCopy[/<size>] and BenchmarkPlain<Name>[/<size>] (the plain Go
// loop) as the baselines of the same size, and BenchmarkNaive<Kernel> the
// naive-form baseline of a kernel timed without MB/s. A kernel may carry its
// own baseline as the variant "copy" (Benchmark<Kernel>/copy/<size>: a copy()
// of the bytes that kernel moves, the rope engine-form benchmarks); it is
// that kernel's copy figure and no result row.
func parseBench(specName string, out []byte) []benchResult {
	copyMBs := map[string]float64{}
	kernelCopy := map[string]float64{} // "<kernel>/<size>"
	plain := map[string]float64{}
	naive := map[string]float64{}
	xcopy := map[string]float64{} // "<kernel>/<variant>"
	var rs []benchResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		mbs, _ := strconv.ParseFloat(m[3], 64) // 0 when there is no MB/s
		parts := strings.Split(strings.TrimPrefix(m[1], "Benchmark"), "/")
		switch {
		case strings.HasSuffix(parts[0], "CopyRatio") && len(parts) >= 2:
			if m[4] != "" {
				xcopy[strings.TrimSuffix(parts[0], "CopyRatio")+"/"+parts[1]], _ = strconv.ParseFloat(m[4], 64)
			}
		case parts[0] == "Copy":
			copyMBs[sizeOf(parts, 1)] = mbs
		case strings.HasPrefix(parts[0], "Plain"):
			plain[sizeOf(parts, 1)] = mbs
		case strings.HasPrefix(parts[0], "Naive") && len(parts) == 1:
			naive[strings.TrimPrefix(parts[0], "Naive")] = ns
		case len(parts) >= 2 && parts[1] == "copy":
			kernelCopy[parts[0]+"/"+sizeOf(parts, 2)] = mbs
		case len(parts) >= 2:
			rs = append(rs, benchResult{Spec: specName, Kernel: parts[0], Variant: parts[1], Size: sizeOf(parts, 2), MBs: mbs, Ns: ns})
		}
	}
	for i := range rs {
		rs[i].CopyMBs = copyMBs[rs[i].Size]
		if c, ok := kernelCopy[rs[i].Kernel+"/"+rs[i].Size]; ok {
			rs[i].CopyMBs = c
		}
		rs[i].PlainMBs = plain[rs[i].Size]
		rs[i].XCopy = xcopy[rs[i].Kernel+"/"+rs[i].Variant]
		if rs[i].MBs == 0 {
			rs[i].NaiveNs = naive[rs[i].Kernel]
		}
		if rs[i].Size == "" && rs[i].MBs > 0 {
			rs[i].Size = bytesPerOp(rs[i].MBs, rs[i].Ns)
		}
	}
	return rs
}

// bytesPerOp labels a benchmark without a size in its name by the bytes one
// call moves (its SetBytes), recovered from MB/s × ns/op.
func bytesPerOp(mbs, ns float64) string {
	b := mbs * 1e6 * ns * 1e-9
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB/op", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB/op", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B/op", b)
}

// sizeLabel is the SIZE column of a benchmark's size element: the generated
// rope benchmarks name their sizes "tokens=N" (Apply, Inverse, …) and
// "Ntok,p=P" (the engine forms); both are shown as Ntok[,p=P].
func sizeLabel(size string) string {
	if n, ok := strings.CutPrefix(size, "tokens="); ok {
		return n + "tok"
	}
	return size
}

// sizeTokens is the leading token count of a size label (0 if none), so
// that 16tok sorts before 1048576tok... and after 1tok,p=….
func sizeTokens(label string) int {
	i := 0
	for i < len(label) && label[i] >= '0' && label[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(label[:i])
	return n
}

// benchLegend explains the columns of printBench's bandwidth table and the
// size labels that occur in rs.
func benchLegend(rs []benchResult) []string {
	var tok, from, advance bool
	for _, r := range rs {
		l := sizeLabel(r.Size)
		switch {
		case strings.HasSuffix(l, "+i"):
			advance = true
		case strings.Contains(l, "tok,p="):
			from = true
		case strings.HasSuffix(l, "tok"):
			tok = true
		}
	}
	lines := []string{"GB/s: bytes one call moves ÷ time per call; × copy(): ÷ copy() of the same bytes, same process; × plain Go: ÷ a plain Go loop of the same size (RoPE: over precomputed float32 cos/sin tables); - where there is no baseline"}
	var sizes []string
	if tok {
		sizes = append(sizes, "Ntok: N tokens × 32 heads at positions inside the table")
	}
	if from {
		sizes = append(sizes, "Ntok,p=P: N tokens at positions P, P+1, … (P ≥ MaxPosition: rows computed beyond the table)")
	}
	if advance {
		sizes = append(sizes, "1tok,p=P+i: one token whose position advances every call")
	}
	if len(sizes) > 0 {
		lines = append(lines, "SIZE "+strings.Join(sizes, "; "))
	}
	return lines
}

func printBench(w io.Writer, rs []benchResult) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Spec != b.Spec {
			return a.Spec < b.Spec
		}
		if a.Kernel != b.Kernel {
			return a.Kernel < b.Kernel
		}
		la, lb := sizeLabel(a.Size), sizeLabel(b.Size)
		if na, nb := sizeTokens(la), sizeTokens(lb); na != nb {
			return na < nb
		}
		return la < lb
	})
	var bw, cpu []benchResult
	for _, r := range rs {
		if r.MBs > 0 {
			bw = append(bw, r)
		} else {
			cpu = append(cpu, r)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(bw) > 0 || len(cpu) == 0 {
		fmt.Fprintln(tw, "SPEC\tKERNEL\tVARIANT\tSIZE\tGB/s\t× copy()\t× plain Go")
		interleaved := false
		for _, r := range bw {
			xc := ratio(r.MBs, r.CopyMBs)
			if r.XCopy > 0 {
				xc, interleaved = fmt.Sprintf("%.2f*", r.XCopy), true
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n", r.Spec, r.Kernel, r.Variant, sizeLabel(r.Size), r.MBs/1000,
				xc, ratio(r.MBs, r.PlainMBs))
		}
		// Deferred calls run last first: after the table the footnote, then the legend.
		if len(bw) > 0 {
			defer func() {
				for _, l := range benchLegend(bw) {
					fmt.Fprintln(w, l)
				}
			}()
		}
		if interleaved {
			defer fmt.Fprintln(w, "* kernel and copy() timed back to back in every iteration (Benchmark<Kernel>CopyRatio)")
		}
	}
	if len(cpu) > 0 {
		if len(bw) > 0 {
			fmt.Fprintln(tw)
		}
		// Compute-bound kernels: the speed-up is naive time ÷ kernel time.
		fmt.Fprintln(tw, "SPEC\tKERNEL\tVARIANT\tSIZE\tms/call\t× naive O(L²·d)")
		for _, r := range cpu {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%s\n", r.Spec, r.Kernel, r.Variant, sizeLabel(r.Size), r.Ns/1e6, ratio(r.NaiveNs, r.Ns))
		}
	}
	tw.Flush()
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// sizeOf returns parts[i], the size element of a benchmark name, or "".
func sizeOf(parts []string, i int) string {
	if i < len(parts) {
		return parts[i]
	}
	return ""
}
