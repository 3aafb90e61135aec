package kernelfuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// biasCells caps lq·lk of one call (scores are Heads·lq·lk).
const biasCells = 1024

// biasShape maps fuzzed inputs to lq, lk (0…4097, mostly small, lq·lk ≤
// biasCells) and qOffset. One negative qOffset in 16 stays negative (the
// call must panic); the others become |qOffset| reduced to a small offset
// (half of them: causal masks and the unshifted bias rows), an offset below
// 2^21, or a huge one up to 2^61.
func biasShape(ulq, ulk uint16, qOffset int64) (lq, lk, qo int) {
	lq, lk = counts(ulq, ulk, biasCells)
	if keepNegative(qOffset) {
		return lq, lk, int(qOffset)
	}
	u := uint64(qOffset) &^ (1 << 63)
	switch u & 3 {
	case 0, 1:
		qo = int(u >> 2 % 64)
	case 2:
		qo = int(u >> 2 % (1 << 21))
	default:
		qo = int(u >> 2)
	}
	return lq, lk, qo
}

// softmaxScales replace a fuzzed scale that is not finite or above 8 in
// magnitude.
var softmaxScales = []float32{1, 0.125, float32(1 / math.Sqrt(128)), 0}

// FuzzBias runs Bias, AddBias and Softmax of every runnable variant of
// bloom_176b (causal ALiBi, 112 heads) and t5_base (T5 buckets) on fuzzed
// lq, lk (0…4097) and qOffset (0…2^61) with scores holding ±0, subnormals,
// ±Inf and NaN, against verify.ALiBiBias / RPEBias / AddBias / Softmax:
//   - Bias: ≤ 1e-6 of the call's largest |bias| (t5: the exact table value),
//     whatever dst held before;
//   - AddBias: ≤ 1e-6·max(largest |bias|, |score|), exactly −Inf where
//     masked, NaN and ±Inf scores give exactly what float arithmetic gives
//     (NaN, the same infinity);
//   - Softmax: exactly 0 where masked; a row whose unmasked scores are finite
//     with |scale·score| ≤ 8 is within 1e-6 absolute of the reference; a
//     finite row with larger logits (where float32 rounding of scale·score
//     alone exceeds that bound), or with a qOffset beyond 2^31 (where the
//     float64 reference itself is not that precise), holds probabilities in
//     [0, 1] summing to 1;
//     a row with a non-finite score is unchecked, but every other row is, so a
//     NaN leaking across rows fails;
//   - the table (t5) is never written.
//
// A negative qOffset must panic with a message naming qOffset before
// anything is written. When the positions fit in int32, the position forms
// run too (fuzzPos).
func FuzzBias(f *testing.F) {
	f.Add(uint8(0), uint16(4), uint16(4), int64(0), float32(1), uint64(1), []byte{})
	f.Add(uint8(1), uint16(7), uint16(11), int64(4), float32(0.125), uint64(2), []byte{0, 3, 12})
	f.Add(uint8(0), uint16(1), uint16(1), int64(-1), float32(1), uint64(3), []byte{})
	s := make([]*spec.Spec, len(biasPkgs))
	for i, p := range biasPkgs {
		s[i] = zooSpec(f, p.name)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, ulq, ulk uint16, qOffset int64, scale float32, seed uint64, recipe []byte) {
		p, sp := biasPkgs[int(pkg)%len(biasPkgs)], s[int(pkg)%len(biasPkgs)]
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		lq, lk, qo := biasShape(ulq, ulk, qOffset)
		if !(math.Abs(float64(scale)) <= 8) {
			scale = softmaxScales[math.Float32bits(scale)%uint32(len(softmaxScales))]
		}
		n := p.heads * lq * lk
		var table []float32
		if p.buckets > 0 {
			table = uniform(r, p.heads*p.buckets, 4)
		}
		scores := uniform(r, n, 4)
		plant(scores, recipe)
		tableCopy := append([]float32(nil), table...)

		if qo < 0 {
			p.reg.each(t, func(v string) { checkNegativeQOffset(t, p, v, scores, table, lq, lk, qo) })
			return
		}

		var bias []float64
		if p.buckets > 0 {
			bias = verify.RPEBias(sp, table, lq, lk, qo)
		} else {
			bias = verify.ALiBiBias(sp, lq, lk, qo)
		}
		mb := 0.0
		for _, b := range bias {
			mb = math.Max(mb, math.Abs(b))
		}
		mask := verify.BiasMask(sp, qo)
		wantAdd := verify.AddBias(scores, bias, mask, p.heads, lq, lk)
		// verify.Softmax adds the bias to scale·score in float64: beyond
		// distances of about 2^31 its rounding (|bias|·2^−53) alone nears the
		// 1e-6 bound, and beyond 2^53 ALiBiBias cannot tell neighbouring keys
		// apart; such calls get the invariant checks only.
		refExact := qo+lq+lk <= 1<<31
		wantSoftmax := verify.Softmax(scores, bias, mask, p.heads, lq, lk, float64(scale))
		where := func(v, op string, k int) string {
			h, i, j := k/(lq*lk), k/lk%lq, k%lk
			return fmt.Sprintf("%s %s %s lq=%d lk=%d qOffset=%d: element %d (head %d, query %d, key %d)",
				p.name, v, op, lq, lk, qo, k, h, i, j)
		}

		p.reg.each(t, func(v string) {
			dst := make([]float32, n)
			for i := range dst {
				dst[i] = float32(math.NaN())
			}
			p.bias(dst, table, lq, lk, qo)
			for k, w := range bias {
				exact := p.buckets > 0 && dst[k] != float32(w)
				if exact || !(math.Abs(float64(dst[k])-w) <= 1e-6*mb+1e-30) {
					t.Fatalf("%s: got %g, want %g", where(v, "Bias", k), dst[k], w)
				}
			}

			y := append([]float32(nil), scores...)
			p.add(y, table, lq, lk, qo)
			for k, w := range wantAdd {
				g := float64(y[k])
				ok := false
				switch {
				case math.IsNaN(w):
					ok = math.IsNaN(g)
				case math.IsInf(w, 0):
					ok = g == w
				default:
					ok = math.Abs(g-w) <= 1e-6*math.Max(mb, math.Abs(float64(scores[k])))+1e-30
				}
				if !ok {
					t.Fatalf("%s: score %g, got %g, want %g", where(v, "AddBias", k), scores[k], g, w)
				}
			}

			y = append([]float32(nil), scores...)
			p.softmax(y, table, lq, lk, qo, scale)
			for row := 0; row < p.heads*lq; row++ {
				if msg := checkSoftmaxRow(y, scores, wantSoftmax, mask, row, lq, lk, scale, refExact, v); msg != "" {
					t.Fatalf("%s: %s", where(v, fmt.Sprintf("Softmax scale=%g", scale), row*lk), msg)
				}
			}
			if !sameBits(table, tableCopy) {
				t.Fatalf("%s %s: the table was written", p.name, v)
			}
		})
		if qo <= math.MaxInt32-lq-lk {
			fuzzPos(t, p, sp, seed, lq, lk, qo, scale, scores, table)
		}
	})
}

// fuzzPos runs the position forms (BiasPos, AddBiasPos, SoftmaxPos) of
// every variant on the fuzzed shape with positions derived from seed: the
// queries at qOffset+i, the keys one run ending at the last query (the
// implicit form's layout shifted), a run with a padded tail, 16-key pages in
// shuffled order, or random positions with padding; heads [h0, h0+nh) a
// fuzzed subset. Checked as FuzzBias checks the implicit forms, against
// verify.PosBias and PosMask.
func fuzzPos(t *testing.T, p biasPkg, sp *spec.Spec, seed uint64, lq, lk, qo int, scale float32, scores, table []float32) {
	r := rand.New(rand.NewPCG(seed, 17))
	h0 := int(seed>>8) % p.heads
	nh := 1 + int(seed>>20)%(p.heads-h0)
	qpos := make([]int32, lq)
	for i := range qpos {
		qpos[i] = int32(qo + i)
	}
	kpos := make([]int32, lk)
	base := max(qo+lq-lk, 0)
	kind := seed % 4
	pages := r.Perm((lk + 15) / 16)
	for j := range kpos {
		switch kind {
		case 0:
			kpos[j] = int32(base + j)
		case 1:
			kpos[j] = int32(base + j)
			if j >= lk-lk/3 {
				kpos[j] = -1
			}
		case 2:
			kpos[j] = int32(base + 16*pages[j/16] + j%16)
		default:
			kpos[j] = int32(base + r.IntN(2*lk+1))
			if r.IntN(4) == 0 {
				kpos[j] = -1
			}
		}
	}
	n := nh * lq * lk
	sc := scores[:n]
	bias := verify.PosBias(sp, table, qpos, kpos, h0, nh)
	mb := 0.0
	for _, b := range bias {
		mb = math.Max(mb, math.Abs(b))
	}
	mask := verify.PosMask(sp, qpos, kpos)
	wantAdd := verify.AddBias(sc, bias, mask, nh, lq, lk)
	wantSoftmax := verify.Softmax(sc, bias, mask, nh, lq, lk, float64(scale))
	where := func(v, op string, k int) string {
		return fmt.Sprintf("%s %s %s lq=%d lk=%d qOffset=%d kind %d heads [%d,+%d): element %d", p.name, v, op, lq, lk, qo, kind, h0, nh, k)
	}
	p.reg.each(t, func(v string) {
		dst := make([]float32, n)
		for i := range dst {
			dst[i] = float32(math.NaN())
		}
		p.biasPos(dst, table, qpos, kpos, h0, nh)
		for k, w := range bias {
			exact := p.buckets > 0 && dst[k] != float32(w)
			if exact || !(math.Abs(float64(dst[k])-w) <= 1e-6*mb+1e-30) {
				t.Fatalf("%s: got %g, want %g", where(v, "BiasPos", k), dst[k], w)
			}
		}
		y := append([]float32(nil), sc...)
		p.addPos(y, table, qpos, kpos, h0, nh)
		for k, w := range wantAdd {
			g := float64(y[k])
			ok := false
			switch {
			case math.IsNaN(w):
				ok = math.IsNaN(g)
			case math.IsInf(w, 0):
				ok = g == w
			default:
				ok = math.Abs(g-w) <= 1e-6*math.Max(mb, math.Abs(float64(sc[k])))+1e-30
			}
			if !ok {
				t.Fatalf("%s: score %g, got %g, want %g", where(v, "AddBiasPos", k), sc[k], g, w)
			}
		}
		y = append([]float32(nil), sc...)
		p.softmaxPos(y, table, qpos, kpos, h0, nh, scale)
		for row := 0; row < nh*lq; row++ {
			if msg := checkSoftmaxRow(y, sc, wantSoftmax, mask, row, lq, lk, scale, true, v); msg != "" {
				t.Fatalf("%s: %s", where(v, fmt.Sprintf("SoftmaxPos scale=%g", scale), row*lk), msg)
			}
		}
	})
}

// checkSoftmaxRow checks row row ([lk] at row·lk) of a Softmax output as
// FuzzBias describes and returns what is wrong ("" when nothing).
func checkSoftmaxRow(got, scores []float32, want []float64, mask verify.Mask, row, lq, lk int, scale float32, refExact bool, variant string) string {
	h, i := row/lq, row%lq
	off := row * lk
	if lk == 0 {
		return ""
	}
	logit := 0.0
	for j := range lk {
		if mask != nil && mask(h, i, j) {
			if got[off+j] != 0 {
				return fmt.Sprintf("key %d is masked: got %g, want 0", j, got[off+j])
			}
			continue
		}
		l := float64(scale) * float64(scores[off+j])
		if !finite(l) || math.Abs(l) > math.MaxFloat32 {
			return "" // non-finite input or logit: this row may hold anything
		}
		logit = math.Max(logit, math.Abs(l))
	}
	precise := refExact && logit <= 8
	sum := 0.0
	for j := range lk {
		g := float64(got[off+j])
		if precise {
			if !(math.Abs(g-want[off+j]) <= 1e-6) {
				return fmt.Sprintf("key %d: got %g, want %g (error %.3g > 1e-6)", j, g, want[off+j], math.Abs(g-want[off+j]))
			}
		} else if !(g >= 0 && g <= 1) {
			return fmt.Sprintf("key %d: got %g, not a probability (logits up to %g)", j, g, logit)
		}
		sum += g
	}
	if tol := float64(lk)*2.5e-7 + 1e-6; !precise && !(math.Abs(sum-1) <= tol) {
		return fmt.Sprintf("the row sums to %g (logits up to %g)", sum, logit)
	}
	return ""
}

// TestSoftmaxLargeLogits is the reproducer of a bug FuzzBias found: the
// AVX2 and AVX-512 softmaxRow kernels took the row maximum m over
// fma(scale, x, bias) but exponentiated fma(scale, x, bias − m), so for
// |m| ≥ 2^24 the exponent of the maximum itself could be far from 0 (up to
// half an ulp of m) and a single-key row (softmax 1) came out NaN. Every
// backend now switches to fl(scale·x + bias) − m beyond 2^24.
func TestSoftmaxLargeLogits(t *testing.T) {
	for _, p := range biasPkgs {
		var table []float32
		if p.buckets > 0 {
			table = make([]float32, p.heads*p.buckets)
		}
		p.reg.each(t, func(v string) {
			scores := make([]float32, p.heads) // lq = lk = 1
			for i := range scores {
				scores[i] = 1e10
			}
			p.softmax(scores, table, 1, 1, 0, 0.7)
			for h, g := range scores {
				if g != 1 {
					t.Errorf("%s %s: Softmax of one key with scale·score = 7e9, head %d: got %g, want 1", p.name, v, h, g)
					break
				}
			}
		})
	}
}

// checkNegativeQOffset requires each of Bias, AddBias and Softmax to panic
// on the negative qOffset qo with a message naming qOffset, leaving every
// buffer as it was.
func checkNegativeQOffset(t *testing.T, p biasPkg, v string, scores, table []float32, lq, lk, qo int) {
	t.Helper()
	tableCopy := append([]float32(nil), table...)
	ops := map[string]func(buf []float32){
		"Bias":    func(buf []float32) { p.bias(buf, table, lq, lk, qo) },
		"AddBias": func(buf []float32) { p.add(buf, table, lq, lk, qo) },
		"Softmax": func(buf []float32) { p.softmax(buf, table, lq, lk, qo, 1) },
	}
	for name, op := range ops {
		buf := append([]float32(nil), scores...)
		e := catch(func() { op(buf) })
		if e == nil {
			t.Fatalf("%s %s %s(lq=%d, lk=%d, qOffset=%d) did not panic", p.name, v, name, lq, lk, qo)
		}
		if msg := fmt.Sprint(e); !strings.Contains(msg, "qOffset") {
			t.Fatalf("%s %s %s: panic %q does not name qOffset", p.name, v, name, msg)
		}
		if !sameBits(buf, scores) || !sameBits(table, tableCopy) {
			t.Fatalf("%s %s %s: a buffer changed before the panic", p.name, v, name)
		}
	}
}
