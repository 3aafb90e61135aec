package gen

// Writing several packages all or nothing: WritePackages stages every
// package in one directory beside them, records a journal (the commit
// point), then moves the packages into place; a run killed after the commit
// point is finished by the next write into the same directory (Recover).

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/internal/scratch"
)

// stagePrefix starts the name of the staging directory WritePackages
// builds every package in, inside the output directory:
// ".posenc-stage-<pid>-<random>". It holds new/<name>/ per package and,
// from the commit point on, the journal.
const stagePrefix = ".posenc-stage-"

// journalName is the journal file in a staging directory; stageNew the
// subdirectory holding the staged packages.
const (
	journalName = "COMMIT"
	stageNew    = "new"
)

// Package is one package for WritePackages: its directory name inside the
// output directory and its files.
type Package struct {
	Name  string
	Files []emit.File
}

// journal is what a staging directory's COMMIT file records: the packages
// to move into place, each with the digest of its new files (which tells a
// recovering run whether new/<name> still holds the new package or, after
// the exchange, the old one), and whether -force was given.
type journal struct {
	Force    bool           `json:"force"`
	Packages []journalEntry `json:"packages"`
}

type journalEntry struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// RefusedError reports the packages WritePackages refused to write before
// writing any (a file where a package directory goes, a directory holding
// files posenc did not generate): nothing was written.
type RefusedError struct {
	Names []string // the refused packages
	Errs  []error  // why, one per name
}

func (e *RefusedError) Error() string   { return errors.Join(e.Errs...).Error() }
func (e *RefusedError) Unwrap() []error { return e.Errs }

// CommitError reports a failure while moving staged packages into place
// (after every package was staged and the journal written). Written lists
// the packages that are new in the output directory now; the others are
// unchanged. When Stage is not empty, it holds the rest of the write and
// its journal: the next write into the directory finishes it (Recover).
type CommitError struct {
	Written    []string
	NotWritten []string
	Stage      string
	Err        error
}

func (e *CommitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "moving the packages into place: %v; ", e.Err)
	if len(e.Written) == 0 {
		b.WriteString("rolled back: nothing written")
	} else {
		fmt.Fprintf(&b, "written: %s; not written: %s", strings.Join(e.Written, ", "), strings.Join(e.NotWritten, ", "))
	}
	if e.Stage != "" {
		fmt.Fprintf(&b, " (%s holds the rest; the next posenc gen into this directory finishes the write, or remove it to abandon it)", e.Stage)
	}
	return b.String()
}

func (e *CommitError) Unwrap() error { return e.Err }

// WritePackages writes every package as out/<name>/, all or nothing:
//
//  1. It first finishes or discards what killed runs left in out (Recover).
//  2. Every target is checked as WritePackage does (a non-directory in its
//     place, or, unless force, a directory holding a file without the posenc
//     header, is refused): any refusal returns a *RefusedError and writes
//     nothing.
//  3. Every package is written (and synced) into one staging directory
//     out/.posenc-stage-<pid>-<random>/new/<name>/. A kill here leaves only
//     that directory, which the next write into out removes.
//  4. The journal out/.posenc-stage-…/COMMIT is written, synced and renamed
//     into place: the commit point. Until that rename no package in out has
//     changed.
//  5. Each package is moved into place as WritePackage does (one
//     renameat2(RENAME_EXCHANGE) on Linux), so each out/<name> is always
//     either its old or its new package. A kill in this phase (one rename
//     per package) leaves some packages new and the rest old, with the
//     journal beside them: the next WritePackages or WritePackage into out
//     (or Recover) moves the rest into place first, so that the run takes
//     effect entirely.
//  6. The journal and the staging directory (now holding the old packages)
//     are removed.
//
// A failure in step 5 rolls the moved packages back (*CommitError). Names
// must be distinct directory names without a path separator or a dot. It
// returns the packages of killed runs that step 1 moved into place.
func WritePackages(out string, pkgs []Package, force bool) (recovered []string, err error) {
	seen := map[string]bool{}
	for _, p := range pkgs {
		if p.Name == "" || strings.ContainsAny(p.Name, `/\.`) || seen[p.Name] {
			return nil, fmt.Errorf("refusing package directory name %q", p.Name)
		}
		seen[p.Name] = true
		for _, f := range p.Files {
			if strings.ContainsAny(f.Name, `/\`) || f.Name == "" || f.Name[0] == '.' {
				return nil, fmt.Errorf("%s: refusing to write file name %q", p.Name, f.Name)
			}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	recovered, err = Recover(out)
	if err != nil {
		return recovered, err
	}
	scratch.RemoveStale(out, tempPrefix) // WritePackage's leftovers
	if err := checkTargets(out, pkgs, force); err != nil {
		return recovered, err
	}

	stage, j, err := stagePackages(out, pkgs, force)
	keep := false
	defer func() {
		if stage != "" && !keep {
			os.RemoveAll(stage)
		}
	}()
	if err != nil {
		return recovered, err
	}
	// Staging can take a while: check the targets again just before the
	// commit point.
	if err := checkTargets(out, pkgs, force); err != nil {
		return recovered, err
	}
	if err := writeJournal(stage, j); err != nil {
		return recovered, err
	}

	// Committed: from here a kill leaves the journal for Recover.
	done, err := commit(out, stage, j, false)
	if err != nil {
		names := names(j)
		if rbErr := rollback(out, stage, done); rbErr != nil {
			keep = true
			return recovered, &CommitError{Written: done, NotWritten: names[len(done):], Stage: stage,
				Err: fmt.Errorf("%w; rolling back: %v", err, rbErr)}
		}
		return recovered, &CommitError{NotWritten: names, Err: err}
	}
	os.Remove(filepath.Join(stage, journalName))
	syncDir(out)
	return recovered, nil
}

// stagePackages writes every package (synced) into a new staging
// directory in out, as new/<name>/, and returns the directory (also on
// error, once made) and the journal to commit it with.
func stagePackages(out string, pkgs []Package, force bool) (string, *journal, error) {
	stage, err := scratch.Dir(out, stagePrefix, "")
	if err != nil {
		return "", nil, err
	}
	j := &journal{Force: force}
	if err := os.Mkdir(filepath.Join(stage, stageNew), 0o755); err != nil {
		return stage, nil, err
	}
	for _, p := range pkgs {
		dir := filepath.Join(stage, stageNew, p.Name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return stage, nil, err
		}
		for _, f := range p.Files {
			if err := writeFileSync(filepath.Join(dir, f.Name), f.Data); err != nil {
				return stage, nil, err
			}
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return stage, nil, err
		}
		syncDir(dir)
		j.Packages = append(j.Packages, journalEntry{Name: p.Name, Digest: digest(p.Files)})
	}
	syncDir(filepath.Join(stage, stageNew))
	return stage, j, nil
}

// checkTargets checks every package's target directory (checkTarget),
// reporting every refusal.
func checkTargets(out string, pkgs []Package, force bool) error {
	var refused RefusedError
	for _, p := range pkgs {
		if err := checkTarget(filepath.Join(out, p.Name), force); err != nil {
			refused.Names = append(refused.Names, p.Name)
			refused.Errs = append(refused.Errs, fmt.Errorf("%s: %w", p.Name, err))
		}
	}
	if len(refused.Names) > 0 {
		return &refused
	}
	return nil
}

// commit moves every package of j from stage into out, in the journal's
// order, and returns the names moved. When recovering (the journal of a
// killed run) it skips the packages already moved: new/<name> is gone (a
// two-step swap's last rename did not run) or holds other files than the
// new package (the old package, after the exchange).
func commit(out, stage string, j *journal, recovering bool) ([]string, error) {
	var done []string
	for _, e := range j.Packages {
		src := filepath.Join(stage, stageNew, e.Name)
		dst := filepath.Join(out, e.Name)
		if recovering {
			d, err := dirDigest(src)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return done, err
			}
			if d != e.Digest {
				continue
			}
			if err := checkTarget(dst, j.Force); err != nil {
				return done, err
			}
		}
		if err := swapDir(src, dst); err != nil {
			return done, fmt.Errorf("%s: %w", e.Name, err)
		}
		done = append(done, e.Name)
	}
	return done, nil
}

// rollback puts back the old packages of the names commit moved, newest
// first: it exchanges them again, or, for a package that had no old
// directory, moves the new one back into the staging directory. The
// journal is removed once every package is back.
func rollback(out, stage string, done []string) error {
	for i := len(done) - 1; i >= 0; i-- {
		src := filepath.Join(stage, stageNew, done[i])
		dst := filepath.Join(out, done[i])
		var err error
		if _, serr := os.Lstat(src); serr == nil {
			err = swapDir(src, dst)
		} else {
			err = os.Rename(dst, src)
		}
		if err != nil {
			return err
		}
	}
	return os.Remove(filepath.Join(stage, journalName))
}

// Recover finishes or discards what killed WritePackages runs left in out
// (staging directories whose owning process has exited; a live run's are
// never touched): one killed before its commit point is removed; one killed
// after it has its remaining packages moved into place, then is removed. It
// returns the packages it moved. Each staging directory is first renamed to
// one of this process, so two runs never finish the same one.
func Recover(out string) ([]string, error) {
	var moved []string
	for _, stale := range scratch.Stale(out, stagePrefix) {
		if _, err := os.Stat(filepath.Join(stale, journalName)); os.IsNotExist(err) {
			os.RemoveAll(stale)
			continue
		}
		stage := filepath.Join(out, stagePrefix+strconv.Itoa(os.Getpid())+"-recover-"+strconv.FormatUint(rand.Uint64(), 36))
		if err := os.Rename(stale, stage); err != nil {
			if os.IsNotExist(err) {
				continue // another run claimed it
			}
			return moved, err
		}
		j, err := readJournal(stage)
		if err != nil {
			return moved, fmt.Errorf("%s: unreadable journal of a killed posenc run: %v (remove the directory to abandon that run's write)", stage, err)
		}
		done, err := commit(out, stage, j, true)
		moved = append(moved, done...)
		if err != nil {
			return moved, fmt.Errorf("finishing the write of a killed posenc run (journal %s): %w (remove that directory to abandon the write)", filepath.Join(stage, journalName), err)
		}
		os.Remove(filepath.Join(stage, journalName))
		os.RemoveAll(stage)
	}
	return moved, nil
}

// names lists the journal's package names in order.
func names(j *journal) []string {
	out := make([]string, len(j.Packages))
	for i, e := range j.Packages {
		out[i] = e.Name
	}
	return out
}

// writeJournal writes j as stage/COMMIT: into a temporary file that is
// synced and then renamed into place, and the directory synced, so the
// journal exists entirely or not at all. The rename is the commit point.
func writeJournal(stage string, j *journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := filepath.Join(stage, journalName+".tmp")
	if err := writeFileSync(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(stage, journalName)); err != nil {
		return err
	}
	syncDir(stage)
	return nil
}

// readJournal reads and checks stage/COMMIT.
func readJournal(stage string) (*journal, error) {
	data, err := os.ReadFile(filepath.Join(stage, journalName))
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	for _, e := range j.Packages {
		if e.Name == "" || strings.ContainsAny(e.Name, `/\.`) || len(e.Digest) != 2*sha256.Size {
			return nil, fmt.Errorf("bad entry %q", e.Name)
		}
	}
	return &j, nil
}

// digest identifies a package's files: SHA-256 over each file's name,
// length and bytes, in name order.
func digest(files []emit.File) string {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b emit.File) int { return strings.Compare(a.Name, b.Name) })
	h := sha256.New()
	var n [8]byte
	for _, f := range sorted {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f.Name)))
		h.Write(n[:])
		h.Write([]byte(f.Name))
		binary.LittleEndian.PutUint64(n[:], uint64(len(f.Data)))
		h.Write(n[:])
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dirDigest is digest of the regular files in dir; a subdirectory makes
// it differ from any package's.
func dirDigest(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var files []emit.File
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return "not a package", nil
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		files = append(files, emit.File{Name: e.Name(), Data: b})
	}
	return digest(files), nil
}

// syncDir flushes a directory's entries to disk, best effort: some systems
// cannot sync a directory, and a kill (unlike a power loss) loses nothing
// the kernel already has.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
