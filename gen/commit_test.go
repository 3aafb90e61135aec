package gen

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
)

// namedFiles is pkgFiles for package name.
func namedFiles(name, version string) []emit.File {
	h := emit.Header("zoo/"+name+".yaml") + "\n"
	return []emit.File{
		{Name: name + ".go", Data: []byte(h + "package " + name + " // " + version + "\n")},
		{Name: name + "_" + version + ".go", Data: []byte(h + "package " + name + "\n")},
	}
}

// testPkgs returns packages a, b, c, d in version v.
func testPkgs(v string) []Package {
	var pkgs []Package
	for _, n := range []string{"a", "b", "c", "d"} {
		pkgs = append(pkgs, Package{Name: n, Files: namedFiles(n, v)})
	}
	return pkgs
}

// state describes out: each package's version ("v1", "v2", "-" when
// absent, "?" otherwise) and any other entries.
func state(t *testing.T, out string) string {
	t.Helper()
	var parts []string
	for _, n := range []string{"a", "b", "c", "d"} {
		m := map[string]string{}
		fi, err := os.Stat(filepath.Join(out, n))
		if err == nil && fi.IsDir() {
			m = readDir(t, filepath.Join(out, n))
		}
		v := "?"
		switch {
		case err == nil && !fi.IsDir():
			v = "file"
		case len(m) == 0:
			v = "-"
		case len(m) == 2 && m[n+"_v1.go"] != "" && strings.HasSuffix(m[n+".go"], "// v1\n"):
			v = "v1"
		case len(m) == 2 && m[n+"_v2.go"] != "" && strings.HasSuffix(m[n+".go"], "// v2\n"):
			v = "v2"
		}
		parts = append(parts, n+"="+v)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if len(e.Name()) > 1 {
			parts = append(parts, "extra "+e.Name())
		}
	}
	return strings.Join(parts, " ")
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no kill(pid, 0): leftovers are never known to be stale")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	return cmd.Process.Pid
}

// setupOld writes version v1 of a, b and c (d is absent: its commit is a
// plain rename).
func setupOld(t *testing.T, out string) {
	t.Helper()
	if _, err := WritePackages(out, testPkgs("v1")[:3], false); err != nil {
		t.Fatal(err)
	}
}

const oldState = "a=v1 b=v1 c=v1 d=-"
const newState = "a=v2 b=v2 c=v2 d=v2"

func TestWritePackages(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	setupOld(t, out)
	if got := state(t, out); got != oldState {
		t.Fatalf("after the first write: %s", got)
	}
	rec, err := WritePackages(out, testPkgs("v2"), false)
	if err != nil || len(rec) != 0 {
		t.Fatalf("WritePackages: %v, %v", rec, err)
	}
	if got := state(t, out); got != newState {
		t.Fatalf("after the second write: %s", got)
	}
}

// One refused package (a foreign file in c, a file where d goes) means no
// package is written, and every refusal is reported; -force replaces the
// foreign directory but not the file.
func TestWritePackagesRefusesAllOrNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	setupOld(t, out)
	if err := os.WriteFile(filepath.Join(out, "c", "mine.go"), []byte("package c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "d"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := WritePackages(out, testPkgs("v2"), false)
	var refused *RefusedError
	if !errors.As(err, &refused) || fmt.Sprint(refused.Names) != "[c d]" || !errors.Is(err, ErrForeignFiles) {
		t.Fatalf("WritePackages: %v, want c and d refused", err)
	}
	if got := state(t, out); !strings.HasPrefix(got, "a=v1 b=v1 c=? d=") {
		t.Fatalf("after the refusal: %s", got)
	}
	if m := readDir(t, filepath.Join(out, "c")); len(m) != 3 || !strings.HasSuffix(m["c.go"], "// v1\n") {
		t.Errorf("after the refusal c holds %v", m)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 4 {
		t.Errorf("after the refusal %s holds %d entries, want a, b, c, d", out, len(ents))
	}
	_, err = WritePackages(out, testPkgs("v2"), true)
	if !errors.As(err, &refused) || fmt.Sprint(refused.Names) != "[d]" {
		t.Fatalf("WritePackages -force: %v, want only d refused", err)
	}
	if err := os.Remove(filepath.Join(out, "d")); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePackages(out, testPkgs("v2"), true); err != nil {
		t.Fatal(err)
	}
	if got := state(t, out); got != newState {
		t.Fatalf("after the forced write: %s", got)
	}
}

// TestRecoverEveryKillPoint builds, by hand, what a WritePackages killed at
// each point leaves (staged without journal; journal written and the first
// k packages moved; the halves of a two-step swap), gives the staging
// directory to an exited process, and requires: before the commit point
// the packages are all old and Recover removes the leftovers; after it,
// Recover moves the rest into place, so all are new. Nothing may be left.
func TestRecoverEveryKillPoint(t *testing.T) {
	pid := deadPID(t)
	type kill struct {
		name      string
		journal   bool
		moved     int // packages swapped in before the kill
		twoStepAt int // package whose two-step swap was cut (-1: none)
		half      int // 1: killed after moving the old package aside; 2: after moving the new one in
	}
	var kills []kill
	kills = append(kills, kill{"staged, no journal", false, 0, -1, 0})
	for k := 0; k <= 4; k++ {
		kills = append(kills, kill{fmt.Sprintf("journal, %d moved", k), true, k, -1, 0})
	}
	for _, h := range []int{1, 2} {
		kills = append(kills, kill{fmt.Sprintf("journal, 1 moved, two-step swap of b cut after step %d", h), true, 1, 1, h})
	}
	for _, k := range kills {
		t.Run(k.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			setupOld(t, out)
			pkgs := testPkgs("v2")
			stage, j, err := stagePackages(out, pkgs, false)
			if err != nil {
				t.Fatal(err)
			}
			if k.journal {
				if err := writeJournal(stage, j); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < k.moved; i++ {
				if err := swapDir(filepath.Join(stage, stageNew, pkgs[i].Name), filepath.Join(out, pkgs[i].Name)); err != nil {
					t.Fatal(err)
				}
			}
			if k.twoStepAt >= 0 {
				n := pkgs[k.twoStepAt].Name
				tmp, dir := filepath.Join(stage, stageNew, n), filepath.Join(out, n)
				if err := os.Rename(dir, tmp+".old"); err != nil {
					t.Fatal(err)
				}
				if k.half == 2 {
					if err := os.Rename(tmp, dir); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !k.journal {
				if got := state(t, out); !strings.HasPrefix(got, oldState) {
					t.Fatalf("killed before the commit point: %s, want every package old", got)
				}
			}
			dead := filepath.Join(out, stagePrefix+strconv.Itoa(pid)+"-killed")
			if err := os.Rename(stage, dead); err != nil {
				t.Fatal(err)
			}

			moved, err := Recover(out)
			if err != nil {
				t.Fatal(err)
			}
			want := oldState
			if k.journal {
				want = newState
			}
			if got := state(t, out); got != want {
				t.Fatalf("after Recover: %s, want %s (moved %v)", got, want, moved)
			}
			wantMoved := 0
			if k.journal {
				wantMoved = 4 - k.moved
				if k.half == 2 {
					wantMoved--
				}
			}
			if len(moved) != wantMoved {
				t.Errorf("Recover moved %v, want %d packages", moved, wantMoved)
			}
		})
	}
}

// A write into a directory holding a killed run's committed staging
// directory finishes that run first, then writes its own packages (which
// therefore win).
func TestWritePackagesFinishesKilledRun(t *testing.T) {
	pid := deadPID(t)
	out := filepath.Join(t.TempDir(), "out")
	setupOld(t, out)
	stage, j, err := stagePackages(out, testPkgs("v2"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJournal(stage, j); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(stage, filepath.Join(out, stagePrefix+strconv.Itoa(pid)+"-killed")); err != nil {
		t.Fatal(err)
	}
	rec, err := WritePackages(out, testPkgs("v1")[:1], false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rec) != "[a b c d]" {
		t.Errorf("recovered %v, want [a b c d]", rec)
	}
	if got := state(t, out); got != "a=v1 b=v2 c=v2 d=v2" {
		t.Errorf("after the write: %s", got)
	}
}

// A failure while moving packages into place (here: the fourth package's
// staged directory is gone) rolls back the packages already moved.
func TestWritePackagesRollsBack(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	setupOld(t, out)
	pkgs := testPkgs("v2")
	stage, j, err := stagePackages(out, pkgs, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJournal(stage, j); err != nil {
		t.Fatal(err)
	}
	// d's staged package vanishes: its move fails.
	if err := os.RemoveAll(filepath.Join(stage, stageNew, "d")); err != nil {
		t.Fatal(err)
	}
	done, err := commit(out, stage, j, false)
	if err == nil {
		t.Fatalf("commit moved %v without failing", done)
	}
	if len(done) != 3 {
		t.Fatalf("commit moved %v before failing (%v), want a, b, c", done, err)
	}
	if err := rollback(out, stage, done); err != nil {
		t.Fatal(err)
	}
	if got := state(t, out); !strings.HasPrefix(got, oldState+" extra "+stagePrefix) {
		t.Fatalf("after the rollback: %s", got)
	}
	if _, err := os.Stat(filepath.Join(stage, journalName)); !os.IsNotExist(err) {
		t.Errorf("the rollback left the journal: %v", err)
	}
	os.RemoveAll(stage)
}
