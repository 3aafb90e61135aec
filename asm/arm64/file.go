// Package arm64 holds the helpers the family programs (asm/rope, asm/bias,
// asm/absolute, asm/relative) write their NEON kernels with: the Emitter of
// Go arm64 assembly text with a sticky error, the encoder of the float
// vector instructions Go's assembler cannot spell, argument operands from
// the asm/abi frame layout, and Files, which assembles one package's
// <name>_arm64.s and its Go declarations and registration, <name>_arm64.go.
// It knows nothing of specs or encodings.
//
// Go's arm64 assembler knows the NEON loads and stores, VFMLA/VFMLS and the
// integer vector ops, but no float vector arithmetic; the Emitter encodes
// those (FADD, FMUL, FMAX, FCVTL, float64 FADD, …) and the 16-bit storage
// conversions (FCVTL/FCVTN on binary16, SHLL #16, CMGE #0, RADDHN) as WORDs
// with operand range checks and prints the mnemonic as a trailing comment. The encodings are
// checked against go tool objdump by the package tests.
package arm64

import (
	"bytes"
	"fmt"
	"go/format"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/internal/emit"
)

// BuildTag is the constraint line of both generated files.
const BuildTag = "//go:build arm64 && gc && !purego"

// Kernel is one NEON kernel of a package: the ABI entry it implements, its
// symbol, the rest of its declaration's doc sentence (after the name) and
// the function that emits its TEXT block.
type Kernel struct {
	ABI  abi.Kernel
	Name string
	Doc  string
	Emit func(e *Emitter)
}

// Symbol is the NEON symbol of a registered kernel: its field + "NEON".
func Symbol(k abi.Kernel) string { return k.Field + "NEON" }

// Files returns <pkg>_arm64.s with the kernels in order and <pkg>_arm64.go
// declaring them and registering the non-test ones as the "neon" variant.
// source names the spec in the header line (emit.Header).
func Files(pkg, source string, kernels []Kernel) ([]emit.File, error) {
	e := NewEmitter()
	e.Raw(emit.Header(source))
	e.Raw("")
	e.Raw(BuildTag)
	e.Raw("")
	e.Raw(`#include "textflag.h"`)
	e.Raw("")
	for _, k := range kernels {
		k.Emit(e)
	}
	asm, err := e.Bytes()
	if err != nil {
		return nil, err
	}
	src, err := goFile(pkg, source, kernels)
	if err != nil {
		return nil, err
	}
	return []emit.File{
		{Name: pkg + "_arm64.s", Data: append(bytes.TrimRight(asm, "\n"), '\n')},
		{Name: pkg + "_arm64.go", Data: src},
	}, nil
}

// goFile renders the Go declarations and the variant registration.
func goFile(pkg, source string, kernels []Kernel) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n%s\n\npackage %s\n", emit.Header(source), BuildTag, pkg)
	var fields []string
	for _, k := range kernels {
		fmt.Fprintf(&b, "\n// %s %s\n// Implemented in %s_arm64.s.\n//\n//go:noescape\nfunc %s%s\n", k.Name, k.Doc, pkg, k.Name, k.ABI.Signature())
		if !k.ABI.TestOnly {
			fields = append(fields, fmt.Sprintf("%s: %s", k.ABI.Field, k.Name))
		}
	}
	b.WriteString("\n// init registers the NEON kernels; every arm64 CPU has Advanced SIMD.\n")
	b.WriteString("func init() {\n\tregisterVariant(\"neon\", true, kernels{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f)
	}
	b.WriteString("})\n}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("arm64: formatting %s_arm64.go: %v", pkg, err)
	}
	return out, nil
}
