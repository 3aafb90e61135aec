package verify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
)

// RoPE16Kernels are the exported functions and constants of a generated
// rope package whose spec stores f16 or bf16 (dtype): RoPEKernels over raw
// 16-bit slices, each element the encoding of one value.
type RoPE16Kernels struct {
	Apply           func(x []uint16, pos []int32, heads int)
	ApplyQK         func(q, k []uint16, pos []int32, qHeads, kHeads int)
	Inverse         func(x []uint16, pos []int32, heads int)
	Frequencies     func() []float64
	FrequenciesAt   func(seqLen int) []float64
	AttentionFactor float64

	// The engine forms; a nil one is not checked.
	ApplyStrided   func(x []uint16, pos []int32, heads, stride, headStride int)
	ApplyHeadMajor func(x []uint16, pos []int32, heads int)
	ApplyQKStrided func(qkv []uint16, pos []int32, qHeads, kHeads, stride int)
	ApplyTo        func(dst, src []uint16, pos []int32, heads int)
	ApplyToSlots   func(cache []uint16, slots []int32, src []uint16, pos []int32, heads int)
	Shift          func(x []uint16, delta int32, heads, n int)

	// The M-RoPE forms of a spec with mrope_section and Llama 4's ScaleQ
	// of a spec with attn_temperature, as in RoPEKernels.
	ApplyMRoPE   func(x []uint16, pos []int32, heads int)
	ApplyQKMRoPE func(q, k []uint16, pos []int32, qHeads, kHeads int)
	InverseMRoPE func(x []uint16, pos []int32, heads int)
	ScaleQ       func(q []uint16, pos []int32, heads int)
}

// storage16 returns s's 16-bit storage type, or the failed report of the
// harness fn when s stores neither f16 nor bf16.
func storage16(s *spec.Spec, fn string) (Storage, *Report) {
	st := Storage(s.DType)
	if st != StorageF16 && st != StorageBF16 {
		rep := &Report{Spec: s.Name}
		rep.begin("kernels").fail("%s: spec dtype %q is not f16 or bf16", fn, s.DType)
		return st, rep
	}
	return st, nil
}

// RunRoPE16 checks a rope variant storing the spec's dtype (f16 or bf16)
// with every case of RunRoPE, on inputs that are values of the storage type
// (some subnormal, some zero). The float64 reference is computed on those
// inputs and rounded to the storage type (Storage.Round, nearest even);
// every rotated output y must satisfy
//
//	|y − round(ref)| ≤ ulp(round(ref)) + b
//
// with ulp the storage type's spacing at that magnitude and b the float32
// kernel's own bound of RunRoPE, tol·(|x0|+|x1|)·A. The kernel computes in
// float32 (within b of ref) and rounds once to the storage type, so it
// lands on round(ref) or a neighbour; b adds nothing unless the pair cancels
// (|y| ≪ |x0|+|x1|). Dims ≥ RotaryDim keep their bits, and the 16-bit
// slices lie inside sentinel-filled buffers that must stay intact. The
// golden cases (float32 inputs) are not run.
func RunRoPE16(s *spec.Spec, k RoPE16Kernels) *Report {
	st, bad := storage16(s, "RunRoPE16")
	if bad != nil {
		return bad
	}
	a := ropeAdapter{st}
	k32 := RoPEKernels{
		Frequencies: k.Frequencies, FrequenciesAt: k.FrequenciesAt, AttentionFactor: k.AttentionFactor,
	}
	if k.Apply != nil {
		k32.Apply = func(x []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.Apply(h[0], pos, heads) }, x)
		}
	}
	if k.ApplyQK != nil {
		k32.ApplyQK = func(q, kk []float32, pos []int32, qh, kh int) {
			a.run(func(h [][]uint16) { k.ApplyQK(h[0], h[1], pos, qh, kh) }, q, kk)
		}
	}
	if k.Inverse != nil {
		k32.Inverse = func(x []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.Inverse(h[0], pos, heads) }, x)
		}
	}
	if k.ApplyStrided != nil {
		k32.ApplyStrided = func(x []float32, pos []int32, heads, stride, headStride int) {
			a.run(func(h [][]uint16) { k.ApplyStrided(h[0], pos, heads, stride, headStride) }, x)
		}
	}
	if k.ApplyHeadMajor != nil {
		k32.ApplyHeadMajor = func(x []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.ApplyHeadMajor(h[0], pos, heads) }, x)
		}
	}
	if k.ApplyQKStrided != nil {
		k32.ApplyQKStrided = func(qkv []float32, pos []int32, qh, kh, stride int) {
			a.run(func(h [][]uint16) { k.ApplyQKStrided(h[0], pos, qh, kh, stride) }, qkv)
		}
	}
	if k.ApplyTo != nil {
		k32.ApplyTo = func(dst, src []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.ApplyTo(h[0], h[1], pos, heads) }, dst, src)
		}
	}
	if k.ApplyToSlots != nil {
		k32.ApplyToSlots = func(cache []float32, slots []int32, src []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.ApplyToSlots(h[0], slots, h[1], pos, heads) }, cache, src)
		}
	}
	if k.Shift != nil {
		k32.Shift = func(x []float32, delta int32, heads, n int) {
			a.run(func(h [][]uint16) { k.Shift(h[0], delta, heads, n) }, x)
		}
	}
	if k.ApplyMRoPE != nil {
		k32.ApplyMRoPE = func(x []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.ApplyMRoPE(h[0], pos, heads) }, x)
		}
	}
	if k.ApplyQKMRoPE != nil {
		k32.ApplyQKMRoPE = func(q, kk []float32, pos []int32, qh, kh int) {
			a.run(func(h [][]uint16) { k.ApplyQKMRoPE(h[0], h[1], pos, qh, kh) }, q, kk)
		}
	}
	if k.InverseMRoPE != nil {
		k32.InverseMRoPE = func(x []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.InverseMRoPE(h[0], pos, heads) }, x)
		}
	}
	if k.ScaleQ != nil {
		k32.ScaleQ = func(q []float32, pos []int32, heads int) {
			a.run(func(h [][]uint16) { k.ScaleQ(h[0], pos, heads) }, q)
		}
	}
	rep := runRoPE(s, k32, st)
	if k32.Apply != nil && k32.Inverse != nil {
		ropeExactNarrowing(rep, s, st, k32)
	}
	rep.Target = string(st) // replaced by the variant name in the generated test
	return rep
}

// ropeAdapter runs a 16-bit kernel on the float32 slices of the harness.
type ropeAdapter struct{ st Storage }

// guard16Pad is the number of sentinel elements each side of a 16-bit
// slice, and sentinel16 their bits, compared bit for bit after the call.
const (
	guard16Pad = 67
	sentinel16 = 0x7e5a
)

// run encodes every float32 slice (whose elements are values of the storage
// type; NaN becomes the canonical NaN) into a fresh 16-bit slice inside
// sentinels, calls fn, checks the sentinels (panicking, which the harness
// reports as a failed case, when one changed) and decodes the slices back
// into the float32 ones. When fn panics nothing is written back.
func (a ropeAdapter) run(fn func([][]uint16), xs ...[]float32) {
	bufs := make([][]uint16, len(xs))
	hs := make([][]uint16, len(xs))
	for i, x := range xs {
		bufs[i] = make([]uint16, len(x)+2*guard16Pad)
		for j := range bufs[i] {
			bufs[i][j] = sentinel16
		}
		hs[i] = bufs[i][guard16Pad : guard16Pad+len(x) : guard16Pad+len(x)]
		for j, v := range x {
			hs[i][j] = a.st.Bits(a.st.Round(float64(v)))
		}
	}
	fn(hs)
	for i, x := range xs {
		for j := range guard16Pad {
			if bufs[i][j] != sentinel16 || bufs[i][guard16Pad+len(x)+j] != sentinel16 {
				panic(fmt.Sprintf("verify: the kernel wrote outside 16-bit argument %d", i+1))
			}
		}
		for j, b := range hs[i] {
			x[j] = float32(a.st.Value(b))
		}
	}
}

// vector returns n random inputs for the storage type: randomVector's
// values (unchanged for f32), rounded to f16 or bf16. For f16 the large
// values are 1e2 instead of 1e4 times a normal draw, so that rotated pairs
// stay below 65504; the tiny ones (1e-4 times a draw) include f16
// subnormals.
func (st Storage) vector(r *rand.Rand, n int) []float32 {
	v := randomVector(r, n)
	if st == StorageF32 {
		return v
	}
	for i, x := range v {
		if st == StorageF16 && math.Abs(float64(x)) > 100 {
			x /= 100
		}
		v[i] = float32(st.Round(float64(x)))
	}
	return v
}

// near checks one rotated output: for f32 |got − want| ≤ b, for f16 and
// bf16 |got − round(want)| ≤ ulp/2 + ulp'/2 + b, ulp at round(want) and
// ulp' at |round(want)| + ulp + b. Without cancellation (b below half an
// ulp) that is ulp + b: got is round(want) or a neighbour. The general form
// follows from |round(y32) − round(y)| ≤ |round(y32) − y32| + |y32 − y| +
// |y − round(y)| for the float32 result y32 of the kernel.
func (st Storage) near(c *check, what string, idx int, got, want, b float64) {
	if st == StorageF32 {
		c.near(what, idx, got, want, b)
		return
	}
	w := st.Round(want)
	u := st.ULP(w)
	bound := u/2 + st.ULP(math.Abs(w)+u+b)/2 + b
	c.near(what, idx, got, w, bound)
}

// ropeExactNarrowing checks the narrowing bit for bit where the float32
// result of the kernel is known exactly: at position 0 the row is
// cos = float32(A), sin = 0 (any frequency, any scaling), so y0 =
// x0·float32(A) − x1·0 and y1 = x1·float32(A) + x0·0, each rounded once to
// float32 (one product of a 16-bit value and a float32 is exact in
// float64). Every output must then be round(y) of the storage type, ties to
// even, bit for bit (a NaN any NaN). The inputs are every encoding of the
// storage type (subnormals, ±0, ±Inf and NaN included) so that the
// attention factors of the spec (1.25, say) produce exact ties; Inverse
// (sin −0) is checked the same way.
func ropeExactNarrowing(rep *Report, s *spec.Spec, st Storage, k RoPEKernels) {
	hd, rd := s.HeadDim, rotaryDim(s)
	heads := (1<<16 + hd - 1) / hd
	x := make([]float32, heads*hd)
	for i := range x {
		x[i] = float32(st.Value(uint16(i)))
	}
	ca := float64(float32(RoPEAttentionFactor(s)))
	pa, pb := RoPEPairs(s)
	for _, inv := range []bool{false, true} {
		name, fn := "Apply", k.Apply
		if inv {
			name, fn = "Inverse", k.Inverse
		}
		c := rep.begin(fmt.Sprintf("%s at position 0 of every %s encoding: round to nearest even", name, st))
		g := guard(x)
		if !c.call(func() { fn(g.s, []int32{0}, heads) }) {
			continue
		}
		g.intact(c, "x")
		sn := 0.0 // sign·sin(0): −0 for Inverse, which decides the sign of zero results
		if inv {
			sn = math.Copysign(0, -1)
		}
		for h := range heads {
			o := h * hd
			for i := range pa {
				x0, x1 := float64(x[o+pa[i]]), float64(x[o+pb[i]])
				y0 := float64(float32(x0*ca - x1*sn))
				y1 := float64(float32(x1*ca + x0*sn))
				for _, e := range []struct {
					at   int
					want float64
				}{{o + pa[i], y0}, {o + pb[i], y1}} {
					got, want := float64(g.s[e.at]), st.Round(e.want)
					if math.IsNaN(got) && math.IsNaN(want) {
						continue
					}
					if st.Bits(got) != st.Bits(want) || math.IsNaN(got) != math.IsNaN(want) {
						c.fail("x[%d] = %v (%#04x), want %v (%#04x) from the exact float32 result %v",
							e.at, got, st.Bits(got), want, st.Bits(want), e.want)
					}
				}
			}
			for d := o + rd; d < o+hd; d++ {
				if !math.IsNaN(float64(x[d])) { // the adapter makes NaNs canonical
					c.same("x", d, g.s[d], x[d])
				}
			}
		}
		if c.fails == 0 {
			rep.ratio(0, c.name)
		}
	}
}
