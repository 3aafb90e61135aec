package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/posenc/posenc/gen/cuda"
	"github.com/posenc/posenc/gen/emit"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
	"github.com/posenc/posenc/verify/cudahost"
)

// verifyCUDA checks the CUDA output of every spec that asks for it, from the
// packages already generated under dir: the PTX compile check with clang
// (target cuda-ptx) and the kernels run on the CPU through host emulation
// against the float64 reference (target cuda-host). A missing tool is a
// failed row, never a silent pass.
func verifyCUDA(specs []*spec.Spec, dir string, only map[string]bool, progress io.Writer) []row {
	var rows []row
	for _, s := range specs {
		if _, hasCUDA := emit.Backends(s.Encoding); !hasCUDA || !s.HasTarget(spec.TargetCUDA) || (only != nil && !only[spec.TargetCUDA]) {
			continue
		}
		pkg := filepath.Join(dir, s.Name)
		cu := s.Name + ".cu"
		fmt.Fprintf(progress, "posenc: CUDA %s\n", s.Name)

		ptx := row{Row: verify.Row{Spec: s.Name, Target: "cuda-ptx"}}
		if _, ok := cuda.Clang(); !ok {
			ptx.Note = "not run: clang not found"
		} else if _, err := cuda.CompilePTX(pkg, cu); err != nil {
			ptx.Cases, ptx.Failures, ptx.Worst = 1, 1, firstLine(err.Error())
		} else {
			ptx.Cases, ptx.Worst = 1, "clang --cuda-gpu-arch="+cuda.PTXArch
		}
		rows = append(rows, ptx)

		if s.DType != "f32" {
			// The harness bounds are float32 ones; f16/bf16 storage is checked
			// against storage-rounded bounds in gen/cuda's tests.
			fmt.Fprintf(progress, "posenc: %s: dtype %s: host emulation is checked by gen/cuda's tests, not here\n", s.Name, s.DType)
			continue
		}
		host := row{Row: verify.Row{Spec: s.Name, Target: cudahost.Target}}
		if _, ok := cudahost.CXX(); !ok {
			host.Note = "not run: no C++ compiler for host emulation"
			rows = append(rows, host)
			continue
		}
		lib, err := cudahost.Build(s, filepath.Join(pkg, cu))
		if err != nil {
			host.Cases, host.Failures, host.Worst = 1, 1, firstLine(err.Error())
			rows = append(rows, host)
			continue
		}
		r := lib.Verify()
		lib.Close()
		rows = append(rows, row{Row: r.Row()})
		for i, f := range r.Failures {
			if i == 5 {
				break
			}
			fmt.Fprintf(progress, "posenc: %s cuda-host: %s\n", s.Name, f)
		}
	}
	return rows
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
