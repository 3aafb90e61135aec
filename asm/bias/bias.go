// Package bias generates the assembly kernels of the attention-bias
// encodings, alibi (Press et al. 2022) and rpe_bias (T5's relative position
// buckets, Raffel et al. 2020): addRow (abi.AddRow) and softmaxRow
// (abi.SoftmaxRow), for AVX2+FMA and AVX-512 (avo, asm/amd64) and NEON
// (asm/arm64). Both ISAs' softmax share one vector expf, whose constants
// live in expconst.go.
package bias

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/internal/emit"
)

// Params selects what is generated; the bias kernels have no compile-time
// shape.
type Params struct {
	// ExpTest additionally emits the test-only kernel abi.Exp
	// (expRowAVX2/expRowAVX512, expNEON): dst[j] = exp(src[j]) with the exp
	// of softmaxRow, for accuracy tests. Product packages leave it false.
	ExpTest bool
	// Ramp additionally emits softmaxRamp (abi.SoftmaxRamp), the softmax
	// that computes the ALiBi bias in registers, and addRamp (abi.AddRamp),
	// the in-register ALiBi bias of AddBias and Bias; alibi packages set it.
	Ramp bool
	// AttentionHeadDim > 0 adds the attention form's tile kernels for that
	// head dimension (AttentionAMD64, AttentionNEON).
	AttentionHeadDim int
}

// expNEONName is the NEON symbol of abi.Exp, the name tests call.
const expNEONName = "expNEON"

// softmaxPrefetch is how far ahead of the exp pass softmaxRow prefetches, in
// bytes. Measured on the [32][512][512] causal ALiBi benchmark (AMD EPYC,
// AVX-512): no prefetch 15.5 GB/s, 2 KiB 18.2, 4 KiB 20.0, 8 KiB 22.1,
// 16 KiB 21.3; NEON uses the same distance, not measured on arm64 hardware.
// A prefetch is a hint: it never faults and is not an access of the Go
// memory model, so reading ahead of the row's slice is harmless.
const softmaxPrefetch = 8192

// AMD64 returns <pkg>_amd64.s and <pkg>_amd64.go with addRow and
// softmaxRow (and the exp test kernel) of each asked-for variant; source
// names the spec in the header line.
func AMD64(pkg, source string, avx2, avx512 bool, p Params) ([]emit.File, error) {
	ks := []amd64.Kernel{
		{ABI: abi.AddRow, Emit: func(g *amd64.Gen) { gen{g}.addRow() }},
		{ABI: abi.SoftmaxRow, Emit: func(g *amd64.Gen) { gen{g}.softmaxRow() }},
	}
	if p.Ramp {
		ks = append(ks, amd64.Kernel{ABI: abi.SoftmaxRamp, Emit: func(g *amd64.Gen) { gen{g}.softmaxRamp() }},
			amd64.Kernel{ABI: abi.AddRamp, Emit: func(g *amd64.Gen) { gen{g}.addRamp() }})
	}
	if p.ExpTest {
		ks = append(ks, amd64.Kernel{ABI: abi.Exp, Emit: func(g *amd64.Gen) { gen{g}.expRow() }})
	}
	if p.AttentionHeadDim > 0 {
		ks = append(ks, AttentionAMD64(p.AttentionHeadDim)...)
	}
	return amd64.Files(pkg, source, amd64.ISAs(avx2, avx512), ks)
}

// NEON returns <pkg>_arm64.s and <pkg>_arm64.go with the NEON addRow and
// softmaxRow (and the exp test kernel).
func NEON(pkg, source string, p Params) ([]emit.File, error) {
	add, soft := arm64.Symbol(abi.AddRow), arm64.Symbol(abi.SoftmaxRow)
	ks := []arm64.Kernel{
		{ABI: abi.AddRow, Name: add, Doc: "adds src to dst element-wise.",
			Emit: func(e *arm64.Emitter) { addRow(e, add) }},
		{ABI: abi.SoftmaxRow, Name: soft, Doc: "replaces row by softmax(scale·row + bias).",
			Emit: func(e *arm64.Emitter) { softmaxRow(e, soft) }},
	}
	if p.Ramp {
		ramp := arm64.Symbol(abi.SoftmaxRamp)
		ks = append(ks, arm64.Kernel{ABI: abi.SoftmaxRamp, Name: ramp, Doc: "replaces row by softmax(scale·row + nslope·|t0 − j|).",
			Emit: func(e *arm64.Emitter) { softmaxRamp(e, ramp) }})
		addR := arm64.Symbol(abi.AddRamp)
		ks = append(ks, arm64.Kernel{ABI: abi.AddRamp, Name: addR, Doc: "adds float32(nslope·|t0 − j|) (formed in float64) to dst.",
			Emit: func(e *arm64.Emitter) { addRamp(e, addR) }})
	}
	if p.ExpTest {
		ks = append(ks, arm64.Kernel{ABI: abi.Exp, Name: expNEONName,
			Doc:  "sets dst[i] = e^src[i] with softmaxRow's vector expf (test-only).",
			Emit: func(e *arm64.Emitter) { expKernel(e, expNEONName) }})
	}
	if p.AttentionHeadDim > 0 {
		ks = append(ks, AttentionNEON(p.AttentionHeadDim)...)
	}
	return arm64.Files(pkg, source, ks)
}
