// Package gpu_test checks, without a GPU, the harness the GPU calls of
// tools/gpu build with nvcc: posenc_shapes.cu, built here against the host
// emulation of CUDA (verify/cudahost), so that a lent device's minutes are
// not lost to a harness that no longer builds or runs.
package gpu_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify/cudahost"
)

// TestShapesHarnessHost builds posenc_shapes.cu for a bf16 rope spec and an
// f32 ALiBi one (its rope and softmax kinds) and runs its smoke (the bench
// rows at emulated sizes) and sanitize modes (every RoPE or softmax
// launcher, then every attention launcher, on the shapes compute-sanitizer
// gets on a GPU).
func TestShapesHarnessHost(t *testing.T) {
	cxx, ok := cudahost.CXX()
	if !ok {
		t.Skip("no C++ compiler")
	}
	src, err := filepath.Abs("posenc_shapes.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		yaml, kind, dtype string
	}{
		{"name: psh_rope\nencoding: rope\nhead_dim: 128\nlayout: half\ndtype: bf16\n", "1", "bf16"},
		{"name: psh_alibi\nencoding: alibi\nheads: 6\nhead_dim: 64\n", "2", "f32"},
	} {
		name := strings.TrimPrefix(strings.SplitN(c.yaml, "\n", 2)[0], "name: ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := spec.Parse(name+".yaml", []byte(c.yaml+"targets: [cuda]\n"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := gen.Derive(s)
			if err != nil {
				t.Fatal(err)
			}
			files, err := d.CUDAFiles()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for _, f := range files {
				if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, cudahost.HeaderName), []byte(cudahost.Header), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "harness")
			build := exec.Command(cxx, "-x", "c++", "-std=c++17", "-O1", "-w", "-I", dir, "-DPSPEC="+name, "-DPKIND="+c.kind,
				"-DPDTYPE="+c.dtype, `-DPCU="`+filepath.Join(dir, name+".cu")+`"`, "-o", bin, src, "-pthread")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", build.Args, err, out)
			}
			for _, m := range []struct{ mode, want string }{
				{"smoke", "# " + name + " (" + c.dtype + ") on "},
				{"sanitize", "sanitize: " + name + ": attention launches done"},
			} {
				out, err := exec.Command(bin, m.mode).CombinedOutput()
				if err != nil || !strings.Contains(string(out), m.want) || strings.Contains(string(out), "ERROR") {
					t.Errorf("%s %s: %v, want a line with %q and no ERROR:\n%s", name, m.mode, err, m.want, out)
				}
			}
		})
	}
}
