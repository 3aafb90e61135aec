package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// row is one verified variant (as printed by verify.Emit in a generated
// package's test), or a required one that did not run (Note says why).
type row struct {
	verify.Row
	Note string
}

func (r row) ok() bool { return r.Note == "" && r.Failures == 0 && r.Cases > 0 && r.MaxRatio <= 1 }

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", stdout)
	targets := fs.String("targets", "", "comma-separated targets to verify (default: every target each spec lists); auto: go, neon, cuda and the amd64 assembly targets this CPU runs; cuda-ptx or cuda-host: only that one of cuda's two checks (clang's PTX compile, host emulation)")
	gpu := fs.Bool("gpu", false, "also run the CUDA kernels on this machine's GPU (target cuda-gpu; needs nvcc and a CUDA device)")
	var zoo multiFlag
	fs.Var(&zoo, "zoo", "verify the named zoo spec (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	specs, err := loadSpecs(zoo, fs.Args())
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The CUDA rows run the harness in this process, with the tables of
		// specs at the size limits (up to 2 × 256 MiB) and their copies.
		debug.SetMemoryLimit(1 << 30)
	}
	var only map[string]bool
	if *targets == "auto" {
		only = autoTargets()
		fmt.Fprintf(stderr, "posenc: -targets auto: %s on this CPU\n", targetList(only))
	} else if *targets != "" {
		if only, err = parseTargets(*targets, specs); err != nil {
			return err
		}
	}
	tc, err := checkGPU(*gpu)
	if err != nil {
		return err
	}
	rows, err := verifySpecsGPU(specs, only, tc, stderr)
	if err != nil {
		return err
	}
	printRows(stdout, rows)
	if tc != nil && tc.Emulated {
		fmt.Fprintf(stdout, "posenc: %s rows: %s\n", tc.Target, gpuLabel(*tc))
	}
	if len(rows) == 0 {
		return fmt.Errorf("no variant was verified")
	}
	if bad := failed(rows); bad > 0 {
		return fmt.Errorf("%d of %d variants failed or did not run", bad, len(rows))
	}
	fmt.Fprintf(stdout, "posenc: %d variants of %d specs verified\n", len(rows), len(specs))
	return nil
}

// verifySpecs generates specs into a scratch package tree inside the module
// and runs each variant's verification: natively (go, avx2, avx512), under
// qemu-aarch64-static (neon), and through CUDA host emulation. A variant a
// spec asks for that could not run gets a row with a Note (a failure).
// Progress goes to w (see progress).
func verifySpecs(specs []*spec.Spec, only map[string]bool, w io.Writer) ([]row, error) {
	return verifySpecsGPU(specs, only, nil, w)
}

// verifySpecsGPU is verifySpecs plus, when gpu is not nil, a run of every
// f32 spec's CUDA kernels through the driver gpu builds (target cuda-gpu,
// or cuda-gpu-emulated).
func verifySpecsGPU(specs []*spec.Spec, only map[string]bool, gpu *cudahost.Toolchain, w io.Writer) ([]row, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	dir, done, err := scratchDir(root, "verify")
	if err != nil {
		return nil, err
	}
	defer done()
	want := func(s *spec.Spec, t string) bool {
		hasAsm := gen.Backends(s.Encoding).Assembly
		isAsm := t == spec.TargetAVX2 || t == spec.TargetAVX512 || t == spec.TargetNEON
		return s.HasTarget(t) && (only == nil || only[t]) && (hasAsm || !isAsm)
	}

	// The native run tests the go, AVX2 and AVX-512 variants: a spec
	// none of whose are wanted (-targets cuda) skips it.
	var nativePkgs, armPkgs []string
	for _, s := range specs {
		pkg := "./" + filepath.ToSlash(mustRel(root, filepath.Join(dir, s.Name)))
		if want(s, spec.TargetGo) || want(s, spec.TargetAVX2) || want(s, spec.TargetAVX512) {
			nativePkgs = append(nativePkgs, pkg)
		}
		if want(s, spec.TargetNEON) {
			armPkgs = append(armPkgs, pkg)
		}
	}
	_, qemuErr := exec.LookPath("qemu-aarch64-static")
	steps := 1 + cudaSteps(specs, only, gpu != nil)
	if len(nativePkgs) > 0 {
		steps++
	}
	if len(armPkgs) > 0 && qemuErr == nil {
		steps++
	}
	p := newProgress(w, steps)
	defer p.Done()

	p.Step("generating %d packages", len(specs))
	if _, err := generateAll(specs, dir, false); err != nil {
		return nil, err
	}
	var rows []row
	if len(nativePkgs) > 0 {
		native, err := goTestRows(root, nil, nativePkgs, p, "native")
		if err != nil {
			return nil, err
		}
		rows = append(rows, native...)
	}

	neonNote := ""
	if len(armPkgs) > 0 {
		if qemuErr != nil {
			neonNote = "not run: qemu-aarch64-static not found"
		} else {
			arm, err := goTestRows(root, []string{"GOARCH=arm64"}, armPkgs, p, "arm64 under qemu", "-exec", "qemu-aarch64-static")
			if err != nil {
				return nil, err
			}
			for _, r := range arm {
				if r.Target == "go" {
					r.Target = "go-arm64"
				}
				rows = append(rows, r)
			}
		}
	}

	rows = append(rows, verifyCUDA(specs, dir, only, gpu, p)...)

	// A target the spec asks for must have produced its row.
	have := map[string]bool{}
	for _, r := range rows {
		have[r.Spec+"/"+r.Target] = true
	}
	for _, s := range specs {
		for _, t := range []string{spec.TargetGo, spec.TargetAVX2, spec.TargetAVX512, spec.TargetNEON} {
			if !want(s, t) || have[s.Name+"/"+t] {
				continue
			}
			note := "not run: the CPU lacks it or the test skipped it"
			if t == spec.TargetNEON && neonNote != "" {
				note = neonNote
			}
			rows = append(rows, row{Row: verify.Row{Spec: s.Name, Target: t}, Note: note})
		}
	}
	if only != nil { // the native and qemu runs test every compiled-in variant
		kept := rows[:0]
		for _, r := range rows {
			t := strings.TrimSuffix(r.Target, "-arm64")
			if only[t] || strings.HasPrefix(r.Target, "cuda-") && cudaWanted(only, r.Target) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Spec != rows[j].Spec {
			return rows[i].Spec < rows[j].Spec
		}
		return targetOrder(rows[i].Target) < targetOrder(rows[j].Target)
	})
	return rows, nil
}

// goTestRows runs the generated packages' TestVariants and collects the
// rows they print. A test failure is not an error here: its rows carry the
// failures. A build failure is.
func goTestRows(root string, env, pkgs []string, p *progress, what string, extra ...string) ([]row, error) {
	p.Step("testing %d packages (%s)", len(pkgs), what)
	if os.Getenv("GOMEMLIMIT") == "" {
		// The tests of specs at the size limits hold up to about 800 MiB of
		// tables; without a limit the Go heap may grow to twice its live
		// size before collecting, past verify's budget of 2 GiB.
		env = append(env[:len(env):len(env)], "GOMEMLIMIT="+testMemLimit)
	}
	args := append([]string{"test", "-count=1", "-v", "-run", "^TestVariants$"}, extra...)
	args = append(args, pkgs...)
	out, err := runCapture(goCmd(root, env, args...))
	rows := parseRows(out)
	if err != nil && len(rows) == 0 {
		return nil, fmt.Errorf("go test (%s) failed:\n%s", what, tail(out, 60))
	}
	if err != nil && bytes.Contains(out, []byte("[build failed]")) {
		return nil, fmt.Errorf("go test (%s): build failed:\n%s", what, tail(out, 60))
	}
	return rows, nil
}

// testMemLimit is the GOMEMLIMIT of the go test runs (unless the caller's
// environment sets one): a soft limit that makes the Go collector of the
// test binaries (and of go and the compiler) run before the heap reaches it.
const testMemLimit = "1GiB"

// parseRows extracts the POSENC-ROW lines of go test output.
func parseRows(out []byte) []row {
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		i := strings.Index(line, verify.RowPrefix)
		if i < 0 {
			continue
		}
		var r verify.Row
		if json.Unmarshal([]byte(line[i+len(verify.RowPrefix):]), &r) == nil {
			rows = append(rows, row{Row: r})
		}
	}
	return rows
}

func failed(rows []row) int {
	n := 0
	for _, r := range rows {
		if !r.ok() {
			n++
		}
	}
	return n
}

// printRows writes the verification table.
func printRows(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tTARGET\tCASES\tMAX ERR/BOUND\tWORST CASE\tRESULT")
	for _, r := range rows {
		res := "ok"
		switch {
		case r.Note != "":
			res = "FAIL (" + r.Note + ")"
		case !r.ok():
			res = fmt.Sprintf("FAIL (%d failures)", r.Failures)
		}
		cases, ratio := "-", "-"
		if r.Note == "" {
			cases = fmt.Sprint(r.Cases)
			ratio = fmt.Sprintf("%.3g", r.MaxRatio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Spec, r.Target, cases, ratio, r.Worst, res)
	}
	tw.Flush()
}

func targetOrder(t string) int {
	for i, x := range []string{"go", "avx2", "avx512", "go-arm64", "neon", "cuda-ptx", "cuda-host", "cuda-gpu", "cuda-gpu-emulated"} {
		if x == t {
			return i
		}
	}
	return 100
}
