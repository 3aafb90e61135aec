package amd64

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

var dumpDir = flag.String("dump", "", "write the files of every test shape into this directory (for reading)")

func TestFilesLayout(t *testing.T) {
	for _, tp := range testPkgs() {
		files, err := Files(tp.params)
		if err != nil {
			t.Fatalf("%s: %v", tp.dir, err)
		}
		if len(files) != 2 || files[0].Name != tp.dir+"_amd64.s" || files[1].Name != tp.dir+"_amd64.go" {
			t.Fatalf("%s: got files %v", tp.dir, names(files))
		}
		for _, f := range files {
			lines := strings.SplitN(string(f.Data), "\n", 4)
			if lines[0] != emit.Header(tp.params.Source) {
				t.Errorf("%s: first line %q", f.Name, lines[0])
			}
			if lines[1] != "" || lines[2] != "//go:build amd64 && gc && !purego" {
				t.Errorf("%s: build constraint lines %q", f.Name, lines[1:3])
			}
			if strings.Contains(string(f.Data), "// +build") {
				t.Errorf("%s: has an old-style +build line", f.Name)
			}
			if *dumpDir != "" {
				if err := os.WriteFile(filepath.Join(*dumpDir, f.Name), f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		goSrc := string(files[1].Data)
		for _, want := range []string{
			`registerVariant("avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA, kernels{`,
			`registerVariant("avx512", cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ, kernels{`,
			`import "golang.org/x/sys/cpu"`,
			"//go:noescape",
		} {
			if !strings.Contains(goSrc, want) {
				t.Errorf("%s_amd64.go lacks %q", tp.dir, want)
			}
		}
		if !tp.params.ExpTest && strings.Contains(goSrc+string(files[0].Data), "expRow") {
			t.Errorf("%s: exp test kernel emitted without ExpTest", tp.dir)
		}
	}
}

func TestFilesKernelFields(t *testing.T) {
	for _, c := range []struct {
		enc  string
		want string
	}{
		{spec.RoPE, "kernels{rotate: rotateAVX2}"},
		{spec.ALiBi, "kernels{addRow: addRowAVX2, softmaxRow: softmaxRowAVX2}"},
		{spec.RPEBias, "kernels{addRow: addRowAVX2, softmaxRow: softmaxRowAVX2}"},
		{spec.Sinusoidal, "kernels{addRows: addRowsAVX2}"},
		{spec.Algebraic, "kernels{addRows: addRowsAVX2}"},
		{spec.Binary, "kernels{addRows: addRowsAVX2}"},
		{spec.Learned, "kernels{addRows: addRowsAVX2}"},
		{spec.RPEFull, "kernels{dotRows: dotRowsAVX2, scoresRow: scoresRowAVX2, axpyRows: axpyRowsAVX2}"},
		{spec.XL, "kernels{scoresRow: scoresRowAVX2}"},
	} {
		p := Params{Package: "p", Source: "p.yaml", Encoding: c.enc, HeadDim: 64, RotaryDim: 64, Layout: spec.LayoutHalf, DModel: 64, AVX2: true}
		files, err := Files(p)
		if err != nil {
			t.Fatalf("%s: %v", c.enc, err)
		}
		src := string(files[1].Data)
		if !strings.Contains(src, c.want) || strings.Contains(src, "avx512") {
			t.Errorf("%s: registration is not %q only:\n%s", c.enc, c.want, src)
		}
	}
}

func TestFilesNone(t *testing.T) {
	for _, p := range []Params{
		{Package: "p", Source: "p.yaml", Encoding: spec.RoPE, HeadDim: 64, RotaryDim: 64, Layout: spec.LayoutHalf},
		{Package: "p", Source: "p.yaml", Encoding: spec.Mixture, DModel: 64, AVX2: true, AVX512: true},
		{Package: "p", Source: "p.yaml", Encoding: spec.RPEFull, HeadDim: 64},
		{Package: "p", Source: "p.yaml", Encoding: spec.XL, HeadDim: 64},
	} {
		files, err := Files(p)
		if err != nil || files != nil {
			t.Errorf("%+v: got %v, %v; want no files", p, names(files), err)
		}
	}
}

func TestFilesErrors(t *testing.T) {
	for _, p := range []Params{
		{Package: "p", Encoding: spec.RoPE, HeadDim: 64, RotaryDim: 66, Layout: spec.LayoutHalf, AVX2: true},
		{Package: "p", Encoding: spec.RoPE, HeadDim: 64, RotaryDim: 7, Layout: spec.LayoutHalf, AVX2: true},
		{Package: "p", Encoding: spec.RoPE, HeadDim: 64, RotaryDim: 64, Layout: "sideways", AVX2: true},
		{Package: "p", Encoding: spec.Sinusoidal, DModel: 0, AVX2: true},
		{Package: "p", Encoding: "fourier", AVX2: true},
		{Encoding: spec.ALiBi, AVX2: true},
		{Package: "p", Encoding: spec.RPEFull, HeadDim: 0, AVX2: true},
		{Package: "p", Encoding: spec.XL, HeadDim: -2, AVX512: true},
	} {
		if files, err := Files(p); err == nil {
			t.Errorf("%+v: no error (files %v)", p, names(files))
		}
	}
}

// TestDeterministic generates every test shape twice and compares bytes.
func TestDeterministic(t *testing.T) {
	for _, tp := range testPkgs() {
		a, err := Files(tp.params)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Files(tp.params)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
				t.Errorf("%s: %s differs between runs", tp.dir, a[i].Name)
			}
		}
	}
}

func names(fs []emit.File) []string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return n
}
