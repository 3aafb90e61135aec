//go:build linux

package kernelfuzz

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/posenc/posenc/generated/bert_base"
	"github.com/posenc/posenc/generated/bloom_176b"
	"github.com/posenc/posenc/generated/llama2_7b"
	"github.com/posenc/posenc/generated/llama4_scout"
	"github.com/posenc/posenc/generated/qwen25_vl_7b"
	"github.com/posenc/posenc/generated/shaw2018_base"
	"github.com/posenc/posenc/generated/t5_base"
	"github.com/posenc/posenc/generated/transformer_base"
	"github.com/posenc/posenc/generated/transformer_xl_base"
	"github.com/posenc/posenc/internal/goldens/gmrope_qwen3_f16"
	"github.com/posenc/posenc/internal/goldens/grope_temp_f16"
)

// sizeArg maps a fuzzed int64 to a size argument: small counts (−1…14 and
// 0…299) most of the time, and the values whose products with the other
// sizes overflow int: near math.MaxInt and math.MinInt, powers of two from
// 2^40 to 2^62 and their neighbours, math.MaxInt/k+1 (k·it overflows) and
// math.MaxInt/128/k+1 (overflows once multiplied by a head dimension), or the
// fuzzed value shifted right by 4 (its low 4 bits chose this case).
func sizeArg(v int64) int {
	small := int(uint64(v) >> 8 % 16)
	switch v & 0xf {
	case 0, 1, 2, 3:
		return small - 1
	case 4:
		return math.MaxInt - small
	case 5:
		return 1<<(40+small) + small%3 - 1
	case 6:
		return 1<<(47+small) + small%3 - 1
	case 7:
		return math.MinInt + small
	case 8:
		return -(1 << (40 + small))
	case 9:
		return int(v >> 4)
	case 10:
		return math.MaxInt/(small+1) + 1
	case 11:
		return math.MaxInt/128/(small+1) + 1
	case 12:
		return math.MaxInt/10/(small+1) + 1
	default:
		return int(uint64(v) >> 8 % 300)
	}
}

// sizeLen maps a fuzzed byte to a slice length: b>>2 itself, or that many
// units (the package's HeadDim, DModel or Heads), one less, or three times
// as many, so that lengths that match a shape are common.
func sizeLen(b byte, unit int) int {
	l := int(b >> 2)
	switch b & 3 {
	case 0:
		return l
	case 1:
		return l * unit
	case 2:
		return max(l*unit-1, 0)
	default:
		return 3 * l * unit
	}
}

// sizeIn is one fuzzed call: its size arguments, and the guarded slices it
// hands out (each against a PROT_NONE page, at its end or its start) with a
// copy of their contents to check that a panicking call wrote nothing.
type sizeIn struct {
	t     *testing.T
	atEnd bool
	unit  int
	lens  []byte
	r     *rand.Rand
	n     [6]int

	f32, f32Was [][]float32
	u16, u16Was [][]uint16
	i32, i32Was [][]int32
}

// next returns the fuzzed length byte of the next slice (0 when the
// fuzzer gave fewer bytes than slices).
func (in *sizeIn) next() byte {
	k := len(in.f32) + len(in.u16) + len(in.i32)
	if k < len(in.lens) {
		return in.lens[k]
	}
	return 0
}

// F returns the next float32 slice, filled with values in [−4, 4).
func (in *sizeIn) F() []float32 {
	x := guarded[float32](in.t, sizeLen(in.next(), in.unit), in.atEnd)
	for i := range x {
		x[i] = float32(8*in.r.Float64() - 4)
	}
	in.f32, in.f32Was = append(in.f32, x), append(in.f32Was, slices.Clone(x))
	return x
}

// H returns the next 16-bit slice, filled with random finite f16/bf16 bits.
func (in *sizeIn) H() []uint16 {
	x := guarded[uint16](in.t, sizeLen(in.next(), in.unit), in.atEnd)
	for i := range x {
		x[i] = uint16(in.r.IntN(0x7800)) | uint16(in.r.IntN(2))<<15
	}
	in.u16, in.u16Was = append(in.u16, x), append(in.u16Was, slices.Clone(x))
	return x
}

// P returns the next position (or slot) slice: mostly small values, some
// negative, some beyond any table, some near math.MaxInt32. Its length is
// the fuzzed byte itself or a small multiple of 3 (M-RoPE axes).
func (in *sizeIn) P() []int32 {
	b := in.next()
	n := int(b >> 2)
	if b&1 == 1 {
		n = 3 * int(b>>4)
	}
	x := guarded[int32](in.t, n, in.atEnd)
	for i := range x {
		switch u := in.r.IntN(16); {
		case u < 10:
			x[i] = int32(in.r.IntN(64))
		case u < 12:
			x[i] = -int32(in.r.IntN(1 << 20))
		case u < 14:
			x[i] = int32(1<<20 + in.r.IntN(1<<30))
		default:
			x[i] = math.MaxInt32 - int32(in.r.IntN(4))
		}
	}
	in.i32, in.i32Was = append(in.i32, x), append(in.i32Was, slices.Clone(x))
	return x
}

// N returns size argument i.
func (in *sizeIn) N(i int) int { return in.n[i] }

// unchanged reports the first slice whose contents differ from the copy
// taken when it was handed out ("" when none).
func (in *sizeIn) unchanged() string {
	for i := range in.f32 {
		if !sameBits(in.f32[i], in.f32Was[i]) {
			return fmt.Sprintf("float32 slice %d", i)
		}
	}
	for i := range in.u16 {
		if !slices.Equal(in.u16[i], in.u16Was[i]) {
			return fmt.Sprintf("16-bit slice %d", i)
		}
	}
	for i := range in.i32 {
		if !slices.Equal(in.i32[i], in.i32Was[i]) {
			return fmt.Sprintf("int32 slice %d", i)
		}
	}
	return ""
}

// sizeFn is one exported function of a generated package, called with
// fuzzed sizes through in.
type sizeFn struct {
	name string
	call func(in *sizeIn)
}

// sizePkg is a generated package, the unit its slice lengths are drawn in,
// its variant registry and every exported function that takes a size.
type sizePkg struct {
	name string
	unit int
	reg  registry
	fns  []sizeFn
}

// ropeSizeFns are the exported functions of a float32 rope package.
func ropeSizeFns(apply, inverse, headMajor func([]float32, []int32, int),
	qk func(q, k []float32, pos []int32, qh, kh int),
	strided func([]float32, []int32, int, int, int),
	qkStrided func([]float32, []int32, int, int, int),
	to func(dst, src []float32, pos []int32, heads int),
	slots func(cache []float32, slots []int32, src []float32, pos []int32, heads int),
	shift func([]float32, int32, int, int),
	freqsAt func(int) []float64,
) []sizeFn {
	return []sizeFn{
		{"Apply", func(in *sizeIn) { apply(in.F(), in.P(), in.N(0)) }},
		{"Inverse", func(in *sizeIn) { inverse(in.F(), in.P(), in.N(0)) }},
		{"ApplyHeadMajor", func(in *sizeIn) { headMajor(in.F(), in.P(), in.N(0)) }},
		{"ApplyQK", func(in *sizeIn) { qk(in.F(), in.F(), in.P(), in.N(0), in.N(1)) }},
		{"ApplyStrided", func(in *sizeIn) { strided(in.F(), in.P(), in.N(0), in.N(1), in.N(2)) }},
		{"ApplyQKStrided", func(in *sizeIn) { qkStrided(in.F(), in.P(), in.N(0), in.N(1), in.N(2)) }},
		{"ApplyTo", func(in *sizeIn) { to(in.F(), in.F(), in.P(), in.N(0)) }},
		{"ApplyToSlots", func(in *sizeIn) { slots(in.F(), in.P(), in.F(), in.P(), in.N(0)) }},
		{"Shift", func(in *sizeIn) { shift(in.F(), int32(in.N(1)), in.N(0), in.N(2)) }},
		{"FrequenciesAt", func(in *sizeIn) { freqsAt(in.N(0)) }},
	}
}

// rope16SizeFns are the exported functions of a 16-bit rope package.
func rope16SizeFns(apply, inverse, headMajor func([]uint16, []int32, int),
	qk func(q, k []uint16, pos []int32, qh, kh int),
	strided func([]uint16, []int32, int, int, int),
	qkStrided func([]uint16, []int32, int, int, int),
	to func(dst, src []uint16, pos []int32, heads int),
	slots func(cache []uint16, slots []int32, src []uint16, pos []int32, heads int),
	shift func([]uint16, int32, int, int),
) []sizeFn {
	return []sizeFn{
		{"Apply", func(in *sizeIn) { apply(in.H(), in.P(), in.N(0)) }},
		{"Inverse", func(in *sizeIn) { inverse(in.H(), in.P(), in.N(0)) }},
		{"ApplyHeadMajor", func(in *sizeIn) { headMajor(in.H(), in.P(), in.N(0)) }},
		{"ApplyQK", func(in *sizeIn) { qk(in.H(), in.H(), in.P(), in.N(0), in.N(1)) }},
		{"ApplyStrided", func(in *sizeIn) { strided(in.H(), in.P(), in.N(0), in.N(1), in.N(2)) }},
		{"ApplyQKStrided", func(in *sizeIn) { qkStrided(in.H(), in.P(), in.N(0), in.N(1), in.N(2)) }},
		{"ApplyTo", func(in *sizeIn) { to(in.H(), in.H(), in.P(), in.N(0)) }},
		{"ApplyToSlots", func(in *sizeIn) { slots(in.H(), in.P(), in.H(), in.P(), in.N(0)) }},
		{"Shift", func(in *sizeIn) { shift(in.H(), int32(in.N(1)), in.N(0), in.N(2)) }},
	}
}

// biasSizeFns are the exported functions of an alibi (table dropped) or
// rpe_bias package.
func biasSizeFns(p biasPkg, table bool, bucket func(int) int) []sizeFn {
	tab := func(in *sizeIn) []float32 {
		if table {
			return in.F()
		}
		return nil
	}
	fns := []sizeFn{
		{"AddBias", func(in *sizeIn) { p.add(in.F(), tab(in), in.N(0), in.N(1), in.N(2)) }},
		{"Softmax", func(in *sizeIn) { p.softmax(in.F(), tab(in), in.N(0), in.N(1), in.N(2), 0.125) }},
		{"Bias", func(in *sizeIn) { p.bias(in.F(), tab(in), in.N(0), in.N(1), in.N(2)) }},
		{"SoftmaxPos", func(in *sizeIn) { p.softmaxPos(in.F(), tab(in), in.P(), in.P(), in.N(0), in.N(1), 0.125) }},
		{"AddBiasPos", func(in *sizeIn) { p.addPos(in.F(), tab(in), in.P(), in.P(), in.N(0), in.N(1)) }},
		{"BiasPos", func(in *sizeIn) { p.biasPos(in.F(), tab(in), in.P(), in.P(), in.N(0), in.N(1)) }},
	}
	if bucket != nil {
		fns = append(fns, sizeFn{"Bucket", func(in *sizeIn) { bucket(in.N(0)) }})
	}
	return fns
}

// attnSizeFns are the attention forms of a package, called with fuzzed head
// counts (sizes 0 and 1), window (size 2), and slices: Attention (and, for
// rope, AttentionRotated) and AttentionPaged, the table after v for rpe_bias.
// opts builds the package's options.
func attnSizeFns[O any](opts func(qh, kvh, window int) O, table bool,
	att func(out, q, k, v, table []float32, qpos, kpos []int32, o O),
	rotated func(out, q, k, v []float32, qpos, kpos []int32, o O),
	paged func(out, q, kc, vc, table []float32, qpos, qStart, slots, kpos, kStart []int32, o O),
) []sizeFn {
	tab := func(in *sizeIn) []float32 {
		if table {
			return in.F()
		}
		return nil
	}
	o := func(in *sizeIn) O { return opts(in.N(0), in.N(1), in.N(2)) }
	fns := []sizeFn{
		{"Attention", func(in *sizeIn) { att(in.F(), in.F(), in.F(), in.F(), tab(in), in.P(), in.P(), o(in)) }},
		{"AttentionPaged", func(in *sizeIn) {
			paged(in.F(), in.F(), in.F(), in.F(), tab(in), in.P(), in.P(), in.P(), in.P(), in.P(), o(in))
		}},
	}
	if rotated != nil {
		fns = append(fns, sizeFn{"AttentionRotated", func(in *sizeIn) { rotated(in.F(), in.F(), in.F(), in.F(), in.P(), in.P(), o(in)) }})
	}
	return fns
}

// sizePkgs are the packages FuzzSizes calls: rope (float32, with M-RoPE,
// ScaleQ and Deinterleave, and 16-bit with each), alibi, rpe_bias, both absolute kinds,
// rpe_full and xl.
func sizePkgs() []sizePkg {
	reg := func(v func() []string, a func(string) bool, u func(string) func(), act func() string) registry {
		return registry{v, a, u, act}
	}
	return []sizePkg{
		{"llama2_7b", llama2_7b.HeadDim, reg(llama2_7b.Variants, llama2_7b.VariantAvailable, llama2_7b.UseVariant, llama2_7b.ActiveVariant),
			append(ropeSizeFns(llama2_7b.Apply, llama2_7b.Inverse, llama2_7b.ApplyHeadMajor, llama2_7b.ApplyQK, llama2_7b.ApplyStrided,
				llama2_7b.ApplyQKStrided, llama2_7b.ApplyTo, llama2_7b.ApplyToSlots, llama2_7b.Shift, llama2_7b.FrequenciesAt),
				attnSizeFns(func(qh, kvh, w int) llama2_7b.AttentionOptions {
					return llama2_7b.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.1, Causal: w%2 == 0, Window: w}
				}, false,
					func(out, q, k, v, _ []float32, qpos, kpos []int32, o llama2_7b.AttentionOptions) {
						llama2_7b.Attention(out, q, k, v, qpos, kpos, o)
					},
					llama2_7b.AttentionRotated,
					func(out, q, kc, vc, _ []float32, qpos, qs, slots, kpos, ks []int32, o llama2_7b.AttentionOptions) {
						llama2_7b.AttentionPaged(out, q, kc, vc, qpos, qs, slots, kpos, ks, o)
					})...)},
		{"llama4_scout", llama4_scout.HeadDim, reg(llama4_scout.Variants, llama4_scout.VariantAvailable, llama4_scout.UseVariant, llama4_scout.ActiveVariant),
			append(ropeSizeFns(llama4_scout.Apply, llama4_scout.Inverse, llama4_scout.ApplyHeadMajor, llama4_scout.ApplyQK, llama4_scout.ApplyStrided,
				llama4_scout.ApplyQKStrided, llama4_scout.ApplyTo, llama4_scout.ApplyToSlots, llama4_scout.Shift, llama4_scout.FrequenciesAt),
				sizeFn{"ScaleQ", func(in *sizeIn) { llama4_scout.ScaleQ(in.F(), in.P(), in.N(0)) }},
				sizeFn{"Deinterleave", func(in *sizeIn) { llama4_scout.Deinterleave(in.F(), in.F()) }})},
		{"qwen25_vl_7b", qwen25_vl_7b.HeadDim, reg(qwen25_vl_7b.Variants, qwen25_vl_7b.VariantAvailable, qwen25_vl_7b.UseVariant, qwen25_vl_7b.ActiveVariant),
			append(ropeSizeFns(qwen25_vl_7b.Apply, qwen25_vl_7b.Inverse, qwen25_vl_7b.ApplyHeadMajor, qwen25_vl_7b.ApplyQK, qwen25_vl_7b.ApplyStrided,
				qwen25_vl_7b.ApplyQKStrided, qwen25_vl_7b.ApplyTo, qwen25_vl_7b.ApplyToSlots, qwen25_vl_7b.Shift, qwen25_vl_7b.FrequenciesAt),
				sizeFn{"ApplyMRoPE", func(in *sizeIn) { qwen25_vl_7b.ApplyMRoPE(in.F(), in.P(), in.N(0)) }},
				sizeFn{"InverseMRoPE", func(in *sizeIn) { qwen25_vl_7b.InverseMRoPE(in.F(), in.P(), in.N(0)) }},
				sizeFn{"ApplyQKMRoPE", func(in *sizeIn) { qwen25_vl_7b.ApplyQKMRoPE(in.F(), in.F(), in.P(), in.N(0), in.N(1)) }})},
		{"grope_temp_f16", grope_temp_f16.HeadDim, reg(grope_temp_f16.Variants, grope_temp_f16.VariantAvailable, grope_temp_f16.UseVariant, grope_temp_f16.ActiveVariant),
			append(rope16SizeFns(grope_temp_f16.Apply, grope_temp_f16.Inverse, grope_temp_f16.ApplyHeadMajor, grope_temp_f16.ApplyQK, grope_temp_f16.ApplyStrided,
				grope_temp_f16.ApplyQKStrided, grope_temp_f16.ApplyTo, grope_temp_f16.ApplyToSlots, grope_temp_f16.Shift),
				sizeFn{"ScaleQ", func(in *sizeIn) { grope_temp_f16.ScaleQ(in.H(), in.P(), in.N(0)) }},
				sizeFn{"FrequenciesAt", func(in *sizeIn) { grope_temp_f16.FrequenciesAt(in.N(0)) }})},
		{"gmrope_qwen3_f16", gmrope_qwen3_f16.HeadDim, reg(gmrope_qwen3_f16.Variants, gmrope_qwen3_f16.VariantAvailable, gmrope_qwen3_f16.UseVariant, gmrope_qwen3_f16.ActiveVariant),
			append(rope16SizeFns(gmrope_qwen3_f16.Apply, gmrope_qwen3_f16.Inverse, gmrope_qwen3_f16.ApplyHeadMajor, gmrope_qwen3_f16.ApplyQK, gmrope_qwen3_f16.ApplyStrided,
				gmrope_qwen3_f16.ApplyQKStrided, gmrope_qwen3_f16.ApplyTo, gmrope_qwen3_f16.ApplyToSlots, gmrope_qwen3_f16.Shift),
				sizeFn{"ApplyMRoPE", func(in *sizeIn) { gmrope_qwen3_f16.ApplyMRoPE(in.H(), in.P(), in.N(0)) }},
				sizeFn{"InverseMRoPE", func(in *sizeIn) { gmrope_qwen3_f16.InverseMRoPE(in.H(), in.P(), in.N(0)) }},
				sizeFn{"ApplyQKMRoPE", func(in *sizeIn) { gmrope_qwen3_f16.ApplyQKMRoPE(in.H(), in.H(), in.P(), in.N(0), in.N(1)) }})},
		{"bloom_176b", bloom_176b.Heads, biasPkgs[0].reg, append(biasSizeFns(biasPkgs[0], false, nil),
			attnSizeFns(func(qh, kvh, w int) bloom_176b.AttentionOptions {
				return bloom_176b.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.1, Causal: w%2 == 0, Window: w}
			}, false,
				func(out, q, k, v, _ []float32, qpos, kpos []int32, o bloom_176b.AttentionOptions) {
					bloom_176b.Attention(out, q, k, v, qpos, kpos, o)
				}, nil,
				func(out, q, kc, vc, _ []float32, qpos, qs, slots, kpos, ks []int32, o bloom_176b.AttentionOptions) {
					bloom_176b.AttentionPaged(out, q, kc, vc, qpos, qs, slots, kpos, ks, o)
				})...)},
		{"t5_base", t5_base.Heads, biasPkgs[1].reg, append(biasSizeFns(biasPkgs[1], true, t5_base.Bucket),
			attnSizeFns(func(qh, kvh, w int) t5_base.AttentionOptions {
				return t5_base.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.1, Causal: w%2 == 0, Window: w}
			}, true, t5_base.Attention, nil, t5_base.AttentionPaged)...)},
		{"transformer_base", transformer_base.DModel, absPkgs[0].reg, []sizeFn{
			{"Add", func(in *sizeIn) { transformer_base.Add(in.F(), in.P()) }},
			{"Encode", func(in *sizeIn) { transformer_base.Encode(in.F(), in.N(0)) }},
		}},
		{"bert_base", bert_base.DModel, absPkgs[1].reg, []sizeFn{
			{"Add", func(in *sizeIn) { bert_base.Add(in.F(), in.F(), in.P()) }},
		}},
		{"shaw2018_base", shaw2018_base.HeadDim, rpeFullPkgs[0].reg, []sizeFn{
			{"Scores", func(in *sizeIn) { shaw2018_base.Scores(in.F(), in.F(), in.F(), in.F(), in.N(0), in.N(1), in.N(2)) }},
			{"Output", func(in *sizeIn) { shaw2018_base.Output(in.F(), in.F(), in.F(), in.F(), in.N(0), in.N(1), in.N(2)) }},
			{"Bucket", func(in *sizeIn) { shaw2018_base.Bucket(in.N(0)) }},
		}},
		{"transformer_xl_base", transformer_xl_base.HeadDim, xlPkgs[0].reg, []sizeFn{
			{"Scores", func(in *sizeIn) {
				transformer_xl_base.Scores(in.F(), in.F(), in.F(), in.F(), in.F(), in.F(), in.N(0), in.N(1), in.N(2))
			}},
			{"Relative", func(in *sizeIn) { transformer_xl_base.Relative(in.F(), in.N(0)) }},
			{"RelRows", func(in *sizeIn) { transformer_xl_base.RelRows(in.N(0), in.N(1)) }},
		}},
	}
}

// FuzzSizes calls every exported function of a rope (float32 and 16-bit,
// with M-RoPE and ScaleQ), alibi, rpe_bias (with their attention forms),
// absolute, rpe_full and xl package
// with fuzzed size arguments, including products that overflow int, on
// every variant the CPU runs, with every slice against a PROT_NONE guard
// page (at its end or its start). A call must return, or panic with a
// message that starts with the package and function name before writing
// anything; a fault (a read or write outside a slice), a runtime error
// (index out of range, division by zero, makeslice) or a write before the
// panic fails.
func FuzzSizes(f *testing.F) {
	pkgs := sizePkgs()
	word := func(vs ...int64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	// The reported reproducer, Shift(x, 5, 1<<57+1, 0) on a 128-float x, is
	// sizes (1<<57+1, 5, 0): case 9 keeps the raw value.
	for pi, p := range pkgs {
		for fi := range p.fns {
			f.Add(uint8(pi), uint8(fi), []byte{1<<2 | 1, 2 << 2, 1 << 2}, word(9|(1<<57+1)<<4, 9|5<<4, 0), uint64(fi))
			f.Add(uint8(pi), uint8(fi), []byte{2<<2 | 1, 4 << 2, 2<<2 | 1, 4<<2 | 3}, word(4, 11, 6|3<<8), uint64(pi))
			f.Add(uint8(pi), uint8(fi), []byte{6<<2 | 1, 3<<2 | 1, 6<<2 | 1, 3 << 2}, word(2|3<<8, 13|128<<8, 13|256<<8, 1), uint64(7))
		}
	}
	f.Fuzz(func(t *testing.T, pi, fi uint8, lens, sizes []byte, seed uint64) {
		p := pkgs[int(pi)%len(pkgs)]
		fn := p.fns[int(fi)%len(p.fns)]
		var n [6]int
		for i := range n {
			var v int64
			if len(sizes) >= 8*(i+1) {
				v = int64(binary.LittleEndian.Uint64(sizes[8*i:]))
			}
			n[i] = sizeArg(v)
		}
		prefix := p.name + ": " + fn.name + ": "
		p.reg.each(t, func(variant string) {
			in := &sizeIn{t: t, atEnd: seed&1 == 0, unit: p.unit, lens: lens, r: rand.New(rand.NewPCG(seed, 3)), n: n}
			what := fmt.Sprintf("%s %s %s(sizes %v, lens %v, atEnd %v)", p.name, variant, fn.name, n, lens, in.atEnd)
			old := debug.SetPanicOnFault(true)
			e := catch(func() { fn.call(in) })
			debug.SetPanicOnFault(old)
			if e == nil {
				return
			}
			if msg, ok := e.(string); !ok || !strings.HasPrefix(msg, prefix) {
				t.Fatalf("%s: panicked with %T %v, want a panic message starting %q", what, e, e, prefix)
			}
			if s := in.unchanged(); s != "" {
				t.Fatalf("%s: panicked (%v) after writing %s", what, e, s)
			}
		})
	})
}
