package asmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/posenc/posenc/internal/emit"
)

// QEMUCase is one generated NEON test package.
type QEMUCase struct {
	Package  string
	Files    []emit.File // the generated <pkg>_arm64.s and <pkg>_arm64.go
	Variants string      // the <pkg>_variants.go stand-in (QEMUVariants)
	Test     string      // the <pkg>_test.go body
	Extra    string      // more test helpers (rel_test.go), or ""
}

// NeedQEMU returns the qemu-aarch64-static path ("" when the go tool's
// host is arm64, which runs the test binaries natively), skipping the test
// when it is missing unless POSENC_REQUIRE_QEMU is set (CI), where it
// fails. The go tool's host decides, not this test's GOARCH: a test run
// under qemu itself (GOARCH=arm64 go test -exec qemu-aarch64-static) still
// starts an amd64 go tool, whose test binaries need qemu too.
func NeedQEMU(t *testing.T) string {
	t.Helper()
	if out, err := exec.Command(GoTool(t), "env", "GOHOSTARCH").Output(); err == nil && strings.TrimSpace(string(out)) == "arm64" {
		return ""
	}
	q, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		if os.Getenv("POSENC_REQUIRE_QEMU") != "" {
			t.Fatalf("qemu-aarch64-static not found and POSENC_REQUIRE_QEMU is set")
		}
		t.Skip("qemu-aarch64-static not installed")
	}
	return q
}

// RunQEMU writes one package per case into a temporary module inside the
// posenc module, each with the shared helpers of qemuCommon, vets it for
// arm64 (asmdecl) and runs its tests under qemu-aarch64-static (natively on
// arm64). It returns the verbose test output, failing t unless every case
// passed a test. It skips in -short mode.
func RunQEMU(t *testing.T, cases []QEMUCase) string {
	t.Helper()
	if testing.Short() {
		t.Skip("short")
	}
	return runCases(t, cases, "arm64", NeedQEMU(t))
}

// RunNativeAMD64 is RunQEMU for packages of generated AVX kernels
// (QEMUCase.Files holding <pkg>_amd64.s and <pkg>_amd64.go): vetted for
// amd64 and run natively. It skips off amd64.
func RunNativeAMD64(t *testing.T, cases []QEMUCase) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the generated kernels run on amd64 only")
	}
	return runCases(t, cases, "amd64", "")
}

// runCases writes, vets and runs cases for goarch, under exec when set.
func runCases(t *testing.T, cases []QEMUCase, goarch, qemu string) string {
	t.Helper()
	// arm64: a module of its own. amd64: inside the calling package's
	// directory, in the posenc module, whose go.mod provides the
	// golang.org/x/sys/cpu that the AVX registration imports.
	parent, pattern := ModuleRoot(t), ".arm64test-*"
	if goarch == "amd64" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		parent, pattern = wd, "_amd64native-*"
	}
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if goarch == "arm64" {
		write(t, filepath.Join(dir, "go.mod"), []byte("module arm64test\n\ngo 1.26\n"))
	}
	for _, c := range cases {
		pd := filepath.Join(dir, c.Package)
		for _, f := range c.Files {
			write(t, filepath.Join(pd, f.Name), f.Data)
		}
		write(t, filepath.Join(pd, c.Package+"_variants.go"), []byte(c.Variants))
		if c.Extra != "" {
			write(t, filepath.Join(pd, "rel_test.go"), []byte(c.Extra))
		}
		write(t, filepath.Join(pd, "common_test.go"), []byte(fmt.Sprintf(qemuCommon, c.Package)))
		write(t, filepath.Join(pd, c.Package+"_test.go"), []byte(c.Test))
	}
	env := []string{"GOARCH=" + goarch, "GOWORK=off", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0"}
	RunGo(t, dir, env, "vet", "./...")
	args := []string{"test", "-count=1", "-v", "-timeout=0"}
	if d, ok := t.Deadline(); ok {
		// The inner tests get what is left of ours (the exp sweep with
		// -neonexpstride=1 needs more than go test's default 10 minutes).
		args[len(args)-1] = "-timeout=" + time.Until(d).Round(time.Second).String()
	}
	if qemu != "" {
		args = append(args, "-exec", qemu)
	}
	out := RunGo(t, dir, env, append(args, "./...")...)
	if os.Getenv("ARM64_DEBUG") != "" {
		t.Log(out)
	}
	if n := strings.Count(out, "--- PASS"); n < len(cases) {
		t.Errorf("only %d tests passed:\n%s", n, out)
	}
	return out
}

// LogMatches logs the first match in out of each regular expression, or
// every match when all is set.
func LogMatches(t *testing.T, out string, all bool, res ...string) {
	t.Helper()
	for _, re := range res {
		n := 1
		if all {
			n = -1
		}
		for _, m := range regexp.MustCompile(re).FindAllString(out, n) {
			t.Log(m)
		}
	}
}
