package cudahost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// StorageUlp returns the relative half-ulp of a storage type: the largest
// relative error of rounding one f32 result to it, round to nearest even
// (2^−11 for f16, 2^−8 for bf16, 0 for f32).
func StorageUlp(dtype string) float64 {
	switch dtype {
	case "f16":
		return 0x1p-11
	case "bf16":
		return 0x1p-8
	}
	return 0
}

// storageAbs returns the absolute rounding error of a storage type below
// its normal range, where StorageUlp's relative bound does not hold: half
// the f16 subnormal spacing 2^−24. bf16 has f32's exponent range, so its
// subnormal error (2^−134) is below every bound and counts as 0.
func storageAbs(dtype string) float64 {
	if dtype == "f16" {
		return 0x1p-25
	}
	return 0
}

// storageCheck accumulates a verify.Report for the storage-type check, case
// by case: per element |got − want| / bound, the worst ratio and its case
// (the first failing case, ratio +Inf), and at most a few failure lines per
// case, each naming the case, the element, got, want and the bound.
type storageCheck struct {
	rep    *verify.Report
	u, abs float64 // StorageUlp and storageAbs of the spec's dtype, with 0.01% slack for the f32 bounds' own rounding
	name   string  // the current case
	fails  int     // failures of the current case
}

// maxStorageFailures caps Report.Failures as the verify harness does.
const maxStorageFailures = 200

// begin starts a case.
func (c *storageCheck) begin(name string) {
	c.rep.Cases++
	c.name, c.fails = name, 0
	if c.rep.Worst == "" {
		c.rep.Worst = name
	}
}

// fail records a failure of the current case (a few per case).
func (c *storageCheck) fail(format string, args ...any) {
	if !math.IsInf(c.rep.MaxRatio, 1) {
		c.rep.MaxRatio, c.rep.Worst = math.Inf(1), c.name
	}
	if c.fails++; c.fails <= 3 && len(c.rep.Failures) < maxStorageFailures {
		c.rep.Failures = append(c.rep.Failures, c.name+": "+fmt.Sprintf(format, args...))
	}
}

// near checks |got − want| ≤ bound for element i of the output what.
func (c *storageCheck) near(what string, i int, got float32, want, bound float64) {
	e := math.Abs(float64(got) - want)
	if !(e <= bound) {
		c.fail("%s[%d] = %v, want %v (|err| %.3g > bound %.3g)", what, i, got, want, e, bound)
		return
	}
	if bound > 0 && e/bound > c.rep.MaxRatio {
		c.rep.MaxRatio, c.rep.Worst = e/bound, c.name
	}
}

// same checks that element i of the output what has want's bits.
func (c *storageCheck) same(what string, i int, got, want float32) {
	if math.Float32bits(got) != math.Float32bits(want) {
		c.fail("%s[%d] = %v, want it untouched (%v)", what, i, got, want)
	}
}

// call runs f, turning a panic (a failed launch) into a failure.
func (c *storageCheck) call(f func()) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			c.fail("%v", p)
			ok = false
		}
	}()
	f()
	return true
}

// check is one case comparing a whole output with the reference: element i
// passes when |got − want| ≤ u·|want| + abs + f32(i), f32 being the float32
// bound of docs/design/ for that element; equal infinities pass.
func (c *storageCheck) check(name string, got []float32, want []float64, f32 func(i int) float64) {
	c.begin(name)
	for i, w := range want {
		if math.IsInf(w, 0) && float64(got[i]) == w {
			continue
		}
		c.near("", i, got[i], w, c.u*math.Abs(w)+c.abs+f32(i))
	}
}

// randStorage returns n normal draws rounded to the storage type.
func (l *Lib) randStorage(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return l.RoundTrip(x)
}

// storagePositions are the positions of the storage check's RoPE and
// absolute cases: table rows, the exact path at large and negative
// positions, the int32 limit.
var storagePositions = []int32{0, 1, 63, 64, 4095, 1 << 20, math.MaxInt32, -5, 77, 1000}

// VerifyStorage checks the CUDA kernels of an f16 or bf16 spec, which store
// every tensor in 16 bits and compute in f32, against the float64
// reference of package verify: the inputs are rounded to the storage type
// first and the reference is computed from the rounded inputs, so the
// kernels' only extra error is the rounding of each f32 result to storage.
// Element bound (docs/design/, "Bounds"): u·|ref| + a + the float32 bound
// of the element, u = StorageUlp(dtype), a = 2^−25 for f16 (its subnormal
// range) and 0 for bf16. Every launcher is called: RoPE Apply, Inverse and
// ApplyQK, the engine forms, the M-RoPE forms and ScaleQ (storage_mrope.go); Bias, AddBias and Softmax; the absolute encodings' Add (and
// Encode); rpe_full Scores and Output; xl Scores and Relative. For f32
// specs it checks the same cases with u = a = 0.
func (l *Lib) VerifyStorage() *verify.Report {
	s := l.spec
	ck := &storageCheck{rep: &verify.Report{Spec: s.Name, Target: l.target}, u: StorageUlp(s.DType) * 1.0001, abs: storageAbs(s.DType)}
	r := rand.New(rand.NewPCG(1, 2))
	switch s.Encoding {
	case spec.RoPE:
		l.storageRoPE(ck, r)
		l.storageRoPEForms(ck, r)
		l.storageMRoPETemperature(ck, r)
		// The attention form through verify's 16-bit attention harness (its
		// cases and bounds; the driver narrows the inputs, which are values
		// of the storage type, exactly and widens the outputs).
		return verify.Merge(ck.rep, verify.RunAttentionStored(s, l.Attention()))
	case spec.ALiBi, spec.RPEBias:
		l.storageBias(ck, r)
		if HasAttention(s) {
			return verify.Merge(ck.rep, verify.RunAttentionStored(s, l.Attention()))
		}
	case spec.RPEFull, spec.XL:
		l.relShapes(ck, r, storageRelShapes, storageRelN)
	default:
		l.storageAbsolute(ck, r)
	}
	return ck.rep
}

// storageRoPE runs Apply, Inverse and ApplyQK.
func (l *Lib) storageRoPE(ck *storageCheck, r *rand.Rand) {
	s := l.spec
	k := l.RoPE()
	a := verify.RoPEAttentionFactor(s)
	pa, pb := verify.RoPEPairs(s)
	partner := make([]int, s.HeadDim) // pair partner of every dim, −1 for untouched ones
	for i := range partner {
		partner[i] = -1
	}
	for i := range pa {
		partner[pa[i]], partner[pb[i]] = pb[i], pa[i]
	}
	// bound is the f32 RoPE bound 1e-5·(|x_a|+|x_b|)·A (any position);
	// dims past the rotary ones must come back as they went in.
	bound := func(x []float32) func(i int) float64 {
		return func(i int) float64 {
			d := i % s.HeadDim
			if partner[d] < 0 {
				return 0
			}
			j := i - d + partner[d]
			return 1e-5 * (math.Abs(float64(x[i])) + math.Abs(float64(x[j]))) * a
		}
	}
	pos := storagePositions
	for _, heads := range []int{1, 3} {
		for _, ps := range [][]int32{pos, pos[:4], {5, 9, 2}} {
			for _, inv := range []bool{false, true} {
				x := l.randStorage(r, len(ps)*heads*s.HeadDim)
				want := verify.RoPEApply(s, x, ps, heads, inv)
				got := append([]float32(nil), x...)
				name := "Apply"
				if inv {
					name = "Inverse"
					k.Inverse(got, ps, heads)
				} else {
					k.Apply(got, ps, heads)
				}
				ck.check(fmt.Sprintf("%s tokens=%d heads=%d", name, len(ps), heads), got, want, bound(x))
			}
		}
	}
	// ManyHeads: more than two rounds of the kernel's work items a token.
	for _, hk := range [][2]int{{4, 2}, {1, 3}, {verify.ManyHeads(s), 3}} {
		q, kk := l.randStorage(r, len(pos)*hk[0]*s.HeadDim), l.randStorage(r, len(pos)*hk[1]*s.HeadDim)
		wq, wk := verify.RoPEApply(s, q, pos, hk[0], false), verify.RoPEApply(s, kk, pos, hk[1], false)
		gq, gk := append([]float32(nil), q...), append([]float32(nil), kk...)
		k.ApplyQK(gq, gk, pos, hk[0], hk[1])
		name := fmt.Sprintf("ApplyQK tokens=%d qHeads=%d kHeads=%d", len(pos), hk[0], hk[1])
		ck.check(name+" q", gq, wq, bound(q))
		ck.check(name+" k", gk, wk, bound(kk))
	}
}

// storageBias runs Bias, AddBias and Softmax of alibi and rpe_bias.
func (l *Lib) storageBias(ck *storageCheck, r *rand.Rand) {
	s := l.spec
	k := l.Bias()
	var table []float32
	if s.Encoding == spec.RPEBias {
		table = l.randStorage(r, s.Heads*s.NumBuckets())
	}
	for _, sh := range [][3]int{{1, 1, 0}, {5, 9, 4}, {7, 7, 0}, {3, 40, 100}, {4, 300, 0}} {
		lq, lk, qo := sh[0], sh[1], sh[2]
		n := s.Heads * lq * lk
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)
		var bias []float64
		dst := make([]float32, n)
		if s.Encoding == spec.ALiBi {
			bias = verify.ALiBiBias(s, lq, lk, qo)
			k.Bias(dst, lq, lk, qo)
		} else {
			bias = verify.RPEBias(s, table, lq, lk, qo)
			k.RPEBias(dst, table, lq, lk, qo)
		}
		mb := 0.0
		for _, b := range bias {
			mb = max(mb, math.Abs(b))
		}
		ck.check("Bias "+shape, dst, bias, func(int) float64 { return 1e-6 * mb })

		scores := l.randStorage(r, n)
		mask := verify.BiasMask(s, qo)
		got := append([]float32(nil), scores...)
		if s.Encoding == spec.ALiBi {
			k.AddBias(got, lq, lk, qo)
		} else {
			k.RPEAddBias(got, table, lq, lk, qo)
		}
		want := verify.AddBias(scores, bias, mask, s.Heads, lq, lk)
		ck.check("AddBias "+shape, got, want, func(i int) float64 { return 1e-6 * max(mb, math.Abs(float64(scores[i]))) })

		got = append(got[:0], scores...)
		if s.Encoding == spec.ALiBi {
			k.Softmax(got, lq, lk, qo, 0.7)
		} else {
			k.RPESoftmax(got, table, lq, lk, qo, 0.7)
		}
		want = verify.Softmax(scores, bias, mask, s.Heads, lq, lk, float64(float32(0.7)))
		ck.check("Softmax "+shape, got, want, func(int) float64 { return 1e-6 })
	}
}

// storageAbsolute runs Add (and Encode) of the absolute encodings; learned
// and mixture get a random table of 5000 rows.
func (l *Lib) storageAbsolute(ck *storageCheck, r *rand.Rand) {
	s := l.spec
	d := s.DModel
	k := l.Absolute()
	pos := storagePositions
	bound := func(want []float64) func(i int) float64 {
		return func(i int) float64 { return 2e-6 * math.Max(1, math.Abs(want[i])) }
	}
	x := l.randStorage(r, len(pos)*d)
	got := append([]float32(nil), x...)
	var want []float64
	switch s.Encoding {
	case spec.Learned, spec.Mixture:
		table := l.randStorage(r, 5000*d)
		tpos := []int32{0, 1, 63, 64, 4095, 4999, 77, 1000}
		x, got = x[:len(tpos)*d], got[:len(tpos)*d]
		if s.Encoding == spec.Learned {
			want = verify.LearnedAdd(s, x, table, tpos)
			k.LearnedAdd(got, table, tpos)
		} else {
			want = verify.MixtureAdd(s, x, table, tpos, 0.3)
			k.MixtureAdd(got, table, tpos, 0.3)
		}
		ck.check(fmt.Sprintf("Add tokens=%d", len(tpos)), got, want, bound(want))
		return
	}
	want = verify.AbsoluteAdd(s, x, pos)
	k.Add(got, pos)
	ck.check(fmt.Sprintf("Add tokens=%d", len(pos)), got, want, bound(want))
	for _, p := range pos {
		dst := make([]float32, d)
		k.Encode(dst, int(p))
		want := verify.AbsoluteEncoding(s, int(p))
		ck.check(fmt.Sprintf("Encode pos=%d", p), dst, want, bound(want))
	}
}
