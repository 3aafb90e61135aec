package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify/cudahost"
)

// TestVerifyTargetsRefused: a -targets name that is not a target, or that
// no given spec generates, exits 1 before anything is generated, listing
// the valid names.
func TestVerifyTargetsRefused(t *testing.T) {
	dir := t.TempDir()
	goCUDA := filepath.Join(dir, "gocuda.yaml")
	if err := os.WriteFile(goCUDA, []byte("name: gocuda\nencoding: rope\nhead_dim: 8\nlayout: half\ntargets: [go, cuda]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goOnly := filepath.Join(dir, "goonly.yaml")
	if err := os.WriteFile(goOnly, []byte("name: goonly\nencoding: rope\nhead_dim: 8\nlayout: half\ntargets: [go]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-targets", "bogus", "-zoo", "llama2_7b"}, `unknown target "bogus"; valid targets are go, avx2, avx512, neon, cuda`},
		{[]string{"-targets", "GO", "-zoo", "llama2_7b"}, `unknown target "GO"`},
		{[]string{"-targets", "go,avx-512", "-zoo", "llama2_7b"}, `unknown target "avx-512"`},
		{[]string{"-targets", "avx2", goCUDA}, `no spec given generates target "avx2"; they generate go, cuda`},
		{[]string{"-targets", "neon,go", goCUDA}, `no spec given generates target "neon"`},
		{[]string{"-targets", "cuda-gpu", goCUDA}, `unknown target "cuda-gpu"; valid targets are go, avx2, avx512, neon, cuda, and cuda-ptx or cuda-host`},
		{[]string{"-targets", "cuda-host", goOnly}, `no spec given generates target "cuda"; they generate go`},
	} {
		code, _, errs := runCLI(append([]string{"verify"}, c.args...)...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("verify %v: code %d, stderr %q; want 1 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestGeneratedTargets: go always, assembly only for families that have it.
func TestGeneratedTargets(t *testing.T) {
	for src, want := range map[string]string{
		"name: r\nencoding: rope\nhead_dim: 8\nlayout: half\n":                  "go avx2 avx512 neon cuda",
		"name: r\nencoding: rope\nhead_dim: 8\nlayout: half\ntargets: [neon]\n": "go neon",
	} {
		s, err := spec.Parse("t.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(generatedTargets(s), " "); got != want {
			t.Errorf("%q: generated targets %q, want %q", src, got, want)
		}
	}
}

// TestVerifyTargetsCUDACheck: -targets cuda-host runs host emulation alone
// (no PTX row, no CPU variant's row), cuda-ptx the PTX compile alone.
func TestVerifyTargetsCUDACheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CUDA host driver; skipped under -short")
	}
	if _, err := cudahost.HostToolchain(); err != nil {
		t.Skip("no C++ compiler for host emulation")
	}
	dir := t.TempDir()
	goCUDA := filepath.Join(dir, "gocuda.yaml")
	if err := os.WriteFile(goCUDA, []byte("name: gocuda\nencoding: rope\nhead_dim: 8\nlayout: half\ntargets: [go, cuda]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for check, other := range map[string]string{"cuda-host": "cuda-ptx", "cuda-ptx": "cuda-host"} {
		if check == "cuda-ptx" {
			if _, ok := cuda.Clang(); !ok {
				continue
			}
		}
		code, out, errs := runCLI("verify", "-targets", check, goCUDA)
		var targets []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "gocuda" {
				targets = append(targets, f[1])
			}
		}
		if code != 0 || len(targets) != 1 || targets[0] != check {
			t.Errorf("verify -targets %s: code %d, rows of targets %v (want only %s, no %s or go)\n%s\n%s", check, code, targets, check, other, out, errs)
		}
	}
}
