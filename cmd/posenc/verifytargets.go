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
		known := false
		for _, a := range spec.AllTargets {
			known = known || a == t
		}
		switch {
		case !known:
			return nil, fmt.Errorf("-targets: unknown target %q; valid targets are %s", t, strings.Join(spec.AllTargets, ", "))
		case !generated[t]:
			return nil, fmt.Errorf("-targets: no spec given generates target %q; they generate %s", t, strings.Join(have, ", "))
		}
		only[t] = true
	}
	return only, nil
}
