package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// GroupedMaxBytes is the size of the largest RoPE kernel call, in bytes of
// rotated tensors (tokens × (qHeads+kHeads) × HeadDim × 4), that the AVX2
// and AVX-512 kernels run in their grouped loop order (asm/rope); larger
// calls take the streaming order. The harness's large cases make every
// kernel call above it, so both orders of every variant that has the two
// are checked.
const GroupedMaxBytes = 512 << 10

// exactChunkTokens bounds the tokens of one kernel call on the exact path:
// generated packages compute the rows of positions outside the table into a
// scratch buffer at most 64 tokens at a time (docs/internals.md, "rope").
const exactChunkTokens = 64

// largeHeads returns the smallest head count h such that exactChunkTokens
// tokens of h heads of elemBytes-byte elements (4, or 2 for f16 and bf16
// storage: the kernels count bytes of the stored type) exceed
// GroupedMaxBytes, so even a call cut into exact-path chunks hands the
// kernel calls above the grouped limit.
func largeHeads(headDim, elemBytes int) int {
	per := exactChunkTokens * headDim * elemBytes // bytes of one head over a chunk
	return GroupedMaxBytes/per + 1
}

// elemBytes is the size of one stored element of st.
func (st Storage) elemBytes() int {
	if st == StorageF16 || st == StorageBF16 {
		return 2
	}
	return 4
}

// tablePositions returns a generator of positions that take the table path
// in every generated package: [0, max_position), and below
// original_max_position for dynamic and longrope, whose calls switch to
// exact rows once max(pos)+1 exceeds it.
func tablePositions(s *spec.Spec) func(*rand.Rand) int64 {
	hi := int64(s.MaxPosition)
	if hi <= 0 {
		hi = 4096
	}
	if sc := s.Scaling; sc != nil && sc.OriginalMaxPosition > 0 && int64(sc.OriginalMaxPosition) < hi {
		hi = int64(sc.OriginalMaxPosition)
	}
	return uniform(0, hi)
}

// ropeLarge runs the large cases: Apply, Inverse, ApplyQK and ApplyTo calls
// (ApplyTo: the kernels' loop from a separate source) of more than
// GroupedMaxBytes, with positions in the table (one kernel call for
// the whole tensor) and beyond it (kernel calls of exactChunkTokens tokens,
// each above the grouped limit, plus a shorter last chunk).
func ropeLarge(rep *Report, s *spec.Spec, st Storage, k RoPEKernels, r *rand.Rand) {
	hd := s.HeadDim
	heads := largeHeads(hd, st.elemBytes())
	n := exactChunkTokens + exactChunkTokens/2 + 3 // two exact chunks, the second partial
	in := tablePositions(s)
	schemes := []posScheme{
		{"pos<max_position", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, in) }},
		{"pos∈[2^20,2^31)", func(r *rand.Rand, n int) []int32 { return fill(r, n, nil, uniform(1<<20, 1<<31-1)) }},
	}
	for _, sch := range schemes {
		pos := sch.gen(r, n)
		x := st.vector(r, n*heads*hd)
		name := fmt.Sprintf("Apply large tokens=%d heads=%d %s", n, heads, sch.name)
		ropeCase(rep, s, st, name, pos, []ropeOperand{{x, heads}}, false, func(o []*guarded, pos []int32) {
			k.Apply(o[0].s, pos, heads)
		})
		x = st.vector(r, n*heads*hd)
		name = fmt.Sprintf("Inverse large tokens=%d heads=%d %s", n, heads, sch.name)
		ropeCase(rep, s, st, name, pos, []ropeOperand{{x, heads}}, true, func(o []*guarded, pos []int32) {
			k.Inverse(o[0].s, pos, heads)
		})
	}
	// Grouped-query: the k heads count towards the call's size too.
	kh := max(1, heads/4)
	qh := heads - kh + 1
	pos := fill(r, n, nil, in)
	q, kk := st.vector(r, n*qh*hd), st.vector(r, n*kh*hd)
	name := fmt.Sprintf("ApplyQK large tokens=%d qHeads=%d kHeads=%d %s", n, qh, kh, schemes[0].name)
	ropeCase(rep, s, st, name, pos, []ropeOperand{{q, qh}, {kk, kh}}, false, func(o []*guarded, pos []int32) {
		k.ApplyQK(o[0].s, o[1].s, pos, qh, kh)
	})
	if k.ApplyTo != nil {
		for _, sch := range schemes {
			pos := sch.gen(r, n)
			src := st.vector(r, n*heads*hd)
			c := rep.begin(fmt.Sprintf("ApplyTo large tokens=%d heads=%d %s", n, heads, sch.name))
			gs, gd := guard(src), guardUnset(len(src))
			if c.call(func() { k.ApplyTo(gd.s, gs.s, append([]int32(nil), pos...), heads) }) {
				gs.intact(c, "src")
				gd.intact(c, "dst")
				for i := range src {
					c.same("src", i, gs.s[i], src[i])
				}
				at := func(t, h int) int { return (t*heads + h) * hd }
				checkLaid(c, s, st, "dst", gd.s, gd.s, src, RoPEApply(s, src, pos, heads, false), n, heads, at, applyTol(s, pos))
			}
		}
	}
}

// manyHeadsUnits is the number of work items per token that the many-heads
// cases exceed: a GPU kernel that takes a token's heads in rounds of a few
// hundred units of up to 8 pairs (the CUDA RoPE kernel: 256 threads, two
// items each) then runs more than two rounds, and its last one partial.
const manyHeadsUnits = 1024

// ManyHeads is the head count of the many-heads cases: the smallest that
// gives a token more than manyHeadsUnits units of 16 rotated dims.
func ManyHeads(s *spec.Spec) int { return manyHeadsUnits*16/s.RotaryDim + 1 }

// ropeManyHeads runs Apply, ApplyQK and ApplyTo (out of place: the dims
// beyond RotaryDim are copied) on a few tokens of ManyHeads(s) heads.
func ropeManyHeads(rep *Report, s *spec.Spec, st Storage, k RoPEKernels, r *rand.Rand) {
	hd := s.HeadDim
	heads := ManyHeads(s)
	const n = 3
	pos := fill(r, n, []int64{0, 1 << 20, math.MaxInt32}, nil)
	name := fmt.Sprintf("Apply many heads tokens=%d heads=%d", n, heads)
	ropeCase(rep, s, st, name, pos, []ropeOperand{{st.vector(r, n*heads*hd), heads}}, false, func(o []*guarded, pos []int32) {
		k.Apply(o[0].s, pos, heads)
	})
	const kh = 3
	q, kk := st.vector(r, n*heads*hd), st.vector(r, n*kh*hd)
	name = fmt.Sprintf("ApplyQK many heads tokens=%d qHeads=%d kHeads=%d", n, heads, kh)
	ropeCase(rep, s, st, name, pos, []ropeOperand{{q, heads}, {kk, kh}}, false, func(o []*guarded, pos []int32) {
		k.ApplyQK(o[0].s, o[1].s, pos, heads, kh)
	})
	if k.ApplyTo != nil {
		src := st.vector(r, n*heads*hd)
		c := rep.begin(fmt.Sprintf("ApplyTo many heads tokens=%d heads=%d", n, heads))
		gs, gd := guard(src), guardUnset(len(src))
		if c.call(func() { k.ApplyTo(gd.s, gs.s, append([]int32(nil), pos...), heads) }) {
			gs.intact(c, "src")
			gd.intact(c, "dst")
			for i := range src {
				c.same("src", i, gs.s[i], src[i])
			}
			at := func(t, h int) int { return (t*heads + h) * hd }
			checkLaid(c, s, st, "dst", gd.s, gd.s, src, RoPEApply(s, src, pos, heads, false), n, heads, at, applyTol(s, pos))
		}
	}
}
