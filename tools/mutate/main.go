// Command mutate is posenc's mutation suite: it copies the repository into
// a scratch directory, applies one deliberate single-token bug at a time
// (mutations.go) to the generated Go, amd64 and arm64 assembly, the CUDA
// templates or the generator, runs the test or `posenc verify` that should
// catch it, and restores the file. With -j N (default: 2 where there are
// two CPUs or more) it keeps N scratch copies and works on N mutations at
// once, one in each. It prints one line per mutation, in the suite's order
// whatever the order they finish in, and the score, and exits 1 unless
// every mutation was caught and every check passed on the unmutated copy
// first. The repository itself is never written.
//
//	go run ./tools/mutate [-root DIR] [-run REGEXP] [-j N] [-list] [-v]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	root := flag.String("root", ".", "repository root to copy")
	run := flag.String("run", "", "only the mutations whose name matches this regular expression")
	list := flag.Bool("list", false, "list the mutations and their checks, run nothing")
	every := flag.Int("every", 0, "sample every Nth FMA site of the rope kernels (0: each file's own step)")
	jobs := flag.Int("j", defaultJobs(), "run this many checks at a time, each in a scratch copy of its own")
	verbose := flag.Bool("v", false, "print the output of surviving mutations and failed baselines in full")
	trusted := flag.String("trusted", "", "checks whose name matches this regular expression skip their baseline run: the caller has just run the same tests on this tree (CI: the README test command)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := mutate(ctx, os.Stdout, *root, *run, *trusted, *every, *jobs, *list, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
	}
	os.Exit(code)
}

// defaultJobs is -j's default: two checks at a time where there are two
// CPUs or more. Many checks keep one core busy (a test under qemu, which
// runs one process; posenc verify of one spec), so a second one fills the
// other core; more than two is left to -j, unmeasured.
func defaultJobs() int {
	return min(2, runtime.GOMAXPROCS(0))
}

// mutate runs the suite and returns the exit status: 0 when every selected
// mutation was caught, 1 otherwise. It runs jobs checks at a time, each in
// a scratch copy of its own, and prints the results in the order of the
// mutations (and of the checks' first use) whatever the order they finish
// in. The scratch copies are removed before it returns, also when ctx is
// cancelled (an interrupt).
func mutate(ctx context.Context, w io.Writer, root, run, trusted string, every, jobs int, list, verbose bool) (int, error) {
	all, err := allMutations(root, every)
	if err != nil {
		return 2, err
	}
	trust, err := regexp.Compile(trusted)
	if err != nil {
		return 2, fmt.Errorf("-trusted: %w", err)
	}
	sel, err := selectMutations(all, run)
	if err != nil {
		return 2, err
	}
	if list {
		for _, m := range sel {
			fmt.Fprintf(w, "%-40s %-48s %s\n", m.Name, m.File, m.Check)
		}
		return 0, nil
	}
	jobs = max(1, min(jobs, len(sel)))
	scratches := make([]string, jobs)
	for i := range scratches {
		dir, err := os.MkdirTemp("", "posenc-mutate-")
		if err != nil {
			return 2, err
		}
		defer os.RemoveAll(dir)
		if err := copyTree(root, dir); err != nil {
			return 2, err
		}
		scratches[i] = dir
	}

	// Every check must pass on the unmutated copy, or catching a mutation
	// means nothing. The first failing one (in order) ends the run. A
	// -trusted check's pass is the caller's word (its tests just passed).
	start := time.Now()
	var names []string
	for _, n := range checkNames(sel) {
		if trusted != "" && trust.MatchString(n) {
			fmt.Fprintf(w, "baseline trusted %-21s (-trusted)\n", n)
			continue
		}
		names = append(names, n)
	}
	type baseline struct {
		out  string
		err  error
		took time.Duration
	}
	var failed string
	var failErr error
	inOrder(ctx, len(names), jobs, func(ctx context.Context, worker, i int) baseline {
		t := time.Now()
		out, err := checks[names[i]].run(ctx, scratches[worker])
		return baseline{out, err, time.Since(t)}
	}, func(i int, b baseline) bool {
		if ctx.Err() != nil {
			return false
		}
		if b.err != nil {
			failed, failErr = names[i], b.err
			fmt.Fprintf(w, "BASELINE FAIL %-24s %s\n", names[i], lastLines(b.out, verbose))
			return false
		}
		fmt.Fprintf(w, "baseline ok   %-24s %5.1fs\n", names[i], b.took.Seconds())
		return true
	})
	if ctx.Err() != nil {
		return 2, ctx.Err()
	}
	if failErr != nil {
		return 1, fmt.Errorf("check %s fails on the unmutated tree", failed)
	}

	type outcome struct {
		res, detail string
		took        time.Duration
	}
	caught := 0
	inOrder(ctx, len(sel), jobs, func(ctx context.Context, worker, i int) outcome {
		t := time.Now()
		res, detail := runMutation(ctx, scratches[worker], sel[i])
		return outcome{res, detail, time.Since(t)}
	}, func(i int, o outcome) bool {
		if ctx.Err() != nil {
			return false
		}
		m := sel[i]
		if o.res == resCaught {
			caught++
		}
		fmt.Fprintf(w, "%2d/%d %-8s %5.1fs %-40s %s [%s]: %s\n", i+1, len(sel), o.res, o.took.Seconds(), m.Name, m.File, m.Check, lastLines(o.detail, verbose && o.res != resCaught))
		return true
	})
	if ctx.Err() != nil {
		return 2, ctx.Err()
	}
	fmt.Fprintf(w, "score: %d/%d mutations caught (%.0fs)\n", caught, len(sel), time.Since(start).Seconds())
	if caught != len(sel) {
		return 1, nil
	}
	return 0, nil
}

// inOrder calls work(ctx, worker, i) for each i in [0, n) on jobs
// goroutines, worker being the goroutine's number in [0, jobs): no two
// calls with the same worker run at once (each worker owns a scratch
// copy). It hands the results to emit in order of i, each as soon as it
// and those before it are done, in the calling goroutine. When emit
// returns false, or ctx is done, no further call starts, the ctx of the
// calls still running is cancelled, emit is called no more, and inOrder
// returns once those calls have returned.
func inOrder[R any](ctx context.Context, n, jobs int, work func(ctx context.Context, worker, i int) R, emit func(i int, r R) bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		i int
		r R
	}
	next := make(chan int)
	results := make(chan result)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for worker := range jobs {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue // cancelled between the hand-out and here
				}
				results <- result{i, work(ctx, worker, i)}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	done := map[int]R{}
	k, stopped := 0, false
	for res := range results {
		if stopped {
			continue // drain the calls that were running
		}
		done[res.i] = res.r
		for !stopped {
			r, ok := done[k]
			if !ok {
				break
			}
			delete(done, k)
			k++
			if !emit(k-1, r) {
				stopped = true
				cancel()
			}
		}
	}
}

// Outcomes of one mutation.
const (
	resCaught   = "CAUGHT"   // the check failed on the mutated code
	resSurvived = "SURVIVED" // the check passed: a hole in the tests
	resInvalid  = "INVALID"  // the mutation did not apply or did not build: fix it
)

// runMutation applies m in the scratch copy, runs its check and restores
// the file; it returns the outcome and a line of detail.
func runMutation(ctx context.Context, scratch string, m Mutation) (string, string) {
	path := filepath.Join(scratch, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		return resInvalid, err.Error()
	}
	mutated, err := m.apply(orig)
	if err != nil {
		return resInvalid, err.Error()
	}
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		return resInvalid, err.Error()
	}
	defer func() {
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			panic(fmt.Sprintf("mutate: restoring %s in the scratch copy: %v", m.File, err))
		}
	}()
	out, err := checks[m.Check].run(ctx, scratch)
	switch {
	case err == nil:
		return resSurvived, "the check passed"
	case buildFailed(out):
		return resInvalid, "build failed: " + firstMatch(out, "")
	}
	for _, sub := range []string{"want", "FAIL", ""} {
		if l := firstMatch(out, sub); l != "" {
			return resCaught, l
		}
	}
	return resCaught, ""
}

// apply returns src with m's single replacement made: the first Old after
// After (After must occur once; without After, Old must occur once), or
// with m.Nth > 0 the Nth Old after After (or after the file's start).
func (m Mutation) apply(src []byte) ([]byte, error) {
	s := string(src)
	from, err := m.anchor(s)
	if err != nil {
		return nil, err
	}
	if m.Nth > 0 {
		for k := 1; ; k++ {
			i := strings.Index(s[from:], m.Old)
			if i < 0 {
				return nil, fmt.Errorf("%q occurs %d times in %s after %q, want at least %d", m.Old, k-1, m.File, m.After, m.Nth)
			}
			if k == m.Nth {
				i += from
				return []byte(s[:i] + m.New + s[i+len(m.Old):]), nil
			}
			from += i + len(m.Old)
		}
	}
	if m.After == "" {
		if n := strings.Count(s, m.Old); n != 1 {
			return nil, fmt.Errorf("%q occurs %d times in %s, want 1 (or give an anchor)", m.Old, n, m.File)
		}
	}
	i := strings.Index(s[from:], m.Old)
	if i < 0 {
		return nil, fmt.Errorf("%q does not occur in %s after %q", m.Old, m.File, m.After)
	}
	i += from
	return []byte(s[:i] + m.New + s[i+len(m.Old):]), nil
}

// anchor returns the offset just past m.After in s (0 without an anchor).
// After may chain anchors with " >> ": the first occurs once in s, and each
// next one is its first occurrence after the previous (so "TEXT
// ·rotateAVX512(SB) >> \nrope_inverse", a label at the start of a line, finds
// the AVX-512 kernel's inverse loop whatever the labels are numbered).
func (m Mutation) anchor(s string) (int, error) {
	if m.After == "" {
		return 0, nil
	}
	parts := strings.Split(m.After, " >> ")
	if n := strings.Count(s, parts[0]); n != 1 {
		return 0, fmt.Errorf("anchor %q occurs %d times in %s, want 1", parts[0], n, m.File)
	}
	from := strings.Index(s, parts[0]) + len(parts[0])
	for _, p := range parts[1:] {
		i := strings.Index(s[from:], p)
		if i < 0 {
			return 0, fmt.Errorf("anchor %q does not occur in %s after %q", p, m.File, m.After)
		}
		from += i + len(p)
	}
	return from, nil
}

// selectMutations returns the mutations whose name matches run (all for
// ""), after checking that each names a known check.
func selectMutations(all []Mutation, run string) ([]Mutation, error) {
	re, err := regexp.Compile(run)
	if err != nil {
		return nil, err
	}
	var sel []Mutation
	for _, m := range all {
		if _, ok := checks[m.Check]; !ok {
			return nil, fmt.Errorf("mutation %q: unknown check %q", m.Name, m.Check)
		}
		if re.MatchString(m.Name) {
			sel = append(sel, m)
		}
	}
	if len(sel) == 0 {
		return nil, errors.New("no mutation matches -run " + run)
	}
	return sel, nil
}

// checkNames lists the checks the mutations use, once each, in order of
// first use.
func checkNames(ms []Mutation) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.Check] {
			seen[m.Check] = true
			names = append(names, m.Check)
		}
	}
	return names
}

// run executes the check in dir with its environment added to this
// process's, and returns the combined output. Every check runs with
// POSENC_FAILFAST=1: verify's harness then stops a report at its first
// failure (a panic naming it) instead of running the remaining cases and
// variants, which is most of a caught mutation's time; a passing check
// (every baseline, a surviving mutation) runs in full as without it.
func (c Check) run(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "POSENC_FAILFAST=1"), c.Env...)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// buildFailed reports whether go test or posenc verify failed to build
// the code rather than ran it and saw wrong results.
func buildFailed(out string) bool {
	return strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") ||
		strings.Contains(out, "# github.com/posenc/posenc")
}

// firstMatch returns the first line of out containing sub (the first
// non-empty line for ""), trimmed to 160 bytes, or "" for none.
func firstMatch(out, sub string) string {
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && strings.Contains(l, sub) {
			if len(l) > 160 {
				l = l[:160] + "…"
			}
			return l
		}
	}
	return ""
}

// lastLines returns detail as it is when full, else its last line.
func lastLines(detail string, full bool) string {
	detail = strings.TrimSpace(detail)
	if full {
		return "\n" + detail
	}
	if i := strings.LastIndexByte(detail, '\n'); i >= 0 {
		return detail[i+1:]
	}
	return detail
}
