// Package arm64 generates the NEON variant of a posenc package: Go arm64
// assembly (<name>_arm64.s) and its Go declarations and registration
// (<name>_arm64.go), implementing the kernel ABI of docs/internals.md.
//
// Go's arm64 assembler knows the NEON loads and stores, VFMLA/VFMLS and the
// integer vector ops, but no float vector arithmetic; the Emitter encodes
// those (FADD, FMUL, FMAX, FCVTL, float64 FADD, …) as WORDs with operand range
// checks and prints the mnemonic as a trailing comment. The encodings are
// checked against go tool objdump by the package tests, and the generated
// kernels are run under qemu-aarch64-static against float64 references.
package arm64

import (
	"bytes"
	"fmt"
	"go/format"
	"go/token"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Params is what the arm64 generator needs from a spec.
type Params struct {
	Package   string // Go package name
	Source    string // spec file for the header (emit.Header)
	Encoding  string // spec.RoPE, spec.ALiBi, spec.RPEBias, spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned, spec.RPEFull, spec.XL
	HeadDim   int    // rope, rpe_full, xl
	RotaryDim int    // rope
	Layout    string // rope: spec.LayoutHalf | spec.LayoutInterleaved
	DModel    int    // absolute encodings

	// ExpTest adds the test-only kernel expNEON(dst, src []float32), the
	// vector expf of softmaxRow, so tests can measure its error. It is not
	// registered as a kernel.
	ExpTest bool
}

// BuildTag is the constraint line of both generated files.
const BuildTag = "//go:build arm64 && gc && !purego"

// Kernel symbol names in the generated package.
const (
	RotateName     = "rotateNEON"
	AddRowName     = "addRowNEON"
	SoftmaxRowName = "softmaxRowNEON"
	AddRowsName    = "addRowsNEON"
	ExpName        = "expNEON"
)

// kernelDecl is one assembly function: its Go declaration and doc.
type kernelDecl struct {
	name, sig, doc string
	field          string // kernels struct field, "" for test-only kernels
}

// Files returns <Package>_arm64.s and <Package>_arm64.go for p. Encodings
// the NEON backend does not cover (mixture: generic Go only) give no files
// and no error.
func Files(p Params) ([]emit.File, error) {
	if !token.IsIdentifier(p.Package) || token.IsKeyword(p.Package) {
		return nil, fmt.Errorf("arm64: invalid package name %q", p.Package)
	}
	if err := checkDims(p); err != nil {
		return nil, err
	}
	e := NewEmitter()
	e.Raw(emit.Header(p.Source))
	e.Raw("")
	e.Raw(BuildTag)
	e.Raw("")
	e.Raw(`#include "textflag.h"`)
	e.Raw("")
	var decls []kernelDecl
	switch p.Encoding {
	case spec.RoPE:
		g := &ropeGen{e: e, headDim: p.HeadDim, rot: p.RotaryDim, interleaved: p.Layout == spec.LayoutInterleaved}
		g.text(RotateName)
		decls = append(decls, kernelDecl{RotateName,
			"(q []float32, qHeads int, k []float32, kHeads int, table []float32, idx []int32, sign float32)",
			fmt.Sprintf("rotates the first %d of %d dims of every q and k head by the table rows idx selects (sign −1: inverse).", p.RotaryDim, p.HeadDim),
			"rotate"})
	case spec.ALiBi, spec.RPEBias:
		addRow(e, AddRowName)
		softmaxRow(e, SoftmaxRowName)
		decls = append(decls,
			kernelDecl{AddRowName, "(dst, src []float32)", "adds src to dst element-wise.", "addRow"},
			kernelDecl{SoftmaxRowName, "(row, bias []float32, scale float32)", "replaces row by softmax(scale·row + bias).", "softmaxRow"})
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned:
		addRows(e, AddRowsName, p.DModel)
		decls = append(decls, kernelDecl{AddRowsName, "(x []float32, table []float32, idx []int32)",
			fmt.Sprintf("adds table row idx[t] (%d floats) to token t of x.", p.DModel), "addRows"})
	case spec.RPEFull:
		dotKernel(e, DotRowsName, "dotRows", p.HeadDim)
		dotKernel(e, ScoresRowName, "scoresRow", p.HeadDim)
		axpyRows(e, AxpyRowsName, p.HeadDim)
		decls = append(decls,
			kernelDecl{DotRowsName, "(dst, x, rows []float32)",
				fmt.Sprintf("sets dst[r] = x·rows[r] (rows of %d floats).", p.HeadDim), "dotRows"},
			kernelDecl{ScoresRowName, "(dst, q, k, bias []float32, scale float32)",
				fmt.Sprintf("sets dst[j] = (q·k_j + bias[j])·scale (rows of %d floats).", p.HeadDim), "scoresRow"},
			kernelDecl{AxpyRowsName, "(dst, w, rows []float32)",
				fmt.Sprintf("adds Σ_r w[r]·rows[r] to dst (rows of %d floats).", p.HeadDim), "axpyRows"})
	case spec.XL:
		dotKernel(e, ScoresRowName, "xl", p.HeadDim)
		decls = append(decls, kernelDecl{ScoresRowName, "(dst, qu, k, qv, r []float32)",
			fmt.Sprintf("sets dst[j] = qu·k_j + qv·r_j (rows of %d floats).", p.HeadDim), "scoresRow"})
	case spec.Mixture:
		return nil, nil
	default:
		return nil, fmt.Errorf("arm64: unknown encoding %q", p.Encoding)
	}
	if p.ExpTest {
		expKernel(e, ExpName)
		decls = append(decls, kernelDecl{ExpName, "(dst, src []float32)",
			"sets dst[i] = e^src[i] with softmaxRow's vector expf (test-only).", ""})
	}
	asm, err := e.Bytes()
	if err != nil {
		return nil, err
	}
	src, err := goFile(p, decls)
	if err != nil {
		return nil, err
	}
	return []emit.File{
		{Name: p.Package + "_arm64.s", Data: append(bytes.TrimRight(asm, "\n"), '\n')},
		{Name: p.Package + "_arm64.go", Data: src},
	}, nil
}

// goFile renders the Go declarations and the variant registration.
func goFile(p Params, decls []kernelDecl) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n%s\n\npackage %s\n", emit.Header(p.Source), BuildTag, p.Package)
	var fields []string
	for _, d := range decls {
		fmt.Fprintf(&b, "\n// %s %s\n// Implemented in %s_arm64.s.\n//\n//go:noescape\nfunc %s%s\n", d.name, d.doc, p.Package, d.name, d.sig)
		if d.field != "" {
			fields = append(fields, fmt.Sprintf("%s: %s", d.field, d.name))
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
		return nil, fmt.Errorf("arm64: formatting %s_arm64.go: %v", p.Package, err)
	}
	return out, nil
}
