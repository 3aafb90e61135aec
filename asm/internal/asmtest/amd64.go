package asmtest

import (
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
)

var kernelBench = flag.String("kernelbench", "", "also run the generated test packages' benchmarks matching this -bench pattern (slow; e.g. -kernelbench=.)")

// Pkg is one generated test package: its directory (and package name) and
// its files, generated ones and harnesses.
type Pkg struct {
	Dir   string
	Files []emit.File
}

// RunAMD64 writes pkgs into a temporary directory inside the calling
// package's directory (so they build in the posenc module) together with
// package kerneltest: testdata/kerneltest/common_test.go of this package,
// the caller's test files tests (paths from its directory) and
// config_test.go, which imports every package of pkgs and holds config (the
// case lists and constants the tests read). It vets everything, runs the
// tests and returns their verbose output. It skips off amd64.
func RunAMD64(t *testing.T, pkgs []Pkg, config string, tests ...string) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the generated kernels run on amd64 only")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(wd, "_amd64test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rel, err := filepath.Rel(ModuleRoot(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	importBase := "github.com/posenc/posenc/" + filepath.ToSlash(rel)

	var cfg strings.Builder
	cfg.WriteString("package kerneltest\n\nimport (\n")
	var vet []string
	for _, p := range pkgs {
		fmt.Fprintf(&cfg, "\t%q\n", importBase+"/"+p.Dir)
		for _, f := range p.Files {
			write(t, filepath.Join(dir, p.Dir, f.Name), f.Data)
		}
		vet = append(vet, "./"+p.Dir)
	}
	cfg.WriteString(")\n\n" + config)
	src, err := format.Source([]byte(cfg.String()))
	if err != nil {
		t.Fatalf("config_test.go: %v\n%s", err, cfg.String())
	}
	write(t, filepath.Join(dir, "config_test.go"), src)
	for _, name := range append([]string{filepath.Join(sourceDir(), "testdata", "kerneltest", "common_test.go")}, tests...) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, filepath.Base(name)), src)
	}
	RunGo(t, dir, nil, append(append([]string{"vet"}, vet...), ".")...)
	out := RunGo(t, dir, nil, "test", "-count=1", "-v", ".")
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "max error") || strings.Contains(line, "SKIP") || strings.Contains(line, "skipped") {
			t.Log(strings.TrimSpace(line))
		}
	}
	if *kernelBench != "" {
		t.Log("\n" + RunGo(t, dir, nil, "test", "-count=3", "-run", "^$", "-bench", *kernelBench, "-benchtime", "1s", "."))
	}
	return out
}
