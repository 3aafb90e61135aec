// Package cuda renders the CUDA backend of a posenc spec: <name>.cu with the
// kernels and their extern "C" launchers, and <name>.cuh declaring them
// (launchers posenc_<name>_<func>(…, cudaStream_t) over device pointers,
// the Go API's layouts, returning cudaError_t). It knows no encoding: a
// family fills a struct embedding Common with its constants, and Files
// renders the family's template from package templates with it. f16 and
// bf16 storage compute in f32, and every angle is formed in float64.
//
// The same .cu compiles with nvcc, with clang against templates.Prelude
// (CompilePTX, the compile check without the CUDA SDK), and with the
// system C++ compiler through verify/cudahost's host-emulation header.
package cuda

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/templates"
)

// Launcher is one extern "C" entry point: its function suffix, its
// parameter list and its documentation line for the header.
type Launcher struct {
	Func, Params, Doc string
}

// Define is one #define of the header.
type Define struct {
	Name, Value string
}

// Stream is the last parameter of every launcher.
const Stream = "cudaStream_t stream"

// Common is the template data every family shares; a family's data struct
// embeds it, so the templates see both by the same dot.
type Common struct {
	Header, Name, Upper, Encoding, DType, T string
	Family                                  string // the .cu template: templates.CUDAFile(Family)
	PerHead                                 bool   // one head's [l][HEAD_DIM] layouts (header comment)
	VecElems                                int    // storage elements per 128-bit access
	Reductions                              bool   // block reductions are needed (softmax)
	Consts                                  []Define
	Launchers                               []Launcher
	Sig                                     map[string]string
	// Store is the launchers' storage type, posenc_<name>_t.
	Store string
	// AttnForm is the attention form (templates/attention.cu.tmpl; AddAttention),
	// nil without one.
	AttnForm *Attention
}

// newBase fills the shared data of s for the named family.
func newBase(s *spec.Spec, family string) (Common, error) {
	b := Common{
		Header:   emit.Header(s.File),
		Name:     s.Name,
		Upper:    strings.ToUpper(s.Name),
		Encoding: s.Encoding,
		DType:    s.DType,
		Family:   family,
		Store:    "posenc_" + s.Name + "_t",
	}
	switch s.DType {
	case "", "f32":
		b.DType, b.T, b.VecElems = "f32", "float", 4
	case "f16":
		b.T, b.VecElems = "__half", 8
	case "bf16":
		b.T, b.VecElems = "__nv_bfloat16", 8
	default:
		return Common{}, fmt.Errorf("dtype %q is not supported", s.DType)
	}
	return b, nil
}

// AddLauncher records a launcher: its parameter list (for the .cu
// definition) and its header entry.
func (b *Common) AddLauncher(fn, doc string, params ...string) {
	if b.Sig == nil {
		b.Sig = map[string]string{}
	}
	p := strings.Join(params, ", ")
	b.Sig[fn] = p
	b.Launchers = append(b.Launchers, Launcher{Func: fn, Params: p, Doc: doc})
}

// Files returns <name>.cu and <name>.cuh for s, or nil when the spec does
// not list the cuda target: fill turns the shared data into the family's
// template data (a struct embedding it), and the family's template
// (templates.CUDAFile(family)) and the shared header render it. Output is
// deterministic.
func Files(s *spec.Spec, family string, fill func(Common) (any, error)) ([]emit.File, error) {
	if !s.HasTarget(spec.TargetCUDA) {
		return nil, nil
	}
	base, err := newBase(s, family)
	if err == nil {
		var d any
		if d, err = fill(base); err == nil {
			return render(s, family, d)
		}
	}
	return nil, fmt.Errorf("%s: cuda: %w", s.File, err)
}

// render executes the family's .cu template and the shared header.
func render(s *spec.Spec, family string, data any) ([]emit.File, error) {
	t, err := templates.CUDA(nil)
	if err != nil {
		return nil, fmt.Errorf("cuda: templates: %w", err)
	}
	var files []emit.File
	for _, f := range []struct{ tmpl, ext string }{{templates.CUDAFile(family), ".cu"}, {templates.CUDAHeader, ".cuh"}} {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, f.tmpl, data); err != nil {
			return nil, fmt.Errorf("%s: cuda: %s: %w", s.File, f.tmpl, err)
		}
		files = append(files, emit.File{Name: s.Name + f.ext, Data: b.Bytes()})
	}
	return files, nil
}
