// Package scratch makes temporary directories whose names carry the
// creating process's id, so that a later run can tell the leftovers of a
// killed run (the owner is gone) from the live directories of a concurrent
// one (the owner still runs) and remove only the former.
package scratch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Dir makes a new directory in parent named prefix + "<pid>-<label>-<random>"
// ("<pid>-<random>" when label is empty); its owner is the calling process.
func Dir(parent, prefix, label string) (string, error) {
	if label != "" {
		label += "-"
	}
	return os.MkdirTemp(parent, prefix+strconv.Itoa(os.Getpid())+"-"+label)
}

// Owner returns the process id recorded in name, a base name that Dir made
// with prefix (possibly followed by a suffix such as ".old"), and whether
// name has that shape.
func Owner(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	// rest is <pid>-[<label>-]<random>[suffix]; the pid holds no dash.
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 || strconv.Itoa(n) != pid {
		return 0, false
	}
	return n, true
}

// RemoveStale removes the entries of parent that Dir made with prefix and
// whose owning process no longer runs on this machine. Entries of a live
// process, of the caller, or whose owner cannot be determined are kept, so
// a concurrent run never loses its directory. It returns the removed paths;
// errors (an unreadable parent, an entry removed by another cleaner) are
// ignored: removing leftovers is best effort.
func RemoveStale(parent, prefix string) []string {
	var removed []string
	for _, p := range Stale(parent, prefix) {
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// Stale returns the paths of the entries of parent that Dir made with
// prefix and whose owning process no longer runs on this machine (never the
// caller's, a live process's, or one whose owner cannot be determined), in
// name order. An unreadable parent gives none.
func Stale(parent, prefix string) []string {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var stale []string
	for _, e := range ents {
		pid, ok := Owner(e.Name(), prefix)
		if !ok || pid == os.Getpid() || !processGone(pid) {
			continue
		}
		stale = append(stale, filepath.Join(parent, e.Name()))
	}
	return stale
}
