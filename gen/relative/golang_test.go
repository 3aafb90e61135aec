package relative

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/posenc/posenc/gen/gocode/gocodetest"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// relSpecs are the rpe_full and xl example specs in testdata: HeadDim 64
// (the benchmark configurations, r_max 128 for rpe_full), HeadDim 72 (no
// multiple of 16; for rpe_full with r_max 600, beyond every tested length
// but below the qOffset ones), r_max 1 with an odd HeadDim, r_max beyond
// every tested length for the Go and CUDA targets only, and xl with HeadDim
// 6 (a tail only).
var relSpecs = []string{"rpefull64", "rpefull72", "rpefull_r1", "rpefull_wide", "xl64", "xl72", "xl6"}

// relSpec parses testdata/<name>.yaml.
func relSpec(t *testing.T, name string) *spec.Spec {
	t.Helper()
	file := filepath.Join("testdata", name+".yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(file, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// relGenerate derives and emits the Go files of testdata/<name>.yaml.
func relGenerate(t *testing.T, name string) []emit.File {
	t.Helper()
	s := relSpec(t, name)
	c, err := derive(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	files, err := c.GoFiles()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return files
}

// relPackageFiles returns the Go files of testdata/<name>.yaml with the
// assembly files its targets ask for, as gen.Generate assembles them (gen
// imports this package, so its tests cannot call it).
func relPackageFiles(t *testing.T, name string) []emit.File {
	t.Helper()
	s := relSpec(t, name)
	files := relGenerate(t, name)
	if !Backends.Assembly {
		t.Fatalf("%s: the relative family lists no assembly for %s", name, s.Encoding)
	}
	c, err := derive(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fs, err := c.AsmFiles(s.HasTarget(spec.TargetAVX2), s.HasTarget(spec.TargetAVX512), s.HasTarget(spec.TargetNEON))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	files = append(files, fs...)
	return files
}

func TestRelOutput(t *testing.T) {
	for _, name := range relSpecs {
		t.Run(name, func(t *testing.T) {
			// rpe_full and xl packages have the attention form.
			extra := []string{name + "_attention.go", name + "_attention_test.go"}
			gocodetest.CheckGoFiles(t, name, filepath.Join("testdata", name+".yaml"), relGenerate(t, name), relGenerate(t, name), extra...)
		})
	}
	api := string(relGenerate(t, "rpefull64")[0].Data)
	for _, w := range []string{"const HeadDim = 64", "const RMax = 128", "const Buckets = 255", "func Scores(dst, q, k, aK []float32, lq, lk, qOffset int)", "func Output(dst, weights, v, aV []float32, lq, lk, qOffset int)"} {
		if !strings.Contains(api, w) {
			t.Errorf("rpefull64.go lacks %q", w)
		}
	}
	api = string(relGenerate(t, "xl6")[0].Data)
	for _, w := range []string{"const HeadDim = 6", "const Base = 500.0", "func Scores(dst, q, k, r, u, v []float32, lq, lk, qOffset int)", "func Relative(dst []float32, n int)"} {
		if !strings.Contains(api, w) {
			t.Errorf("xl6.go lacks %q", w)
		}
	}
}

// TestRelGeneratedPackages writes every rpe_full and xl example package,
// with its assembly, into a temporary directory inside the module (named
// with a leading underscore, so ./... ignores it), vets it for amd64 and
// arm64 with and without the purego tag (asmdecl checks the assembly
// against its declarations) and runs its tests natively and, for arm64,
// under qemu-aarch64-static: each package's TestVariants checks every
// variant against verify's float64 reference, TestRequireVariants fails when
// an assembly variant the CPU can run is missing (POSENC_REQUIRE), and
// TestNaiveAgrees checks the benchmarks' naive baselines.
func TestRelGeneratedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	root, tmp := gocodetest.ScratchModuleDir(t, "reltest")
	var pkgs []string
	asmPkgs := 0
	for _, name := range relSpecs {
		files := relPackageFiles(t, name)
		for _, f := range files {
			if strings.HasSuffix(f.Name, "_amd64.s") {
				asmPkgs++
			}
		}
		pkgs = append(pkgs, gocodetest.WriteScratchPackage(t, root, tmp, name, files))
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		out, err := gocodetest.GoOnPackagesEnv(t, root, pkgs, env, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		for _, tags := range []string{"", "purego"} {
			run([]string{"GOARCH=" + goarch}, "vet", "-tags="+tags)
		}
	}
	const testRun = "TestVariants|TestRequireVariants|TestNaive"
	var require []string
	switch {
	case runtime.GOARCH == "amd64" && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ:
		require = []string{"avx2", "avx512"}
	case runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		require = []string{"avx2"}
	case runtime.GOARCH == "arm64":
		require = []string{"neon"}
	}
	out := run([]string{"POSENC_REQUIRE=" + strings.Join(require, ",")}, "test", "-count=1", "-v", "-run", testRun)
	checkRelRows(t, out, require, asmPkgs)
	t.Logf("%s", out)

	if runtime.GOARCH == "arm64" {
		return
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		if os.Getenv("POSENC_REQUIRE_QEMU") != "" {
			t.Fatal("qemu-aarch64-static not found and POSENC_REQUIRE_QEMU is set")
		}
		t.Skip("qemu-aarch64-static not installed: NEON variants not run")
	}
	out = run([]string{"GOARCH=arm64", "CGO_ENABLED=0", "POSENC_REQUIRE=neon"}, "test", "-count=1", "-v", "-exec", qemu, "-run", testRun)
	checkRelRows(t, out, []string{"neon"}, asmPkgs)
	t.Logf("%s", out)
}

// checkRelRows checks the POSENC-ROW lines of a go test -v run: one per
// package for the generic variant, and one per package with assembly for
// each variant in want.
func checkRelRows(t *testing.T, out string, want []string, asmPkgs int) {
	t.Helper()
	if n := strings.Count(out, `"target":"go"`); n != len(relSpecs) {
		t.Errorf("%d POSENC-ROW lines for the go variant, want %d:\n%s", n, len(relSpecs), out)
	}
	for _, v := range want {
		if n := strings.Count(out, `"target":"`+v+`"`); n != asmPkgs {
			t.Errorf("%d POSENC-ROW lines for %s, want %d:\n%s", n, v, asmPkgs, out)
		}
	}
}
