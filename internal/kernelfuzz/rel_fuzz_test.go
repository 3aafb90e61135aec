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

// relCells caps lq·lk of one call: the float64 reference and the
// expectations cost lq·lk·HeadDim each.
const relCells = 2048

// relShape maps fuzzed inputs to lq, lk (0…4097, mostly small, lq·lk ≤
// relCells) and qOffset. One negative qOffset in 16 stays negative (the
// call must panic); for the others the low 3 bits of |qOffset| pick the
// offset from the rest, w = |qOffset| >> 3:
//
//	0, 1: w mod 64, small offsets;
//	2:    w mod (lk + 2·span + 2), which puts queries where the keys clip
//	      on both sides (span is BucketSpan, 0 for xl);
//	3:    w mod 2^21;
//	4:    2^31−1 − 64 + w mod 128, around 2^31−1;
//	5:    w, up to 2^60;
//	6:    MaxInt − w mod 64, where qOffset+i overflows int (the generated
//	      code saturates the positions);
//	7:    0.
func relShape(ulq, ulk uint16, qOffset int64, span int) (lq, lk, qo int) {
	lq, lk = counts(ulq, ulk, relCells)
	if keepNegative(qOffset) {
		return lq, lk, int(qOffset)
	}
	u := uint64(qOffset) &^ (1 << 63)
	w := u >> 3
	switch u & 7 {
	case 0, 1:
		qo = int(w % 64)
	case 2:
		qo = int(w % uint64(lk+2*span+2))
	case 3:
		qo = int(w % (1 << 21))
	case 4:
		qo = math.MaxInt32 - 64 + int(w%128)
	case 5:
		qo = int(w)
	case 6:
		qo = math.MaxInt - int(w%64)
	}
	return lq, lk, qo
}

// countArg returns a fuzzed uint16 that count maps to n (seeds use it),
// the smallest one; it panics when there is none.
func countArg(n int) uint16 {
	if n < 17 {
		return uint16(n)
	}
	for u := 0xFC00; u <= 0xFFFF; u++ {
		if count(uint16(u)) == n {
			return uint16(u)
		}
	}
	panic(fmt.Sprintf("countArg(%d): count reaches no such value", n))
}

// refOffset is the qOffset handed to the float64 reference: qo itself up
// to 2^62, 2^62 beyond. The reference forms qOffset+i−j in int, which
// overflows near MaxInt; from 2^62 on (far more than lk + BucketSpan) every
// key is clipped to the last row, as the saturated positions of the
// generated code give, so the reference values are those of qo.
func refOffset(qo int) int { return min(qo, 1<<62) }

// relScale returns the exponent e of the power of two 2^e that the
// per-query (q) and per-key value (v) inputs are scaled by: exp itself one
// time in 4 (uint8(exp) ≡ 3 mod 4, so e ∈ −125…127: whole arrays of
// subnormals, or of huge values some of which overflow to ±Inf when
// rounded back to float32), 0 otherwise.
func relScale(exp int8) int {
	if uint8(exp)%4 == 3 {
		return int(exp)
	}
	return 0
}

// scaled multiplies x by 2^e in place (rounding to float32) and returns it.
func scaled(x []float32, e int) []float32 {
	if e != 0 {
		for i, v := range x {
			x[i] = float32(math.Ldexp(float64(v), e))
		}
	}
	return x
}

// relWeights returns lq rows of lk attention weights: rows of probabilities
// summing to 1 (every fifth row one-hot, as the harness draws them) when
// probs is set, otherwise signed values of randomValues.
func relWeights(r *rand.Rand, lq, lk int, probs bool) []float32 {
	if !probs {
		return randomValues(r, lq*lk)
	}
	w := make([]float32, lq*lk)
	for i := range lq {
		row := w[i*lk : (i+1)*lk]
		if i%5 == 4 && lk > 0 {
			row[r.IntN(lk)] = 1
			continue
		}
		raw := make([]float64, lk)
		sum := 0.0
		for j := range raw {
			raw[j] = r.ExpFloat64()
			sum += raw[j]
		}
		for j := range row {
			row[j] = float32(raw[j] / sum)
		}
	}
	return w
}

// plantAll plants special values across several arrays: every 4 bytes of
// recipe are an array (1 byte, modulo len(xs)), an index (2 bytes, modulo
// that array's length) and a special (1 byte, modulo len(specials)); at
// most 64 values are planted, none in an empty array.
func plantAll(recipe []byte, xs ...[]float32) {
	for n := 0; n+4 <= len(recipe) && n < 4*64; n += 4 {
		plant(xs[int(recipe[n])%len(xs)], recipe[n+1:n+4])
	}
}

// overflowAt is the magnitude from which float32 intermediates of a
// kernel may overflow: the exact magnitude sum, grown by the rounding of
// the partial sums (a relative γ_n of a few 1e-6), may round to ±Inf.
const overflowAt = math.MaxFloat32 / 1.001

// Input classes, or-ed over the inputs an output element depends on.
const (
	hasNaN = 1 << iota
	hasInf
)

// class returns hasNaN, hasInf or 0 for x.
func class(x float32) int {
	switch {
	case x != x:
		return hasNaN
	case math.IsInf(float64(x), 0):
		return hasInf
	}
	return 0
}

// relExpect is what one output element must satisfy (checkRelElem).
type relExpect struct {
	want     float64 // the float64 reference
	tol      float64 // the harness's bound on |got − want|
	class    int     // hasNaN, hasInf: the classes of the inputs it depends on
	overflow bool    // float32 intermediates may overflow
}

// check returns what is wrong with got ("" when nothing): an element that
// depends on a NaN input must be NaN, one that depends on an infinite input
// (and no NaN) non-finite; with finite inputs, a finite result must be within
// tol of the reference (no float32 operation turns an infinity or a NaN back
// into a finite value, so a finite result had no overflow and the rounding
// bound holds) and a non-finite one is allowed only where float32
// intermediates may overflow.
func (e relExpect) check(got float32) string {
	g := float64(got)
	switch {
	case e.class&hasNaN != 0:
		if !math.IsNaN(g) {
			return fmt.Sprintf("got %g: an input it depends on is NaN, want NaN", g)
		}
	case e.class&hasInf != 0:
		if finite(g) {
			return fmt.Sprintf("got %g: an input it depends on is infinite, want a non-finite result", g)
		}
	case !finite(g):
		if !e.overflow {
			return fmt.Sprintf("got %g from finite inputs, want %g (no float32 intermediate can overflow)", g, e.want)
		}
	case !(math.Abs(g-e.want) <= e.tol):
		return fmt.Sprintf("got %g, want %g (error %.3g > bound %.3g)", g, e.want, math.Abs(g-e.want), e.tol)
	}
	return ""
}

// scoreTol and outputTol are the rounding bounds of verify/harness_rel.go
// (RunRPEFull, RunXL): γ_n-style bounds, with a factor 4 of slack, for
// float32 sums of n products of magnitude sum mag (see there).
func scoreTol(d int, mag float64) float64 { return 4*float64(d+4)*0x1p-24*mag + 1e-30 }
func outputTol(lk int, mag float64) float64 {
	return 4*float64(2*lk+4)*0x1p-24*mag + 1e-30
}

// sentinel fills the guard elements around dst and dst itself before a
// call: a signalling NaN with a payload, which no float32 arithmetic
// produces (arithmetic quiets NaNs), so an element still holding it was not
// written.
var sentinel = math.Float32frombits(0x7f8a5a5a)

// relGuard is the number of sentinel elements on either side of dst.
const relGuard = 16

// guardedDst returns a buffer of n+2·relGuard sentinels and dst, its middle
// n elements (capacity n).
func guardedDst(n int) (buf, dst []float32) {
	buf = make([]float32, n+2*relGuard)
	fillSentinel(buf)
	return buf, buf[relGuard : relGuard+n : relGuard+n]
}

// fillSentinel sets every element of x to sentinel.
func fillSentinel(x []float32) {
	for i := range x {
		x[i] = sentinel
	}
}

// isSentinel reports whether x holds sentinel's bits.
func isSentinel(x float32) bool { return math.Float32bits(x) == math.Float32bits(sentinel) }

// guardsIntact returns what is wrong with the guard elements of buf ("" when
// nothing): each must still hold the sentinel.
func guardsIntact(buf []float32) string {
	for i := range relGuard {
		if !isSentinel(buf[i]) {
			return fmt.Sprintf("guard element %d before dst was written (%g)", relGuard-i, buf[i])
		}
		if x := buf[len(buf)-1-i]; !isSentinel(x) {
			return fmt.Sprintf("guard element %d after dst was written (%g)", i, x)
		}
	}
	return ""
}

// relInput is one read-only input of a call, with a copy to check it
// against after each call.
type relInput struct {
	name string
	x    []float32
	snap []float32
}

// inputs returns relInputs for names[i], xs[i].
func inputs(names []string, xs ...[]float32) []relInput {
	in := make([]relInput, len(xs))
	for i, x := range xs {
		in[i] = relInput{names[i], x, append([]float32(nil), x...)}
	}
	return in
}

// runRel calls f on a guarded dst of len(want) elements and fails t (what
// names the call, where(k) element k) when a guard element or an input
// changed, an element of dst was not written, or an element breaks its
// relExpect.
func runRel(t *testing.T, what string, want []relExpect, in []relInput, where func(k int) string, f func(dst []float32)) {
	t.Helper()
	buf, dst := guardedDst(len(want))
	f(dst)
	if msg := guardsIntact(buf); msg != "" {
		t.Fatalf("%s: %s", what, msg)
	}
	for _, x := range in {
		if !sameBits(x.x, x.snap) {
			t.Fatalf("%s: input %s was modified", what, x.name)
		}
	}
	for k, e := range want {
		if isSentinel(dst[k]) {
			t.Fatalf("%s: %s: not written", what, where(k))
		}
		if msg := e.check(dst[k]); msg != "" {
			t.Fatalf("%s: %s: %s", what, where(k), msg)
		}
	}
}

// checkRelNegative requires call (given a dst of n elements) to panic on
// a negative qOffset with a message naming qOffset, leaving dst, the
// elements around it and the inputs as they were.
func checkRelNegative(t *testing.T, what string, n int, in []relInput, call func(dst []float32)) {
	t.Helper()
	buf, dst := guardedDst(n)
	e := catch(func() { call(dst) })
	if e == nil {
		t.Fatalf("%s did not panic", what)
	}
	if msg := fmt.Sprint(e); !strings.Contains(msg, "qOffset") {
		t.Fatalf("%s: panic %q does not name qOffset", what, msg)
	}
	for i, x := range buf {
		if !isSentinel(x) {
			t.Fatalf("%s: element %d of dst (negative or ≥ %d: a guard) was written before the panic", what, i-relGuard, n)
		}
	}
	for _, x := range in {
		if !sameBits(x.x, x.snap) {
			t.Fatalf("%s: input %s was modified", what, x.name)
		}
	}
}

// FuzzRPEFull runs Scores and Output of every runnable variant of
// shaw2018_base (Shaw et al. 2018, HeadDim 64, r_max 17) on fuzzed lq, lk
// (0…4097, lq·lk ≤ relCells), qOffset (relShape: 0, small, keys clipped on
// both sides, around 2^31−1, up to 2^60 and up to MaxInt, where positions
// saturate) and inputs (randomValues, q and v optionally scaled by 2^−125…
// 2^127, weights either probabilities or signed values) holding ±0,
// subnormals, huge values, ±Inf and NaN, against verify.RPEFullScores and
// RPEFullOutput, element by element (relExpect.check): the bounds of
// verify/harness_rel.go where the inputs an element depends on are finite
// (Scores (i, j): q_i, k_j and aK's row of distance qOffset+i−j; Output
// (i, d): row i of weights and dim d of every v_j and of aV's rows of the
// row's distances), NaN where one of them is NaN, non-finite where one is
// infinite, so a special value leaking to another element fails. Every
// element of dst is written, nothing around it, and no input changes. A
// negative qOffset must panic with a message naming qOffset before anything
// is written.
//
// The zoo has one rpe_full package, so r_max 1 and head dims that are no
// multiple of the vector widths are not reachable here (gen/relative's
// TestRelGeneratedPackages runs the harness on those testdata specs).
func FuzzRPEFull(f *testing.F) {
	// r_max > L: lq, lk ≤ 7 at qOffset 0, every distance within r_max−1 = 16.
	f.Add(uint8(0), countArg(4), countArg(7), int64(0), int8(0), uint64(1), []byte{})
	// One query, one key: a single row of the tables.
	f.Add(uint8(0), countArg(1), countArg(1), int64(0), int8(0), uint64(2), []byte{})
	// lq < lk, qOffset 20: keys 0…4 of query 0 at distance ≥ 16, keys
	// 36…59 at ≤ −16 (clipped on both sides), with NaN, ±Inf and subnormals
	// planted in q, k, aK, weights, v and aV.
	f.Add(uint8(0), countArg(3), countArg(60), int64(20<<3), int8(0), uint64(3),
		[]byte{0, 0, 5, 12, 1, 0, 64, 10, 2, 1, 0, 13, 3, 0, 40, 2, 4, 0, 9, 11, 5, 2, 17, 12})
	// lq > lk, qOffset 100: every key clipped to the last row.
	f.Add(uint8(0), countArg(9), countArg(5), int64(100<<3|3), int8(0), uint64(4), []byte{2, 8, 0, 12})
	// qOffset 2^31−5 (mode 4, w = 60), lq ≠ lk.
	f.Add(uint8(0), countArg(3), countArg(7), int64(60<<3|4), int8(0), uint64(5), []byte{})
	// qOffset MaxInt (mode 6, w = 0): qOffset+i overflows int, positions
	// saturate.
	f.Add(uint8(0), countArg(5), countArg(3), int64(6), int8(0), uint64(6), []byte{})
	// lk = 0 (Output writes zeros) and lq = 0.
	f.Add(uint8(0), countArg(6), countArg(0), int64(3<<3), int8(0), uint64(7), []byte{})
	f.Add(uint8(0), countArg(0), countArg(5), int64(0), int8(0), uint64(8), []byte{})
	// One query over 2048 keys (4097 capped by relCells), qOffset 1000,
	// signed weights (odd seed).
	f.Add(uint8(0), countArg(1), countArg(4097), int64(1000<<3|3), int8(0), uint64(9), []byte{})
	// Subnormal q and v (scaled by 2^−125) with keys clipped on both sides
	// (mode 2), and huge ones (2^127, some ±Inf).
	f.Add(uint8(0), countArg(5), countArg(40), int64(18<<3|2), int8(-125), uint64(10), []byte{})
	f.Add(uint8(0), countArg(4), countArg(9), int64(2<<3), int8(127), uint64(11), []byte{})
	// A negative qOffset panics.
	f.Add(uint8(0), countArg(2), countArg(3), int64(-1), int8(0), uint64(12), []byte{})
	s := make([]*spec.Spec, len(rpeFullPkgs))
	for i, p := range rpeFullPkgs {
		s[i] = zooSpec(f, p.name)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, ulq, ulk uint16, qOffset int64, exp int8, seed uint64, recipe []byte) {
		p, sp := rpeFullPkgs[int(pkg)%len(rpeFullPkgs)], s[int(pkg)%len(rpeFullPkgs)]
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		lq, lk, qo := relShape(ulq, ulk, qOffset, p.span)
		d, e := p.headDim, relScale(exp)
		q := scaled(randomValues(r, lq*d), e)
		k := randomValues(r, lk*d)
		aK := randomValues(r, p.buckets*d)
		w := relWeights(r, lq, lk, seed&1 == 0)
		v := scaled(randomValues(r, lk*d), e)
		aV := randomValues(r, p.buckets*d)
		plantAll(recipe, q, k, aK, w, v, aV)
		inS := inputs([]string{"q", "k", "aK"}, q, k, aK)
		inO := inputs([]string{"weights", "v", "aV"}, w, v, aV)
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)

		if qo < 0 {
			p.reg.each(t, func(vn string) {
				checkRelNegative(t, p.name+" "+vn+" Scores "+shape, lq*lk, inS, func(dst []float32) {
					p.scores(dst, q, k, aK, lq, lk, qo)
				})
				checkRelNegative(t, p.name+" "+vn+" Output "+shape, lq*d, inO, func(dst []float32) {
					p.output(dst, w, v, aV, lq, lk, qo)
				})
			})
			return
		}
		ro := refOffset(qo)
		wantS := rpeFullScoreExpect(sp, q, k, aK, lq, lk, ro)
		wantO := rpeFullOutputExpect(sp, w, v, aV, lq, lk, ro)
		whereS := func(x int) string {
			i, j := x/lk, x%lk
			return fmt.Sprintf("query %d, key %d (row %d of aK)", i, j, verify.RPEFullRow(sp, ro+i-j))
		}
		whereO := func(x int) string { return fmt.Sprintf("query %d, dim %d", x/d, x%d) }
		p.reg.each(t, func(vn string) {
			runRel(t, p.name+" "+vn+" Scores "+shape, wantS, inS, whereS, func(dst []float32) {
				p.scores(dst, q, k, aK, lq, lk, qo)
			})
			runRel(t, p.name+" "+vn+" Output "+shape, wantO, inO, whereO, func(dst []float32) {
				p.output(dst, w, v, aV, lq, lk, qo)
			})
		})
	})
}

// rpeFullScoreExpect returns the relExpect of every element of Scores
// [lq][lk]: verify.RPEFullScores, the harness's score bound over M =
// Σ_d |q_d|·(|k_d| + |a_d|)/√HeadDim, and the classes of q_i, k_j and aK's
// row. Float32 intermediates (q·k, q·a, their sum) are at most √HeadDim·M.
func rpeFullScoreExpect(s *spec.Spec, q, k, aK []float32, lq, lk, qOffset int) []relExpect {
	d := s.HeadDim
	ref := verify.RPEFullScores(s, q, k, aK, lq, lk, qOffset)
	out := make([]relExpect, lq*lk)
	for i := range lq {
		for j := range lk {
			a := aK[verify.RPEFullRow(s, qOffset+i-j)*d:]
			var m float64
			c := 0
			for x := range d {
				qv, kv, av := q[i*d+x], k[j*d+x], a[x]
				m += math.Abs(float64(qv)) * (math.Abs(float64(kv)) + math.Abs(float64(av)))
				c |= class(qv) | class(kv) | class(av)
			}
			out[i*lk+j] = relExpect{ref[i*lk+j], scoreTol(d, m/math.Sqrt(float64(d))), c, m >= overflowAt}
		}
	}
	return out
}

// rpeFullOutputExpect returns the relExpect of every element of Output
// [lq][HeadDim]: verify.RPEFullOutput, the harness's output bound over M =
// Σ_j |α_ij|·(|v_jd| + |a_d|), and the classes of the row's weights and dim
// d of the v_j and aV rows. Float32 intermediates are at most M, and the
// clipped runs' weight sums at most Σ_j |α_ij|.
func rpeFullOutputExpect(s *spec.Spec, w, v, aV []float32, lq, lk, qOffset int) []relExpect {
	d := s.HeadDim
	ref := verify.RPEFullOutput(s, w, v, aV, lq, lk, qOffset)
	out := make([]relExpect, lq*d)
	for i := range lq {
		wi := w[i*lk : (i+1)*lk]
		rows := make([]int, lk)
		var sumW float64
		cw := 0
		for j, x := range wi {
			rows[j] = verify.RPEFullRow(s, qOffset+i-j)
			sumW += math.Abs(float64(x))
			cw |= class(x)
		}
		for x := range d {
			var m float64
			c := cw
			for j, wj := range wi {
				vv, av := v[j*d+x], aV[rows[j]*d+x]
				m += math.Abs(float64(wj)) * (math.Abs(float64(vv)) + math.Abs(float64(av)))
				c |= class(vv) | class(av)
			}
			out[i*d+x] = relExpect{ref[i*d+x], outputTol(lk, m), c, m >= overflowAt || sumW >= overflowAt}
		}
	}
	return out
}

// FuzzXL runs Scores of every runnable variant of transformer_xl_base
// (Dai et al. 2019, HeadDim 64) on fuzzed lq, lk and qOffset (relShape;
// the scores do not depend on qOffset, but a negative one must panic naming
// it before anything is written) and inputs q, k, r, u, v (randomValues, q
// optionally scaled by 2^−125…2^127) holding ±0, subnormals, huge values,
// ±Inf and NaN, against verify.XLScores element by element (relExpect.check):
// the harness's score bound where q_i, u, v, k_j and r's row lq−1−i+j are
// finite, NaN where one of them holds a NaN, non-finite where one holds an
// infinity. Relative(n) for n = count(ulq)+count(ulk) (0…8194 rows) is
// checked against verify.XLRelative within 2e-6·max(1, |ref|). Every
// element of dst is written, nothing around it, and no input changes.
//
// The zoo has one xl package, so head dims 6 and 72 are not reachable here
// (gen/relative's TestRelGeneratedPackages runs the harness on those).
func FuzzXL(f *testing.F) {
	// lq = lk, qOffset 0.
	f.Add(uint8(0), countArg(4), countArg(4), int64(0), int8(0), uint64(1), []byte{})
	// lq < lk, lq > lk and lk = 1 with qOffset > 0 (20, 100, 2^31−5),
	// specials planted in q, k, r, u and v.
	f.Add(uint8(0), countArg(3), countArg(60), int64(20<<3), int8(0), uint64(2),
		[]byte{0, 0, 5, 12, 1, 0, 64, 10, 2, 1, 0, 13, 2, 0, 200, 11, 1, 2, 17, 2})
	f.Add(uint8(0), countArg(9), countArg(5), int64(100<<3|3), int8(0), uint64(3), []byte{3, 0, 7, 12})
	f.Add(uint8(0), countArg(7), countArg(1), int64(60<<3|4), int8(0), uint64(4), []byte{4, 0, 63, 10})
	// Empty calls (qOffset 0 and MaxInt); lq = lk = 4097 capped to lq = 0,
	// with a Relative table of 8194 rows.
	f.Add(uint8(0), countArg(0), countArg(5), int64(0), int8(0), uint64(5), []byte{})
	f.Add(uint8(0), countArg(6), countArg(0), int64(6), int8(0), uint64(6), []byte{})
	f.Add(uint8(0), countArg(4097), countArg(4097), int64(0), int8(0), uint64(7), []byte{})
	// Subnormal (2^−125) and huge (2^127) q, 152 keys.
	f.Add(uint8(0), countArg(5), countArg(152), int64(0), int8(-125), uint64(8), []byte{})
	f.Add(uint8(0), countArg(3), countArg(8), int64(0), int8(127), uint64(9), []byte{})
	// A negative qOffset panics.
	f.Add(uint8(0), countArg(2), countArg(3), int64(-1), int8(0), uint64(10), []byte{})
	s := make([]*spec.Spec, len(xlPkgs))
	for i, p := range xlPkgs {
		s[i] = zooSpec(f, p.name)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, ulq, ulk uint16, qOffset int64, exp int8, seed uint64, recipe []byte) {
		p, sp := xlPkgs[int(pkg)%len(xlPkgs)], s[int(pkg)%len(xlPkgs)]
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		lq, lk, qo := relShape(ulq, ulk, qOffset, 0)
		d := p.headDim
		rows := p.relRows(lq, lk)
		wantRows := 0
		if lq > 0 && lk > 0 {
			wantRows = lq + lk - 1
		}
		if rows != wantRows {
			t.Fatalf("%s RelRows(%d, %d) = %d, want %d", p.name, lq, lk, rows, wantRows)
		}
		q := scaled(randomValues(r, lq*d), relScale(exp))
		k := randomValues(r, lk*d)
		rr := randomValues(r, rows*d)
		u, v := randomValues(r, d), randomValues(r, d)
		plantAll(recipe, q, k, rr, u, v)
		in := inputs([]string{"q", "k", "r", "u", "v"}, q, k, rr, u, v)
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)
		if qo < 0 {
			p.reg.each(t, func(vn string) {
				checkRelNegative(t, p.name+" "+vn+" Scores "+shape, lq*lk, in, func(dst []float32) {
					p.scores(dst, q, k, rr, u, v, lq, lk, qo)
				})
			})
			return
		}
		want := xlScoreExpect(sp, q, k, rr, u, v, lq, lk, qo)
		where := func(x int) string {
			i, j := x/lk, x%lk
			return fmt.Sprintf("query %d, key %d (row %d of r)", i, j, lq-1-i+j)
		}
		n := count(ulq) + count(ulk)
		rel := verify.XLRelative(sp, n)
		wantRel := make([]relExpect, len(rel))
		for x, w := range rel {
			wantRel[x] = relExpect{want: w, tol: 2e-6 * math.Max(1, math.Abs(w))}
		}
		whereRel := func(x int) string { return fmt.Sprintf("row %d (distance %d), dim %d", x/d, n-1-x/d, x%d) }
		p.reg.each(t, func(vn string) {
			runRel(t, p.name+" "+vn+" Scores "+shape, want, in, where, func(dst []float32) {
				p.scores(dst, q, k, rr, u, v, lq, lk, qo)
			})
			runRel(t, fmt.Sprintf("%s %s Relative n=%d", p.name, vn, n), wantRel, nil, whereRel, func(dst []float32) {
				p.relative(dst, n)
			})
		})
	})
}

// xlScoreExpect returns the relExpect of every element of Scores [lq][lk]:
// verify.XLScores, the harness's score bound over M = Σ_d (|q_d|+|u_d|)·|k_d|
// + (|q_d|+|v_d|)·|r_d|, and the classes of q_i, u, v, k_j and r's row.
// Float32 intermediates are at most M, and the wrapper's q_i+u and q_i+v at
// most |q_d|+|u_d| and |q_d|+|v_d|.
func xlScoreExpect(s *spec.Spec, q, k, r, u, v []float32, lq, lk, qOffset int) []relExpect {
	d := s.HeadDim
	ref := verify.XLScores(s, q, k, r, u, v, lq, lk, qOffset)
	out := make([]relExpect, lq*lk)
	cuv := 0
	for x := range d {
		cuv |= class(u[x]) | class(v[x])
	}
	for i := range lq {
		qi := q[i*d : (i+1)*d]
		ci, maxQUV := cuv, 0.0
		for x, qv := range qi {
			ci |= class(qv)
			a := math.Abs(float64(qv))
			maxQUV = math.Max(maxQUV, a+math.Max(math.Abs(float64(u[x])), math.Abs(float64(v[x]))))
		}
		for j := range lk {
			row := lq - 1 - i + j
			var m float64
			c := ci
			for x, qv := range qi {
				a := math.Abs(float64(qv))
				kv, rv := k[j*d+x], r[row*d+x]
				m += (a+math.Abs(float64(u[x])))*math.Abs(float64(kv)) + (a+math.Abs(float64(v[x])))*math.Abs(float64(rv))
				c |= class(kv) | class(rv)
			}
			out[i*lk+j] = relExpect{ref[i*lk+j], scoreTol(d, m), c, m >= overflowAt || maxQUV >= overflowAt}
		}
	}
	return out
}
