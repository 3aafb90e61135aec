// Package gocode holds the jennifer helpers every family's Go emitter
// shares: a file with the posenc header, rendering, the package comment,
// panics, float lists, the variant registry (<name>_variants.go) and the
// common parts of <name>_test.go.
package gocode

import (
	"bytes"
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/posenc/posenc/internal/emit"
)

// KernelField is one field of a generated package's kernels struct: a name
// and its function type, written as Go source (e.g. "func(dst, src []float32)").
type KernelField struct {
	Name string
	Type string
}

// NewFile starts a jennifer file with the posenc header.
func NewFile(pkg, source string) *jen.File {
	f := jen.NewFile(pkg)
	f.HeaderComment(emit.Header(source))
	return f
}

// Render formats a jennifer file into an emit.File.
func Render(name string, f *jen.File) (emit.File, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return emit.File{}, fmt.Errorf("gocode: rendering %s: %w", name, err)
	}
	return emit.File{Name: name, Data: buf.Bytes()}, nil
}

// Registry emits <pkg>_variants.go: the kernels struct with the given
// fields, the variant table seeded with the generic kernels (a package-level
// value named genericKernels, emitted by the encoding's generic file), and
// the functions tests use to reach every variant by name.
func Registry(pkg, source string, fields []KernelField) (emit.File, error) {
	f := NewFile(pkg, source)

	// type kernels struct { rotate func(...); ... }
	var fs []jen.Code
	for _, k := range fields {
		fs = append(fs, jen.Id(k.Name).Op(k.Type))
	}
	f.Comment("kernels holds one variant's kernel functions (docs/internals.md, kernel ABI).")
	f.Type().Id("kernels").Struct(fs...)

	// type variant struct { name string; available bool; k kernels }
	f.Comment("variant is one registered implementation of the kernels.")
	f.Type().Id("variant").Struct(
		jen.Id("name").String(),
		jen.Id("available").Bool(),
		jen.Id("k").Id("kernels"),
	)

	// var variants = []variant{{name: "go", available: true, k: genericKernels}}
	f.Comment("variants lists every implementation compiled in, the generic one first.")
	f.Var().Id("variants").Op("=").Index().Id("variant").Values(jen.Values(jen.Dict{
		jen.Id("name"):      jen.Lit("go"),
		jen.Id("available"): jen.True(),
		jen.Id("k"):         jen.Id("genericKernels"),
	}))
	f.Comment("active is the variant the exported functions dispatch to.")
	f.Var().Id("active").Op("=").Id("variants").Index(jen.Lit(0)).Dot("k")
	f.Comment("activeName names the active variant.")
	f.Var().Id("activeName").Op("=").Lit("go")

	// func registerVariant(name string, available bool, k kernels) {
	//	variants = append(variants, variant{name, available, k})
	//	if available { active, activeName = k, name }
	// }
	f.Comment("registerVariant adds an implementation; the per-architecture init functions call it,")
	f.Comment("best last, so the last available one becomes active.")
	f.Func().Id("registerVariant").Params(jen.Id("name").String(), jen.Id("available").Bool(), jen.Id("k").Id("kernels")).Block(
		jen.Id("variants").Op("=").Append(jen.Id("variants"), jen.Id("variant").Values(jen.Id("name"), jen.Id("available"), jen.Id("k"))),
		jen.If(jen.Id("available")).Block(
			jen.List(jen.Id("active"), jen.Id("activeName")).Op("=").List(jen.Id("k"), jen.Id("name")),
		),
	)

	// func Variants() []string
	f.Comment("Variants lists the names of the kernel variants compiled into this package,")
	f.Comment("in registration order (\"go\" first).")
	f.Func().Id("Variants").Params().Index().String().Block(
		jen.Id("names").Op(":=").Make(jen.Index().String(), jen.Lit(0), jen.Len(jen.Id("variants"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Id("variants")).Block(
			jen.Id("names").Op("=").Append(jen.Id("names"), jen.Id("v").Dot("name")),
		),
		jen.Return(jen.Id("names")),
	)

	// func lookupVariant(name string) *variant (nil for an unknown name)
	f.Func().Id("lookupVariant").Params(jen.Id("name").String()).Params(jen.Op("*").Id("variant")).Block(
		jen.For(jen.Id("i").Op(":=").Range().Id("variants")).Block(
			jen.If(jen.Id("variants").Index(jen.Id("i")).Dot("name").Op("==").Id("name")).Block(
				jen.Return(jen.Op("&").Id("variants").Index(jen.Id("i"))),
			),
		),
		jen.Return(jen.Nil()),
	)

	// func VariantAvailable(name string) bool
	f.Comment("VariantAvailable reports whether the named variant is compiled in and the CPU can run it.")
	f.Func().Id("VariantAvailable").Params(jen.Id("name").String()).Bool().Block(
		jen.Id("v").Op(":=").Id("lookupVariant").Call(jen.Id("name")),
		jen.Return(jen.Id("v").Op("!=").Nil().Op("&&").Id("v").Dot("available")),
	)

	// func UseVariant(name string) (restore func())
	f.Comment("UseVariant makes the exported functions dispatch to the named variant and returns")
	f.Comment("a function restoring the previous choice. It panics for an unknown or unavailable")
	f.Comment("name. It is for tests and benchmarks: not safe to call while kernels run.")
	f.Func().Id("UseVariant").Params(jen.Id("name").String()).Params(jen.Id("restore").Func().Params()).Block(
		jen.Id("v").Op(":=").Id("lookupVariant").Call(jen.Id("name")),
		jen.If(jen.Id("v").Op("==").Nil().Op("||").Op("!").Id("v").Dot("available")).Block(
			jen.Panic(jen.Lit(pkg+": variant ").Op("+").Id("name").Op("+").Lit(" is not available on this CPU or not compiled in")),
		),
		jen.List(jen.Id("prevK"), jen.Id("prevName")).Op(":=").List(jen.Id("active"), jen.Id("activeName")),
		jen.List(jen.Id("active"), jen.Id("activeName")).Op("=").List(jen.Id("v").Dot("k"), jen.Id("v").Dot("name")),
		jen.Return(jen.Func().Params().Block(
			jen.List(jen.Id("active"), jen.Id("activeName")).Op("=").List(jen.Id("prevK"), jen.Id("prevName")),
		)),
	)

	// func ActiveVariant() string
	f.Comment("ActiveVariant names the variant the exported functions use now.")
	f.Func().Id("ActiveVariant").Params().String().Block(jen.Return(jen.Id("activeName")))

	return Render(pkg+"_variants.go", f)
}
