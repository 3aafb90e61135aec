package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestMutationsApply checks every mutation against the repository's files,
// without writing them: its file exists, its anchor and target are found
// as apply requires, and the mutated text differs. A generator change that
// moves a mutation's target fails here before the suite runs.
func TestMutationsApply(t *testing.T) {
	root := filepath.Join("..", "..")
	all, err := allMutations(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.Name] {
			t.Errorf("duplicate mutation name %q", m.Name)
		}
		seen[m.Name] = true
		if _, ok := checks[m.Check]; !ok {
			t.Errorf("%s: unknown check %q", m.Name, m.Check)
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		out, err := m.apply(src)
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		if len(out) != len(src)+len(m.New)-len(m.Old) || string(out) == string(src) {
			t.Errorf("%s: the mutation changed nothing or more than its token", m.Name)
		}
	}
	if len(mutations) < 30 {
		t.Errorf("%d mutations, want at least 30", len(mutations))
	}
}

// TestApply checks apply's rules on a small text: the first target after
// the anchor, a repeated anchor or target refused, a missing one reported.
func TestApply(t *testing.T) {
	src := []byte("A: x y\nB: x y\n")
	for _, c := range []struct {
		m    Mutation
		want string // "" for an error
	}{
		{Mutation{After: "B:", Old: "x", New: "z"}, "A: x y\nB: z y\n"},
		{Mutation{After: "A:", Old: "y", New: "z"}, "A: x z\nB: x y\n"},
		{Mutation{Old: "A: x", New: "A: w"}, "A: w y\nB: x y\n"},
		{Mutation{Old: "x", New: "z"}, ""},              // two targets, no anchor
		{Mutation{After: ": ", Old: "x", New: "z"}, ""}, // two anchors
		{Mutation{After: "B:", Old: "A", New: "z"}, ""}, // nothing after the anchor
	} {
		out, err := c.m.apply(src)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%+v: applied as %q, want an error", c.m, out)
		case c.want != "" && err != nil:
			t.Errorf("%+v: %v", c.m, err)
		case c.want != "" && string(out) != c.want:
			t.Errorf("%+v: %q, want %q", c.m, out, c.want)
		}
	}
}

// TestCopyTree checks that the scratch copy holds the module's files.
func TestCopyTree(t *testing.T) {
	dst := t.TempDir()
	if err := copyTree(filepath.Join("..", ".."), dst); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "generated/llama2_7b/llama2_7b_amd64.s", "templates/rope.cu.tmpl", "tools/mutate/mutations.go"} {
		b, err := os.ReadFile(filepath.Join(dst, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: not copied (%v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); err == nil || !strings.Contains(err.Error(), "no such") {
		t.Errorf(".git was copied (%v)", err)
	}
}

// TestInOrder checks the worker pool: every index worked on once, the
// results handed over in order, no worker running two calls at once, and
// no result handed over after emit stops the run.
func TestInOrder(t *testing.T) {
	for _, jobs := range []int{1, 2, 5} {
		const n = 40
		var mu sync.Mutex
		busy := make([]bool, jobs)
		calls := make([]int, n)
		var got []int
		inOrder(context.Background(), n, jobs, func(ctx context.Context, worker, i int) int {
			mu.Lock()
			if busy[worker] {
				t.Errorf("jobs=%d: worker %d runs two calls at once", jobs, worker)
			}
			busy[worker] = true
			calls[i]++
			mu.Unlock()
			runtime.Gosched()
			mu.Lock()
			busy[worker] = false
			mu.Unlock()
			return i * i
		}, func(i, r int) bool {
			if r != i*i {
				t.Errorf("jobs=%d: result %d for index %d", jobs, r, i)
			}
			got = append(got, i)
			return true
		})
		for i := range n {
			if calls[i] != 1 {
				t.Errorf("jobs=%d: index %d worked on %d times", jobs, i, calls[i])
			}
		}
		if len(got) != n {
			t.Fatalf("jobs=%d: %d results, want %d", jobs, len(got), n)
		}
		for k, i := range got {
			if i != k {
				t.Fatalf("jobs=%d: results in the order %v", jobs, got)
			}
		}

		// Stopping at index 3: nothing after it is handed over, and the
		// calls still running see their context cancelled.
		got = nil
		inOrder(context.Background(), n, jobs, func(ctx context.Context, worker, i int) int {
			if i > 3 {
				<-ctx.Done() // returns only once cancelled
			}
			return i
		}, func(i, r int) bool {
			got = append(got, i)
			return i < 3
		})
		if len(got) != 4 || got[3] != 3 {
			t.Errorf("jobs=%d: stopped at 3, handed over %v", jobs, got)
		}
	}
}

// TestInOrderCancelled checks that a cancelled context starts nothing.
func TestInOrderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inOrder(ctx, 10, 2, func(ctx context.Context, worker, i int) int {
		t.Errorf("index %d worked on after cancellation", i)
		return i
	}, func(i, r int) bool {
		t.Errorf("index %d handed over after cancellation", i)
		return true
	})
}

// TestTrustedChecksRunInCI: the checks whose baseline .ci/run's -trusted
// skips must be go test runs that the README test command has just made
// on the same tree: native ones of any package (go test ./...), arm64
// ones of the packages its qemu half tests. A posenc verify check is never
// trusted (the README command does not run it).
func TestTrustedChecksRunInCI(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`go run \./tools/mutate -trusted '([^']*)'`).FindSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/run does not run tools/mutate with -trusted '…'")
	}
	re := regexp.MustCompile(string(m[1]))
	var n int
	for name, c := range checks {
		if !re.MatchString(name) {
			continue
		}
		n++
		if len(c.Args) < 2 || c.Args[0] != "go" || c.Args[1] != "test" {
			t.Errorf("trusted check %q is not a go test: %v", name, c.Args)
			continue
		}
		pkg := c.Args[len(c.Args)-1]
		if slices.Contains(c.Env, "GOARCH=arm64") && !strings.HasPrefix(pkg, "./generated/") && !strings.HasPrefix(pkg, "./internal/goldens/") && !strings.HasPrefix(pkg, "./internal/kernelfuzz") {
			t.Errorf("trusted check %q tests %s under qemu, which the README command's arm64 half does not", name, pkg)
		}
	}
	if n == 0 {
		t.Errorf("-trusted %q matches no check", m[1])
	}
}
