package cudahost

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The emulation header (with the C++ library headers it includes) is about
// a quarter of a driver's compile time with GCC, and every build compiles
// it again. precompiledHeader compiles it once per header, compiler and
// flags into a directory under the user's cache directory that every later
// build, in this process or another, puts on its include path: GCC takes
// HeaderName.gch from there when its flags match the build's, and the
// header beside it otherwise.

// pchKeep is how long an unused directory of another header or compiler
// stays before a new one removes it.
const pchKeep = 7 * 24 * time.Hour

var (
	pchMu   sync.Mutex
	pchDirs = map[string]string{} // compiler path → its directory ("": none)
)

// precompiledHeader returns the directory holding HeaderName and its
// precompiled form for compiler cxx, building it the first time; "" when
// cxx is not GCC, there is no cache directory, or the build fails (the
// caller then copies the header beside the driver, as before). Concurrent
// first calls (parallel tests) wait for one build instead of each making
// their own.
func precompiledHeader(cxx string) string {
	pchMu.Lock()
	defer pchMu.Unlock()
	d, ok := pchDirs[cxx]
	if !ok {
		d = buildPCH(cxx)
		pchDirs[cxx] = d
	}
	return d
}

// buildPCH makes (or finds) the directory of precompiledHeader. A new
// directory is built under a temporary name and renamed into place, so a
// concurrent build in another process finds either nothing or a whole
// directory.
func buildPCH(cxx string) string {
	version, err := exec.Command(cxx, "--version").Output()
	if err != nil || strings.Contains(string(version), "clang") {
		return "" // clang's precompiled headers work differently
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	root := filepath.Join(cache, "posenc-cudahost")
	abs, err := exec.LookPath(cxx)
	if err != nil {
		return ""
	}
	h := sha256.New()
	for _, part := range append([]string{Header, abs, string(version)}, hostFlags...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	dir := filepath.Join(root, "pch-"+hex.EncodeToString(h.Sum(nil))[:16])
	gch := filepath.Join(dir, HeaderName+".gch")
	if _, err := os.Stat(gch); err == nil {
		now := time.Now()
		os.Chtimes(dir, now, now) // in use: not removed by pruneStale
		return dir
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return ""
	}
	tmp, err := os.MkdirTemp(root, "tmp-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(tmp) // left over only when the rename did not happen
	hdr := filepath.Join(tmp, HeaderName)
	if err := os.WriteFile(hdr, []byte(Header), 0o644); err != nil {
		return ""
	}
	args := append(append([]string(nil), hostFlags...), "-w", "-x", "c++-header", "-o", hdr+".gch", hdr)
	if err := exec.Command(cxx, args...).Run(); err != nil {
		return ""
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process renamed its directory first: use that one.
		if _, err := os.Stat(gch); err != nil {
			return ""
		}
	}
	pruneStale(root, dir)
	return dir
}

// pruneStale removes the directories under root other than keep (other
// headers or compilers, and temporary ones of killed builds) that have not
// been used for pchKeep.
func pruneStale(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if info, err := e.Info(); err == nil && p != keep && time.Since(info.ModTime()) > pchKeep {
			os.RemoveAll(p)
		}
	}
}
