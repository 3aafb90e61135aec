//go:build tools

// Package posenc pins the tools the generator is built with, so that
// `go mod tidy` keeps them and downstream modules get the same versions.
package posenc

import (
	_ "github.com/dave/jennifer/jen"
	_ "github.com/mmcloughlin/avo/build"
	_ "golang.org/x/sys/cpu"
	_ "golang.org/x/tools/txtar"
)
