package cuda_test

import (
	"path/filepath"
	"testing"

	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// buildLib emits a spec's CUDA files and builds their host-emulation
// driver.
func buildLib(t *testing.T, y string) *cudahost.Lib {
	t.Helper()
	if _, ok := cudahost.CXX(); !ok {
		t.Skip("no C++ compiler")
	}
	c := derive(t, y)
	dir := write(t, c)
	l, err := cudahost.Build(c.Input(), filepath.Join(dir, c.Input().Name+".cu"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// run checks the host-emulated kernels against the float64 reference
// with the harness of package verify (the bounds of docs/design/).
func run(t *testing.T, l *cudahost.Lib, target string) {
	s := l.Spec()
	r := l.Verify()
	r.Target = target
	verify.Emit(t, r)
	if r.Cases == 0 {
		t.Errorf("%s: no cases ran", s.Name)
	}
}

// TestHostEmulation runs every test spec's CUDA kernels, compiled for the
// CPU with the host-emulation header, through Lib.Verify: the verify
// harness for f32 storage, the storage-rounded check (Lib.VerifyStorage,
// docs/design/ "Bounds") for f16 and bf16.
func TestHostEmulation(t *testing.T) {
	for _, y := range testSpecs {
		c := derive(t, y)
		t.Run(c.Input().Name, func(t *testing.T) {
			t.Parallel() // each spec builds and runs its own driver: both cores busy
			l := buildLib(t, y)
			run(t, l, cudahost.Target)
			if c.Input().Name == "rope_half" || c.Input().Name == "rpefull64" || c.Input().Name == "xl64" {
				// The launchers' scalar fallback for unaligned pointers.
				l.Misalign = true
				run(t, l, cudahost.Target+"-unaligned")
			}
		})
	}
}
