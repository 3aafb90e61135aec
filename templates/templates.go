// Package templates holds posenc's text/template sources for the non-Go
// output (the CUDA .cu and .cuh files) and the CUDA prelude header used by
// the clang PTX compile check. gen/cuda renders them; the files are
// embedded so the generator binary is self-contained.
package templates

import (
	"embed"
	"text/template"
)

//go:embed *.tmpl
var fs embed.FS

// Prelude is the header force-included (clang -include) when a generated
// .cu is compiled to PTX without the CUDA SDK (-nocudainc): it defines
// POSENC_PRELUDE, the CUDA attributes, dim3 and the built-in index
// variables, the runtime API subset of the launchers, the libdevice math
// functions and the f16/bf16 storage types.
//
//go:embed prelude.h
var Prelude string

// CUDA parses the CUDA templates: one .cu template per family,
// "<family>.cu.tmpl" (rope, bias, absolute, relative), each starting with
// "cu_common" from common.cu.tmpl, the shared blocks the families include
// (attention.cu.tmpl: the attention form's engine, with its terms in
// attention_terms.cu.tmpl and its host side in attention_launch.cu.tmpl), and
// "header.cuh.tmpl", the .cuh of every family. funcs are added before
// parsing.
func CUDA(funcs template.FuncMap) (*template.Template, error) {
	return template.New("cuda").Option("missingkey=error").Funcs(funcs).ParseFS(fs, "*.cu.tmpl", "header.cuh.tmpl")
}

// CUDAHeader is the name of the .cuh template every family shares.
const CUDAHeader = "header.cuh.tmpl"

// CUDAFile is the name of family's .cu template.
func CUDAFile(family string) string { return family + ".cu.tmpl" }
