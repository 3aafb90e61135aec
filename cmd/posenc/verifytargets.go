package main

import (
	"fmt"
	"strings"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/spec"
)

// generatedTargets returns the targets of s that its generated package has
// variants for: go always, the assembly targets when its family has
// assembly, cuda when it has a CUDA file, each of these only when s lists
// it.
func generatedTargets(s *spec.Spec) []string {
	b := gen.Backends(s.Encoding)
	var out []string
	for _, t := range spec.AllTargets {
		switch {
		case t == spec.TargetGo:
			out = append(out, t)
		case !s.HasTarget(t):
		case t == spec.TargetAVX2 || t == spec.TargetAVX512 || t == spec.TargetNEON:
			if b.Assembly {
				out = append(out, t)
			}
		case t == spec.TargetCUDA:
			if b.CUDA {
				out = append(out, t)
			}
		}
	}
	return out
}

// parseTargets turns verify's -targets list into a set. Every name must be
// a target (spec.AllTargets, spelled exactly) that at least one of specs
// generates, so that a typo never verifies nothing and passes.
func parseTargets(list string, specs []*spec.Spec) (map[string]bool, error) {
	generated := map[string]bool{}
	for _, s := range specs {
		for _, t := range generatedTargets(s) {
			generated[t] = true
		}
	}
	var have []string
	for _, t := range spec.AllTargets {
		if generated[t] {
			have = append(have, t)
		}
	}
	only := map[string]bool{}
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		known, gen := false, t
		for _, a := range spec.AllTargets {
			known = known || a == t
		}
		for _, a := range cudaChecks {
			if a == t {
				known, gen = true, spec.TargetCUDA
			}
		}
		switch {
		case !known:
			return nil, fmt.Errorf("-targets: unknown target %q; valid targets are %s, and %s (one of cuda's checks)", t, strings.Join(spec.AllTargets, ", "), strings.Join(cudaChecks, " or "))
		case !generated[gen]:
			return nil, fmt.Errorf("-targets: no spec given generates target %q; they generate %s", gen, strings.Join(have, ", "))
		}
		only[t] = true
	}
	return only, nil
}

// cudaChecks are the rows of the cuda target that -targets may also name
// alone: cuda-ptx (clang's PTX compile) and cuda-host (the kernels under
// host emulation). cuda names both.
var cudaChecks = []string{"cuda-ptx", "cuda-host"}

// cudaWanted reports whether -targets (only; nil: every target) asks for
// the CUDA row target t: cuda-ptx or cuda-host by name or through cuda;
// any other cuda- row (cuda-gpu, run only under -gpu) through either.
func cudaWanted(only map[string]bool, t string) bool {
	if only == nil || only[spec.TargetCUDA] || only[t] {
		return true
	}
	return t != cudaChecks[0] && t != cudaChecks[1] && (only[cudaChecks[0]] || only[cudaChecks[1]])
}
