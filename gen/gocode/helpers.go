package gocode

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// PackageDoc writes a package comment as line comments, one per line of doc.
func PackageDoc(f *jen.File, doc string) {
	for _, line := range strings.Split(doc, "\n") {
		f.PackageComment(line)
	}
}

// Panicf renders panic(fmt.Sprintf("<pkg>: "+format, args...)).
func Panicf(pkg, format string, args ...jen.Code) *jen.Statement {
	return jen.Panic(jen.Qual("fmt", "Sprintf").Call(append([]jen.Code{jen.Lit(pkg + ": " + format)}, args...)...))
}

// FloatList renders a composite literal body with one value per line.
func FloatList(vals []float64) jen.Code {
	return jen.CustomFunc(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, func(g *jen.Group) {
		for _, v := range vals {
			g.Lit(v)
		}
	})
}
