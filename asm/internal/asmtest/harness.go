package asmtest

import (
	"fmt"
	"strings"

	"github.com/posenc/posenc/asm/abi"
)

// harnessSrc stands in for the <name>_variants.go that gen/gocode.Registry writes:
// it defines kernels and registerVariant and exports what was registered.
const harnessSrc = `// Test harness standing in for the <name>_variants.go of gen/gocode's registry.

package %s

type kernels struct {
	rotate     ROTATE
	addRow     func(dst, src []float32)
	softmaxRow func(row, bias []float32, scale float32)
	addRows    func(x []float32, table []float32, idx []int32)
	softmaxRamp func(row []float32, scale, nslope, t0 float32)
	addRamp    func(dst []float32, nslope, t0 float64)
	farRows    FARROWS
}

// Variant is one registered variant, with exported fields.
type Variant = struct {
	Name       string
	Available  bool
	Rotate     ROTATE
	AddRow     func(dst, src []float32)
	SoftmaxRow func(row, bias []float32, scale float32)
	AddRows    func(x []float32, table []float32, idx []int32)
	SoftmaxRamp func(row []float32, scale, nslope, t0 float32)
	AddRamp    func(dst []float32, nslope, t0 float64)
	FarRows    FARROWS
}

// Registered lists the variants in registration order.
var Registered []Variant

func registerVariant(name string, available bool, k kernels) {
	Registered = append(Registered, Variant{name, available, k.rotate, k.addRow, k.softmaxRow, k.addRows, k.softmaxRamp, k.addRamp, k.farRows})
}
`

// Harness returns harnessSrc for package pkg: the stand-in of the
// <name>_variants.go of a rope, bias or absolute package on amd64.
// The rotate field's type is abi.Rotate's.
func Harness(pkg string) string {
	r := strings.NewReplacer("ROTATE", abi.Rotate.FuncType(), "FARROWS", abi.FarRows.FuncType())
	return r.Replace(fmt.Sprintf(harnessSrc, pkg))
}

// KernelsStruct returns the Go declaration of a kernels struct with one
// field per kernel, typed by the ABI (abi.Kernel.FuncType).
func KernelsStruct(ks ...abi.Kernel) string {
	var b strings.Builder
	b.WriteString("type kernels struct {\n")
	for _, k := range ks {
		fmt.Fprintf(&b, "\t%s %s\n", k.Field, k.FuncType())
	}
	b.WriteString("}\n")
	return b.String()
}

// standInVariants is the stand-in for the generated <name>_variants.go of a
// test package: the kernels type (%[2]s) and registerVariant, which keeps
// every available variant and handles an unavailable one by %[3]s.
const standInVariants = `package %[1]s

%[2]s
var registered = map[string]kernels{}

func registerVariant(name string, available bool, k kernels) {
	if !available {
		%[3]s
	}
	registered[name] = k
}
`

// QEMUVariants returns the <name>_variants.go stand-in of NEON test
// package pkg whose kernels struct has the fields of ks; an unavailable
// variant panics (under qemu NEON always runs).
func QEMUVariants(pkg string, ks ...abi.Kernel) string {
	return fmt.Sprintf(standInVariants, pkg, KernelsStruct(ks...), `panic("variant " + name + " not available")`)
}

// NativeVariants is QEMUVariants for an AVX test package run natively
// (RunNativeAMD64): variants this CPU cannot run are left out.
func NativeVariants(pkg string, ks ...abi.Kernel) string {
	return fmt.Sprintf(standInVariants, pkg, KernelsStruct(ks...), "return")
}

// harnessCommon holds helpers shared by every generated test file.
const qemuCommon = `package %s

import (
	"math"
	"testing"
)

const guard = 7

var sentinel = math.Float32bits(-12345.678)

// guarded returns a slice of n elements with guard elements on both sides
// and the full buffer.
func guarded(n int) (inner, buf []float32) {
	buf = make([]float32, n+2*guard)
	for i := range buf {
		buf[i] = math.Float32frombits(sentinel)
	}
	return buf[guard : guard+n : guard+n], buf
}

func checkGuards(t *testing.T, what string, buf []float32) {
	t.Helper()
	n := len(buf) - 2*guard
	for i := 0; i < guard; i++ {
		if math.Float32bits(buf[i]) != sentinel || math.Float32bits(buf[guard+n+i]) != sentinel {
			t.Fatalf("%%s: guard element overwritten", what)
		}
	}
}

var lengths = []int{0, 1, 3, 17, 31, 33, 512}
`
