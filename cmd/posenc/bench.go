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
)

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stdout)
	short := fs.Bool("short", false, "cache-resident sizes only (skip the 64 MiB runs)")
	benchtime := fs.String("benchtime", "300ms", "go test -benchtime for each benchmark")
	var zoo multiFlag
	fs.Var(&zoo, "zoo", "benchmark the named zoo spec (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	specs, err := loadSpecs(zoo, fs.Args())
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := scratchDir(root, "bench")
	if err != nil {
		return err
	}
	defer removeAll(dir)
	if _, err := generateAll(specs, dir, false); err != nil {
		return err
	}
	var results []benchResult
	for _, s := range specs {
		fmt.Fprintf(stderr, "posenc: benchmarking %s\n", s.Name)
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
	printBench(stdout, results)
	return nil
}

// benchResult is one kernel variant at one size, with the same-process
// copy() and plain-Go-loop figures it is compared with.
type benchResult struct {
	Spec, Kernel, Variant, Size string
	MBs, CopyMBs, PlainMBs      float64
}

// benchLine matches "BenchmarkX/a/b-8   100   123 ns/op   456.7 MB/s".
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s`)

// parseBench reads go test -bench output. Names follow the generated
// benchmarks' convention: Benchmark<Kernel>/<variant>[/<size>], with
// BenchmarkCopy[/<size>] and BenchmarkPlain<Name>[/<size>] (the plain Go
// loop) as the baselines of the same size.
func parseBench(specName string, out []byte) []benchResult {
	copyMBs := map[string]float64{}
	plain := map[string]float64{}
	var rs []benchResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		mbs, _ := strconv.ParseFloat(m[2], 64)
		parts := strings.Split(strings.TrimPrefix(m[1], "Benchmark"), "/")
		switch {
		case parts[0] == "Copy":
			copyMBs[sizeOf(parts, 1)] = mbs
		case strings.HasPrefix(parts[0], "Plain"):
			plain[sizeOf(parts, 1)] = mbs
		case len(parts) >= 2:
			rs = append(rs, benchResult{Spec: specName, Kernel: parts[0], Variant: parts[1], Size: sizeOf(parts, 2), MBs: mbs})
		}
	}
	for i := range rs {
		rs[i].CopyMBs = copyMBs[rs[i].Size]
		rs[i].PlainMBs = plain[rs[i].Size]
	}
	return rs
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
		return a.Size < b.Size
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tKERNEL\tVARIANT\tSIZE\tGB/s\t× copy()\t× plain Go")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n", r.Spec, r.Kernel, r.Variant, r.Size, r.MBs/1000,
			ratio(r.MBs, r.CopyMBs), ratio(r.MBs, r.PlainMBs))
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
