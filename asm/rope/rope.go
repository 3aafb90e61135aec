// Package rope generates the assembly kernel of rotary position embeddings
// (RoFormer, Su et al. 2021): the rotate kernel of abi.Rotate (float32) and
// abi.Rotate16 (f16 and bf16 storage), for AVX2+FMA and AVX-512 (avo,
// asm/amd64) and for NEON (asm/arm64), fully specialized to a compile-time
// head shape and table layout.
package rope

import (
	"fmt"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/arm64"
	"github.com/posenc/posenc/asm/attention"
	"github.com/posenc/posenc/asm/bias"
	"github.com/posenc/posenc/internal/emit"
)

// Params is the shape the kernel is generated for: values the caller
// (gen) derived from a validated spec. They are taken as given, neither
// re-derived nor re-validated here: RotaryDim is even and in [2, HeadDim],
// HeadDim is even.
type Params struct {
	HeadDim     int  // floats per head
	RotaryDim   int  // leading dims of a head that rotate
	RowLen      int  // floats per table row: RotaryDim (half) or 2·RotaryDim (interleaved)
	Interleaved bool // pairs (2i, 2i+1) as in RoFormer/GPT-J; false: pairs (i, i+RotaryDim/2) as HF transformers' rotate_half
	// Storage is the tensors' element type: "" for float32 (abi.Rotate),
	// "f16" (IEEE 754 binary16) or "bf16" (bfloat16) for 16-bit storage
	// (abi.Rotate16: widened to float32, narrowed to nearest even).
	Storage string
	// ScaleRows adds the scaleRows kernel (abi.ScaleRows, scalerows.go; with
	// 16-bit Storage abi.ScaleRows16, scalerows16.go): the spec has
	// attn_temperature (Llama 4's ScaleQ).
	ScaleRows bool
	// AttentionHeadDim > 0 adds the attention form's tile kernels for that
	// head dimension (bias.AttentionAMD64, bias.AttentionNEON), and with
	// 16-bit Storage the widenRow kernel (abi.Widen16, widen16.go).
	AttentionHeadDim int
	// FusedRope adds scoresKVRope (asm/attention.AMD64Rope; AMD64Rope16 with
	// 16-bit Storage) on amd64: the attention form's decode blocks rotate
	// keys inside the score kernel.
	FusedRope bool
}

// AMD64 returns <pkg>_amd64.s and <pkg>_amd64.go with the rotate kernel of
// each asked-for variant; source names the spec in the header line.
func AMD64(pkg, source string, avx2, avx512 bool, p Params) ([]emit.File, error) {
	sh := newRopeShape(p)
	ks := []amd64.Kernel{
		{ABI: sh.kernel, Emit: func(g *amd64.Gen) { gen{Gen: g}.rotate(p) }, Requires: sh.requires},
		{ABI: abi.FarRows, Emit: func(g *amd64.Gen) { gen{Gen: g}.farRows(p) }},
	}
	switch {
	case p.ScaleRows && sh.es == 2:
		// F16C, when needed, is already required by the rotate kernel of the same variant.
		ks = append(ks, amd64.Kernel{ABI: abi.ScaleRows16, Emit: func(g *amd64.Gen) { gen{Gen: g}.scaleRows16(sh) }})
	case p.ScaleRows:
		ks = append(ks, amd64.Kernel{ABI: abi.ScaleRows, Emit: func(g *amd64.Gen) { gen{Gen: g}.scaleRows() }})
	}
	if p.AttentionHeadDim > 0 {
		ks = append(ks, bias.AttentionAMD64(p.AttentionHeadDim)...)
		if sh.es == 2 {
			// F16C, when needed, is already required by the rotate kernel of the same variant.
			ks = append(ks, amd64.Kernel{ABI: abi.Widen16, Emit: func(g *amd64.Gen) { gen{Gen: g}.widenRow(sh) }})
			ks = append(ks, attention.AMD64Storage16(p.AttentionHeadDim, p.Storage)...)
		}
		switch {
		case p.FusedRope && sh.es == 2:
			ks = append(ks, attention.AMD64Rope16(p.HeadDim, p.RotaryDim, p.Storage)...)
		case p.FusedRope:
			ks = append(ks, attention.AMD64Rope(p.HeadDim, p.RotaryDim)...)
		}
	}
	return amd64.Files(pkg, source, amd64.ISAs(avx2, avx512), ks)
}

// NEON returns <pkg>_arm64.s and <pkg>_arm64.go with the NEON rotate kernel
// (abi.Rotate, or abi.Rotate16 when p.Storage is f16 or bf16), farRows and, with p.ScaleRows, scaleRows (abi.ScaleRows, or abi.ScaleRows16 over
// 16-bit storage, neon_scalerows16.go).
func NEON(pkg, source string, p Params) ([]emit.File, error) {
	g := &ropeGen{headDim: p.HeadDim, rot: p.RotaryDim, interleaved: p.Interleaved, row: p.RowLen, storage: p.Storage}
	k := g.kernel()
	name := arm64.Symbol(k)
	doc := fmt.Sprintf("rotates the first %d of %d dims of every q and k head by the table rows idx selects (sign −1: inverse).", p.RotaryDim, p.HeadDim)
	if p.Storage != "" {
		doc = fmt.Sprintf("rotates the first %d of %d dims of every q and k head, stored as %s, by the table rows idx selects (sign −1: inverse), in float32 lanes.", p.RotaryDim, p.HeadDim, p.Storage)
	}
	ks := []arm64.Kernel{{
		ABI:  k,
		Name: name,
		Doc:  doc,
		Emit: func(e *arm64.Emitter) {
			g.e = e
			g.text(name)
		},
	}}
	fn := arm64.Symbol(abi.FarRows)
	ks = append(ks, arm64.Kernel{ABI: abi.FarRows, Name: fn, Doc: "computes the rows of far positions as the product of four digit rows (unfused float32).",
		Emit: func(e *arm64.Emitter) { farRowsNEON(e, fn, p) }})
	switch {
	case p.ScaleRows && p.Storage != "":
		sn := arm64.Symbol(abi.ScaleRows16)
		ks = append(ks, arm64.Kernel{ABI: abi.ScaleRows16, Name: sn, Doc: "multiplies row t of x (rowLen " + p.Storage + " values) by scales[t], rounded to nearest even.",
			Emit: func(e *arm64.Emitter) { scaleRows16NEON(e, sn, p.Storage) }})
	case p.ScaleRows:
		sn := arm64.Symbol(abi.ScaleRows)
		ks = append(ks, arm64.Kernel{ABI: abi.ScaleRows, Name: sn, Doc: "multiplies row t of x (rowLen floats) by scales[t].",
			Emit: func(e *arm64.Emitter) { scaleRowsNEON(e, sn) }})
	}
	if p.AttentionHeadDim > 0 {
		ks = append(ks, bias.AttentionNEON(p.AttentionHeadDim)...)
		if p.Storage != "" {
			wn := arm64.Symbol(abi.Widen16)
			ks = append(ks, arm64.Kernel{ABI: abi.Widen16, Name: wn, Doc: "widens src (" + p.Storage + " values) into the float32 dst, exactly.",
				Emit: func(e *arm64.Emitter) { widenRowNEON(e, wn, p.Storage) }})
			ks = append(ks, attention.NEONStorage16(p.AttentionHeadDim, p.Storage)...)
		}
	}
	return arm64.Files(pkg, source, ks)
}
