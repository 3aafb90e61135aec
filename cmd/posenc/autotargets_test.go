package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestMain lets a test run posenc in a child process (posencChild), where
// GODEBUG=cpu.* settings reach golang.org/x/sys/cpu's start-up detection.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("POSENC_TEST_CHILD_ARGS"); ok {
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// posencChild runs `posenc ARGS` as a child process with extra environment
// entries and returns its exit status and combined output.
func posencChild(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "POSENC_TEST_CHILD_ARGS="+strings.Join(args, " "))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func needAVX512(t *testing.T) {
	if !(cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ) {
		t.Skip("needs an amd64 CPU with AVX2 and AVX-512")
	}
}

// An AVX2-only runner, simulated by hiding AVX-512 (GODEBUG=cpu.avx512f=off
// is honoured by x/sys/cpu in posenc and in the generated packages alike):
// verify -targets auto passes without an avx512 row, while naming avx512
// explicitly fails with "not run".
func TestVerifyTargetsAutoWithoutAVX512(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a package and runs go test")
	}
	needAVX512(t)
	if got := targetList(autoTargets()); got != "go,avx2,avx512,neon,cuda" {
		t.Fatalf("auto on this AVX-512 CPU: %s", got)
	}
	specFile := filepath.Join(t.TempDir(), "tiny.yaml")
	os.WriteFile(specFile, []byte("name: tinyauto\nencoding: rope\nhead_dim: 16\nlayout: half\nmax_position: 64\ntargets: [go, avx2, avx512]\n"), 0o644)
	noAVX512 := []string{"GODEBUG=cpu.avx512f=off"}

	code, out := posencChild(t, noAVX512, "verify", specFile, "-targets", "auto")
	if code != 0 || !strings.Contains(out, "-targets auto: go,avx2,neon,cuda") || !strings.Contains(out, "tinyauto  avx2") || strings.Contains(out, "avx512") {
		t.Errorf("verify -targets auto without AVX-512: code %d, output:\n%s", code, out)
	}
	code, out = posencChild(t, noAVX512, "verify", "-targets", "go,avx2,avx512", specFile)
	if code != 1 || !strings.Contains(out, "avx512") || !strings.Contains(out, "FAIL (not run") {
		t.Errorf("verify -targets go,avx2,avx512 without AVX-512: code %d (want 1 and a not-run avx512 row), output:\n%s", code, out)
	}
	code, out = posencChild(t, nil, "verify", "-targets", "auto", specFile)
	if code != 0 || !strings.Contains(out, "tinyauto  avx512") {
		t.Errorf("verify -targets auto with AVX-512: code %d, output:\n%s", code, out)
	}
}
