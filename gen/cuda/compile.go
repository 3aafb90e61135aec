package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/posenc/posenc/templates"
)

// PTXArch is the GPU architecture of the PTX compile check (Ampere: the
// oldest with bf16 conversions in hardware).
const PTXArch = "sm_80"

// Clang returns the clang binary the compile check uses: $CLANG when set,
// else "clang" from PATH; ok is false when none is found.
func Clang() (path string, ok bool) {
	name := os.Getenv("CLANG")
	if name == "" {
		name = "clang"
	}
	p, err := exec.LookPath(name)
	return p, err == nil
}

// CompilePTX compiles dir/cuFile (a generated .cu next to its .cuh) to PTX
// with clang and no CUDA SDK:
//
//	clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc
//	      -nocudalib -O3 -S -o <tmp>.ptx -include <prelude.h> dir/cuFile
//
// templates.Prelude is written to a temporary directory for -include. It
// returns the PTX text, or an error carrying clang's diagnostics.
func CompilePTX(dir, cuFile string) (string, error) { return CompilePTXWith(dir, cuFile) }

// FastMathFlags are the clang flags that stand for nvcc's -use_fast_math in
// the PTX check: -ffast-math and -fcuda-approx-transcendentals (clang's
// fast-math switches), -fgpu-flush-denormals-to-zero (nvcc's -ftz=true), and
// -D__USE_FAST_MATH__, the macro nvcc defines, with which templates.Prelude
// maps sincosf and expf to the approximate intrinsics as nvcc's headers do.
var FastMathFlags = []string{"-ffast-math", "-fcuda-approx-transcendentals", "-fgpu-flush-denormals-to-zero", "-D__USE_FAST_MATH__"}

// CompilePTXWith is CompilePTX with extra clang flags (e.g. FastMathFlags)
// before the source file.
func CompilePTXWith(dir, cuFile string, flags ...string) (string, error) {
	clang, ok := Clang()
	if !ok {
		return "", fmt.Errorf("cuda: clang not found (install clang or set $CLANG)")
	}
	tmp, err := os.MkdirTemp("", "posenc-ptx-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	prelude := filepath.Join(tmp, "prelude.h")
	if err := os.WriteFile(prelude, []byte(templates.Prelude), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, strings.TrimSuffix(cuFile, ".cu")+".ptx")
	cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch="+PTXArch,
		"-nocudainc", "-nocudalib", "-O3", "-S", "-o", out, "-include", prelude)
	cmd.Args = append(append(cmd.Args, flags...), filepath.Join(dir, cuFile))
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cuda: clang %s: %v\n%s", cuFile, err, msg)
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	return string(ptx), nil
}
