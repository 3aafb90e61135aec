// Package amd64 generates the AVX2+FMA and AVX-512 kernels of a posenc
// package: <name>_amd64.s, written with avo (github.com/mmcloughlin/avo) used
// as a library, and <name>_amd64.go, which declares the assembly functions and
// registers them as the "avx2" and "avx512" variants. The kernels implement
// the ABI of docs/internals.md ("Kernel ABI"), fully specialized to the
// spec's compile-time shape (HeadDim, RotaryDim, layout, DModel).
package amd64

import (
	"bytes"
	"fmt"
	"go/format"
	"strconv"
	"strings"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Params is what the amd64 generator needs from a spec.
type Params struct {
	Package   string // Go package name of the generated package
	Source    string // spec file name for the header line (emit.Header)
	Encoding  string // spec.RoPE, spec.ALiBi, spec.RPEBias, spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned, spec.RPEFull or spec.XL
	HeadDim   int    // rope, rpe_full, xl
	RotaryDim int    // rope: even, ≤ HeadDim
	Layout    string // rope: spec.LayoutHalf or spec.LayoutInterleaved
	DModel    int    // absolute encodings
	AVX2      bool   // emit the "avx2" variant (AVX2 + FMA)
	AVX512    bool   // emit the "avx512" variant (AVX-512 F, VL, BW, DQ)
	// ExpTest additionally emits expRowAVX2/expRowAVX512(dst, src []float32),
	// dst[j] = exp(src[j]) with the exp of softmaxRow, for accuracy tests.
	// Product packages leave it false.
	ExpTest bool
}

// argv is the fixed command line avo names in its generated-code comment;
// the comment itself is replaced by emit.Header, but a stable value keeps the
// output independent of how the generator was invoked.
var argv = []string{"posenc", "gen"}

// constraint is the build constraint of both files, in avo's comma syntax
// ("amd64 && gc && !purego").
const constraint = "amd64,gc,!purego"

// Files returns <Package>_amd64.s and <Package>_amd64.go for p, or nil when
// p asks for neither variant or its encoding has no assembly kernels
// (mixture: generic Go only).
func Files(p Params) ([]emit.File, error) {
	if !p.AVX2 && !p.AVX512 {
		return nil, nil
	}
	kinds, err := kernelsFor(p)
	if err != nil || len(kinds) == 0 {
		return nil, err
	}

	ctx := build.NewContext()
	ctx.ConstraintExpr(constraint)
	pool := newConstPool()
	label := 0
	var isas []isa
	if p.AVX2 {
		isas = append(isas, isaAVX2)
	}
	if p.AVX512 {
		isas = append(isas, isaAVX512)
	}
	for _, is := range isas {
		g := &gen{ctx: ctx, isa: is, pool: pool, label: &label}
		for _, k := range kinds {
			switch k {
			case "rotate":
				g.rotate(p)
			case "addRow":
				g.addRow()
			case "softmaxRow":
				g.softmaxRow()
			case "addRows":
				g.addRows(p)
			case "dotRows":
				g.dotKernel(dotPlain, p.HeadDim)
			case "scoresRow":
				if p.Encoding == spec.XL {
					g.dotKernel(dotXL, p.HeadDim)
				} else {
					g.dotKernel(dotScores, p.HeadDim)
				}
			case "axpyRows":
				g.axpyRows(p.HeadDim)
			}
		}
		if p.ExpTest {
			g.expRow()
		}
	}
	pool.emit(ctx)

	f, err := ctx.Result()
	if err != nil {
		return nil, fmt.Errorf("amd64: building %s: %w", p.Package, err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, fmt.Errorf("amd64: compiling %s: %w", p.Package, err)
	}
	cfg := printer.Config{Argv: argv, Pkg: p.Package}
	asm, err := printer.NewGoAsm(cfg).Print(f)
	if err != nil {
		return nil, fmt.Errorf("amd64: printing %s: %w", p.Package, err)
	}
	asm = replaceFirstLine(asm, emit.Header(p.Source))
	stubs, err := goFile(p, f, kinds, isas)
	if err != nil {
		return nil, err
	}
	return []emit.File{
		{Name: p.Package + "_amd64.s", Data: asm},
		{Name: p.Package + "_amd64.go", Data: stubs},
	}, nil
}

// kernelsFor validates p and names the kernels fields its encoding uses.
func kernelsFor(p Params) ([]string, error) {
	if p.Package == "" {
		return nil, fmt.Errorf("amd64: empty package name")
	}
	switch p.Encoding {
	case spec.RoPE:
		switch {
		case p.Layout != spec.LayoutHalf && p.Layout != spec.LayoutInterleaved:
			return nil, fmt.Errorf("amd64: %s: unknown rope layout %q", p.Package, p.Layout)
		case p.RotaryDim < 2 || p.RotaryDim%2 != 0 || p.RotaryDim > p.HeadDim:
			return nil, fmt.Errorf("amd64: %s: rotary_dim %d must be even and in [2, head_dim %d]", p.Package, p.RotaryDim, p.HeadDim)
		case p.HeadDim%2 != 0:
			return nil, fmt.Errorf("amd64: %s: head_dim %d must be even", p.Package, p.HeadDim)
		}
		return []string{"rotate"}, nil
	case spec.ALiBi, spec.RPEBias:
		return []string{"addRow", "softmaxRow"}, nil
	case spec.Sinusoidal, spec.Algebraic, spec.Binary, spec.Learned:
		if p.DModel < 1 {
			return nil, fmt.Errorf("amd64: %s: d_model %d must be positive", p.Package, p.DModel)
		}
		return []string{"addRows"}, nil
	case spec.RPEFull, spec.XL:
		if p.HeadDim < 1 {
			return nil, fmt.Errorf("amd64: %s: head_dim %d must be positive", p.Package, p.HeadDim)
		}
		if p.Encoding == spec.XL {
			return []string{"scoresRow"}, nil
		}
		return []string{"dotRows", "scoresRow", "axpyRows"}, nil
	case spec.Mixture:
		return nil, nil
	}
	return nil, fmt.Errorf("amd64: %s: unknown encoding %q", p.Package, p.Encoding)
}

// replaceFirstLine swaps avo's "// Code generated by command: …" line for
// the posenc header.
func replaceFirstLine(b []byte, first string) []byte {
	rest := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		rest = b[i:]
	} else {
		rest = nil
	}
	return append([]byte(first), rest...)
}

// goFile writes <Package>_amd64.go: the declarations of the assembly
// functions and the init that registers the variants.
func goFile(p Params, f *ir.File, kinds []string, isas []isa) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n//go:build amd64 && gc && !purego\n\npackage %s\n\nimport \"golang.org/x/sys/cpu\"\n", emit.Header(p.Source), p.Package)
	for _, fn := range f.Functions() {
		b.WriteString("\n")
		for _, line := range fn.Doc {
			b.WriteString("// " + line + "\n")
		}
		b.WriteString("//\n//go:noescape\n" + fn.Stub() + "\n")
	}
	b.WriteString("\nfunc init() {\n")
	for _, is := range isas {
		name, avail := "avx2", "cpu.X86.HasAVX2 && cpu.X86.HasFMA"
		if is.lanes == 16 {
			name, avail = "avx512", "cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ"
		}
		var fields []string
		for _, k := range kinds {
			fields = append(fields, k+": "+k+is.suffix)
		}
		fmt.Fprintf(&b, "\tregisterVariant(%s, %s, kernels{%s})\n", strconv.Quote(name), avail, strings.Join(fields, ", "))
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("amd64: formatting %s_amd64.go: %w", p.Package, err)
	}
	return src, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
