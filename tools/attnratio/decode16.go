package main

import (
	"fmt"
	"math"

	bf16 "github.com/posenc/posenc/internal/goldens/grope_llama31_bf16"
	f16 "github.com/posenc/posenc/internal/goldens/grope_llama31_f16"
)

// decode16 is the decode measurement over 16-bit K/V (-dtype f16 or bf16):
// the Llama 3.1 specs of the golden oracle stored in that type
// (internal/goldens/grope_llama31_f16, _bf16; head_dim 128), Attention with
// the rotation inside and AttentionRotated, against copy() of the same
// 16-bit K+V bytes.
func decode16(dtype string, keys, kv, rounds int, variants []string) error {
	const qh, hd = 32, 128
	type pkg struct {
		use                func(string) func()
		attention, rotated func(out, q, k, v []uint16, qpos, kpos []int32)
		narrow             func(float32) uint16
	}
	var p pkg
	switch dtype {
	case "f16":
		o := f16.AttentionOptions{QHeads: qh, KVHeads: kv, Scale: 0.088, Causal: true}
		p = pkg{f16.UseVariant,
			func(out, q, k, v []uint16, qpos, kpos []int32) { f16.Attention(out, q, k, v, qpos, kpos, o) },
			func(out, q, k, v []uint16, qpos, kpos []int32) { f16.AttentionRotated(out, q, k, v, qpos, kpos, o) },
			f16Bits}
	case "bf16":
		o := bf16.AttentionOptions{QHeads: qh, KVHeads: kv, Scale: 0.088, Causal: true}
		p = pkg{bf16.UseVariant,
			func(out, q, k, v []uint16, qpos, kpos []int32) { bf16.Attention(out, q, k, v, qpos, kpos, o) },
			func(out, q, k, v []uint16, qpos, kpos []int32) { bf16.AttentionRotated(out, q, k, v, qpos, kpos, o) },
			bf16Bits}
	default:
		return fmt.Errorf("-dtype %q: want f32, f16 or bf16", dtype)
	}
	n := keys * kv * hd
	k, v := make([]uint16, n), make([]uint16, n)
	for i := range k {
		k[i], v[i] = p.narrow(float32(i%5-2)/4), p.narrow(float32(i%3-1)/2)
	}
	q, out := make([]uint16, qh*hd), make([]uint16, qh*hd)
	for i := range q {
		q[i] = p.narrow(float32(i%7-3) / 8)
	}
	kpos := make([]int32, keys)
	for j := range kpos {
		kpos[j] = int32(j)
	}
	qpos := kpos[keys-1:]
	src := append(append([]uint16(nil), k...), v...)
	dst := make([]uint16, len(src))
	fmt.Printf("decode, 1 query over %d keys, %d/%d heads × %d, %s K+V %d MiB: copy() time ÷ attention time, median [quartiles] of %d rounds\n",
		keys, qh, kv, hd, dtype, 4*n>>20, rounds)
	for _, f := range []struct {
		name string
		call func(out, q, k, v []uint16, qpos, kpos []int32)
	}{{"rope inside (grope_llama31_" + dtype + " Attention)", p.attention}, {"rotated cache (AttentionRotated)", p.rotated}} {
		for _, vn := range variants {
			restore := p.use(vn)
			rs, ts := againstCopy(dst, src, rounds, func() { f.call(out, q, k, v, qpos, kpos) })
			restore()
			row(f.name, vn, rs, ts)
		}
	}
	readLimit(k, v, src, dst, rounds)
	return nil
}

// f16Bits is the binary16 encoding of x for the benchmark's small values
// (exact: multiples of 1/8 in [−3/8, 3/8], and ±1/2, ±1/4, 0).
func f16Bits(x float32) uint16 {
	if x == 0 {
		return 0
	}
	var sign uint16
	if x < 0 {
		sign, x = 0x8000, -x
	}
	e := 0
	for x < 1 {
		x *= 2
		e--
	}
	return sign | uint16(e+15)<<10 | uint16((x-1)*1024)
}

// bf16Bits is the bfloat16 encoding of x (the top half of its float32 bits:
// exact for the benchmark's values).
func bf16Bits(x float32) uint16 { return uint16(math.Float32bits(x) >> 16) }
