package gen_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// pkgFiles is a package's files by name.
type pkgFiles map[string][]byte

// tempPrefix starts the temporary directories gen.WritePackage builds a
// package in before swapping it into place; stagePrefix the staging
// directory gen.WritePackages (posenc gen) builds every package in, whose
// COMMIT file (journalName) marks the commit point.
const (
	tempPrefix  = ".posenc-new-"
	stagePrefix = ".posenc-stage-"
	journalName = "COMMIT"
)

// TestInterruptedGen builds the posenc binary, fills a directory with an
// "old" generation of the zoo (llama2_7b from a copy of its spec with another
// base, every other package with a marker line appended to each file and an
// extra file), then repeatedly runs `posenc gen -force -o DIR` over it and
// kills it with SIGKILL at a random moment of its run. After every kill:
//
//   - each DIR/<name>/ must be, file set and bytes, exactly the old package
//     or exactly the new one (gen.Generate's output), never a mix, and no
//     package may be missing (on Linux the swap is one
//     renameat2(RENAME_EXCHANGE));
//   - the run is all or nothing: unless it was killed after its commit point
//     (a staging directory ".posenc-stage-*" holding the journal COMMIT is
//     left), every package is old or every package is new;
//   - gen.Recover, which every later write into DIR runs first, must leave
//     every package old, or every package new when the run had committed,
//     and no staging directory.
//
// Temporary directories (".posenc-new-*", ".posenc-stage-*") are not
// packages. The test requires a final, uninterrupted `posenc gen` to
// succeed, to leave every package new and no temporary directory behind.
func TestInterruptedGen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the posenc binary; skipped under -short")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "posenc")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/posenc/posenc/cmd/posenc").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	zoo, err := spec.Zoo()
	if err != nil {
		t.Fatal(err)
	}
	newGen, oldGen := map[string]pkgFiles{}, map[string]pkgFiles{}
	for _, s := range zoo {
		files, err := gen.Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		newGen[s.Name] = pkgFiles{}
		for _, f := range files {
			newGen[s.Name][f.Name] = f.Data
		}
		oldGen[s.Name] = oldPackage(t, s.Name, newGen[s.Name])
	}

	// The binary must write exactly gen.Generate's bytes (it would not if the
	// sources changed between building the test and the binary).
	ref := filepath.Join(tmp, "ref")
	if out, err := exec.Command(bin, "gen", "-o", ref).CombinedOutput(); err != nil {
		t.Fatalf("posenc gen: %v\n%s", err, out)
	}
	if nOld, nNew, _ := checkPackages(t, ref, oldGen, newGen, -1); t.Failed() || nOld != 0 || nNew != len(newGen) {
		t.Fatalf("posenc gen wrote %d new and %d old packages of %d, want gen.Generate's output", nNew, nOld, len(newGen))
	}

	dir := filepath.Join(tmp, "out")
	writeOld := func() {
		for name, files := range oldGen {
			if err := gen.WritePackage(filepath.Join(dir, name), toEmit(files), false); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Kill at a random moment of a run: time one complete run first.
	writeOld()
	start := time.Now()
	if out, err := exec.Command(bin, "gen", "-force", "-o", dir).CombinedOutput(); err != nil {
		t.Fatalf("posenc gen: %v\n%s", err, out)
	}
	full := time.Since(start)

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	// About 10 s of kills (at most 30), each of the three moments in turn.
	deadline := time.Now().Add(10 * time.Second)
	var runs, stale int
	outcomes := map[string]int{}
	for time.Now().Before(deadline) && runs < 30 {
		writeOld()
		cmd := exec.Command(bin, "gen", "-force", "-o", dir)
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var delay time.Duration
		switch runs % 3 {
		case 0: // any moment of the run
			delay = time.Duration(r.Int64N(int64(full) * 11 / 10))
			time.Sleep(delay)
		case 1: // while staging: up to 200 ms after the staging directory appears
			delay = waitFor(dir, stagePrefix+"*", 2*full) + time.Duration(r.IntN(200))*time.Millisecond
			time.Sleep(delay - time.Since(start))
		case 2: // right after the commit point, while moving the packages into place
			delay = waitFor(dir, stagePrefix+"*/"+journalName, 2*full)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		runs++

		nOld, nNew, tmps := checkPackages(t, dir, oldGen, newGen, delay)
		if t.Failed() {
			return
		}
		stale = tmps
		committed := hasJournal(t, dir)
		switch {
		case nNew == 0:
			outcomes["all old"]++
		case nOld == 0:
			outcomes["all new"]++
		case committed:
			outcomes["killed while moving the packages into place"]++
		default:
			t.Fatalf("kill after %v: %d packages old and %d new, and no committed staging directory: the run was not all or nothing", delay, nOld, nNew)
		}
		moved, err := gen.Recover(dir)
		if err != nil {
			t.Fatalf("kill after %v: gen.Recover: %v", delay, err)
		}
		nOld, nNew, tmps = checkPackages(t, dir, oldGen, newGen, delay)
		if t.Failed() {
			return
		}
		switch {
		case committed && nOld != 0:
			t.Fatalf("kill after %v: after gen.Recover of a committed run (moved %v), %d packages are old", delay, moved, nOld)
		case !committed && nNew != 0 && nOld != 0:
			t.Fatalf("kill after %v: after gen.Recover, %d packages old and %d new", delay, nOld, nNew)
		case stagingDirs(t, dir) != 0:
			t.Fatalf("kill after %v: gen.Recover left a staging directory of the killed run", delay)
		}
	}
	t.Logf("%d killed runs (a complete run takes %v): %v; %d stale temporary directories left", runs, full, outcomes, stale)

	// A complete run succeeds beside the stale temporary directories.
	if out, err := exec.Command(bin, "gen", "-force", "-o", dir).CombinedOutput(); err != nil {
		t.Fatalf("posenc gen after the interrupted runs: %v\n%s", err, out)
	}
	nOld, _, tmps := checkPackages(t, dir, oldGen, newGen, -1)
	if nOld != 0 {
		t.Errorf("after a complete posenc gen, %d packages are still old", nOld)
	}
	if tmps != 0 {
		t.Errorf("after a complete posenc gen, %d temporary directories of killed runs are left", tmps)
	}
}

// oldPackage returns the "old" generation of the package name, given its
// current files: llama2_7b regenerated from its spec with base 500000;
// any other package with a marker comment appended to every file and one
// extra file, so that old and new differ in both bytes and file set.
func oldPackage(t *testing.T, name string, cur pkgFiles) pkgFiles {
	t.Helper()
	if name == "llama2_7b" {
		src, err := os.ReadFile("../spec/zoo/llama2_7b.yaml")
		if err != nil {
			t.Fatal(err)
		}
		mod := bytes.Replace(src, []byte("base: 10000"), []byte("base: 500000"), 1)
		if bytes.Equal(mod, src) {
			t.Fatal("llama2_7b.yaml has no 'base: 10000' line to change")
		}
		s, err := spec.Parse("zoo/llama2_7b.yaml", mod)
		if err != nil {
			t.Fatal(err)
		}
		files, err := gen.Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		old := pkgFiles{}
		for _, f := range files {
			old[f.Name] = f.Data
		}
		return old
	}
	old := pkgFiles{}
	var header []byte
	for fn, data := range cur {
		old[fn] = append(slices.Clip(data), "\n// old generation\n"...)
		if strings.HasSuffix(fn, ".go") && header == nil {
			line, _, _ := bytes.Cut(data, []byte("\n"))
			header = slices.Clone(line) // appending to line would overwrite data
		}
	}
	old[name+"_old.go"] = append(append(header, "\n\npackage "...), name+"\n"...)
	return old
}

// checkPackages requires every directory in dir other than the temporary
// ones to be a zoo package identical to its old or its new generation, and
// every zoo package to be present; it returns how many are old and new and
// how many temporary directories there are. delay (−1 for a complete run) is
// for messages.
func checkPackages(t *testing.T, dir string, oldGen, newGen map[string]pkgFiles, delay time.Duration) (nOld, nNew, tmps int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) || strings.HasPrefix(e.Name(), stagePrefix) {
			tmps++
			continue
		}
		want, ok := newGen[e.Name()]
		if !ok || !e.IsDir() {
			t.Errorf("kill after %v: %s is not a zoo package", delay, e.Name())
			continue
		}
		seen[e.Name()] = true
		got := readPkg(t, filepath.Join(dir, e.Name()))
		switch {
		case samePkg(got, want):
			nNew++
		case samePkg(got, oldGen[e.Name()]):
			nOld++
		default:
			t.Errorf("kill after %v: %s is neither the old nor the new package: %s",
				delay, e.Name(), pkgDiff(got, want, oldGen[e.Name()]))
		}
	}
	for name := range newGen {
		if !seen[name] && runtime.GOOS == "linux" {
			t.Errorf("kill after %v: package %s is missing", delay, name)
		}
	}
	return nOld, nNew, tmps
}

// waitFor polls dir until a path matching pattern exists, at most limit
// long, and returns how long it waited.
func waitFor(dir, pattern string, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	return time.Since(start)
}

// hasJournal reports whether dir holds a staging directory with a
// journal: a posenc gen killed after its commit point.
func hasJournal(t *testing.T, dir string) bool {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, stagePrefix+"*", journalName))
	if err != nil {
		t.Fatal(err)
	}
	return len(m) > 0
}

// stagingDirs counts dir's staging directories.
func stagingDirs(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, stagePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// readPkg reads every file of a package directory.
func readPkg(t *testing.T, dir string) pkgFiles {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := pkgFiles{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = b
	}
	return got
}

// samePkg reports whether two packages hold the same files with the same bytes.
func samePkg(a, b pkgFiles) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

// toEmit returns a package's files in name order, as gen.WritePackage takes them.
func toEmit(files pkgFiles) []emit.File {
	var out []emit.File
	for _, name := range slices.Sorted(maps.Keys(files)) {
		out = append(out, emit.File{Name: name, Data: files[name]})
	}
	return out
}

// pkgDiff describes how got differs from the new and the old package.
func pkgDiff(got, newPkg, oldPkg pkgFiles) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(got)) {
		data := got[name]
		state := "neither"
		switch {
		case bytes.Equal(data, newPkg[name]):
			state = "new"
		case bytes.Equal(data, oldPkg[name]):
			state = "old"
		}
		fmt.Fprintf(&b, " %s (%d bytes: %s)", name, len(data), state)
	}
	return b.String()
}
