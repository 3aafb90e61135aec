package main

import (
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/posenc/posenc/spec"
)

// autoTargets is `verify -targets auto`: go, neon (under
// qemu-aarch64-static) and cuda (clang and host emulation) always, and the
// amd64 assembly variants this CPU runs, by the same tests the generated
// packages register them with (docs/internals.md, "Variant registry").
// A CI runner without AVX-512 then verifies go, avx2, neon and cuda, and
// still fails when one of those does not run. GODEBUG=cpu.avx512f=off
// hides AVX-512 from this test and from the generated packages alike.
func autoTargets() map[string]bool {
	t := map[string]bool{spec.TargetGo: true, spec.TargetNEON: true, spec.TargetCUDA: true}
	if runtime.GOARCH == "amd64" {
		if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
			t[spec.TargetAVX2] = true
		}
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ {
			t[spec.TargetAVX512] = true
		}
	}
	return t
}

// targetList names a target set in the usual order, for messages.
func targetList(only map[string]bool) string {
	var ts []string
	for _, t := range []string{spec.TargetGo, spec.TargetAVX2, spec.TargetAVX512, spec.TargetNEON, spec.TargetCUDA} {
		if only[t] {
			ts = append(ts, t)
		}
	}
	return strings.Join(ts, ",")
}
