package verify

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// failFast is set by POSENC_FAILFAST=1 in the environment (tools/mutate
// sets it for its checks): a Report that has a failure panics, naming it,
// when its next case begins, so a caught mutation ends its test binary
// early instead of running every remaining case and variant. Only a run
// that has already failed stops; a passing run is unchanged.
var failFast = os.Getenv("POSENC_FAILFAST") == "1"

// Report is the outcome of running one kernel variant through the harness.
type Report struct {
	// Spec is the spec's name; Target the variant's name ("go", "avx2", …).
	// Run* leave Target empty: the caller (the generated test) sets it.
	Spec, Target string
	// Cases counts the kernel calls checked (golden ones included).
	Cases int
	// MaxRatio is the largest |error| / bound over all checked elements; a
	// pass has MaxRatio ≤ 1. Exact checks (untouched dims, −Inf masks,
	// buckets, memory outside the slices) count 0 when they hold and +Inf
	// when they do not; a NaN output counts +Inf.
	MaxRatio float64
	// Worst names the case that gave MaxRatio.
	Worst string
	// Failures holds one human-readable line per failed check (a few per
	// case at most; the list is capped, its last line then says how many
	// more there were).
	Failures []string

	omitted int // failures beyond maxFailures
}

// OK reports whether the variant passed every check.
func (r *Report) OK() bool { return len(r.Failures) == 0 }

const (
	maxFailures        = 200 // kept in Report.Failures
	maxFailuresPerCase = 3   // element failures listed per case
	emitFailures       = 20  // t.Errorf calls made by Emit
)

// RowPrefix starts the line Emit prints; posenc verify collects these lines
// from go test output.
const RowPrefix = "POSENC-ROW "

// Row is the JSON form of a Report printed by Emit: one verified variant.
type Row struct {
	Spec     string  `json:"spec"`
	Target   string  `json:"target"`
	Cases    int     `json:"cases"`
	MaxRatio float64 `json:"max_ratio"`
	Worst    string  `json:"worst"`
	Failures int     `json:"failures"`
}

// Emit prints the report as one line "POSENC-ROW {json}" on standard output
// (fields spec, target, cases, max_ratio, worst, failures — the number of
// failed checks; a non-finite max_ratio is written as 1e300) and reports
// each failure, up to 20 of them, with t.Errorf.
func Emit(t testing.TB, r *Report) {
	t.Helper()
	b, err := json.Marshal(r.Row())
	if err != nil {
		t.Fatalf("verify: encoding report: %v", err)
	}
	fmt.Println(RowPrefix + string(b))
	for i, f := range r.Failures {
		if i == emitFailures {
			t.Errorf("%s/%s: … %d more failures", r.Spec, r.Target, r.failureCount()-emitFailures)
			break
		}
		t.Errorf("%s/%s: %s", r.Spec, r.Target, f)
	}
}

// Row summarizes the report: Failures counts every failed check (listed or
// not) and a non-finite MaxRatio becomes 1e300, so the row encodes as JSON.
func (r *Report) Row() Row {
	ratio := r.MaxRatio
	if math.IsInf(ratio, 0) || math.IsNaN(ratio) {
		ratio = 1e300
	}
	return Row{r.Spec, r.Target, r.Cases, ratio, r.Worst, r.failureCount()}
}

// failureCount is the number of failed checks, listed or not.
func (r *Report) failureCount() int { return len(r.Failures) + r.omitted }

// addFailure records one failure line, respecting the cap.
func (r *Report) addFailure(msg string) {
	if len(r.Failures) >= maxFailures {
		r.omitted++
		return
	}
	r.Failures = append(r.Failures, msg)
}

// ratio records |error|/bound for the current case.
func (r *Report) ratio(v float64, name string) {
	if math.IsNaN(v) {
		v = math.Inf(1)
	}
	if v > r.MaxRatio || r.Worst == "" {
		r.MaxRatio, r.Worst = math.Max(v, r.MaxRatio), name
	}
}

// check is one case (one kernel call) under way.
type check struct {
	r     *Report
	name  string
	fails int
}

// begin starts a new case named name and counts it (with POSENC_FAILFAST=1,
// it panics instead when the report already has a failure).
func (r *Report) begin(name string) *check {
	if failFast && len(r.Failures) > 0 {
		panic(fmt.Sprintf("verify: POSENC_FAILFAST=1: %s: stopped at the first failure: %s", r.Spec, r.Failures[0]))
	}
	r.Cases++
	return &check{r: r, name: name}
}

// fail records a failure of the case.
func (c *check) fail(format string, args ...any) {
	c.fails++
	c.r.ratio(math.Inf(1), c.name)
	if c.fails <= maxFailuresPerCase {
		c.r.addFailure(c.name + ": " + fmt.Sprintf(format, args...))
	} else {
		c.r.omitted++
	}
}

// near checks |got − want| ≤ bound for the element named by what and idx.
func (c *check) near(what string, idx int, got, want, bound float64) {
	v := math.Abs(got-want) / bound
	if math.IsNaN(v) && got == want { // matching infinities
		v = 0
	}
	c.r.ratio(v, c.name)
	if !(v <= 1) {
		c.fails++
		if c.fails <= maxFailuresPerCase {
			c.r.addFailure(fmt.Sprintf("%s: %s[%d] = %v, want %v (|err| %.3g > bound %.3g)",
				c.name, what, idx, got, want, math.Abs(got-want), bound))
		} else {
			c.r.omitted++
		}
	}
}

// same checks that got has exactly the bits of want (untouched values).
func (c *check) same(what string, idx int, got, want float32) {
	if math.Float32bits(got) != math.Float32bits(want) {
		c.fail("%s[%d] = %v, want it untouched (%v)", what, idx, got, want)
		return
	}
	c.r.ratio(0, c.name)
}

// call runs f, turning a panic into a failure of the case; it reports
// whether f returned normally.
func (c *check) call(f func()) (ok bool) {
	defer func() {
		if e := recover(); e != nil {
			c.fail("kernel panicked: %v", e)
			ok = false
		}
	}()
	f()
	return true
}

// sentinel is the bit pattern around (and, for outputs, inside) the slices
// given to kernels: a quiet NaN with a payload no kernel produces.
const (
	sentinelBits = 0x7fc5a5a5
	unsetBits    = 0x7fc0beef
	guardPad     = 67 // floats of sentinel each side of a slice
)

// guarded is a float32 slice placed inside a larger buffer whose
// surroundings hold the sentinel pattern.
type guarded struct {
	buf []float32
	s   []float32 // buf[guardPad : guardPad+n : guardPad+n]
	// shared marks a large input guarded once and passed to many calls;
	// its owner checks it unchanged once after them (relCall does not
	// fingerprint it per call: hashing 256 MiB twice per call dominated
	// the rpe_full harness under qemu).
	shared bool
}

// guard copies src into a fresh guarded slice.
func guard(src []float32) *guarded {
	n := len(src)
	g := &guarded{buf: make([]float32, n+2*guardPad)}
	for i := range g.buf {
		g.buf[i] = math.Float32frombits(sentinelBits)
	}
	g.s = g.buf[guardPad : guardPad+n : guardPad+n]
	copy(g.s, src)
	return g
}

// guardUnset returns a guarded slice of n floats prefilled with a NaN
// pattern, for outputs every element of which the kernel must write.
func guardUnset(n int) *guarded {
	g := guard(make([]float32, n))
	for i := range g.s {
		g.s[i] = math.Float32frombits(unsetBits)
	}
	return g
}

// intact checks the sentinels around the slice.
func (g *guarded) intact(c *check, what string) {
	n := len(g.s)
	for i := range guardPad {
		if math.Float32bits(g.buf[i]) != sentinelBits {
			c.fail("wrote %s out of bounds: %d elements before its start", what, guardPad-i)
			return
		}
		if math.Float32bits(g.buf[guardPad+n+i]) != sentinelBits {
			c.fail("wrote %s out of bounds: %d elements after its end", what, i+1)
			return
		}
	}
}

// intsUnchanged checks an int32 input was not modified.
func intsUnchanged(c *check, what string, got, want []int32) {
	for i := range want {
		if got[i] != want[i] {
			c.fail("modified its input %s[%d]", what, i)
			return
		}
	}
}

// expectPanic runs f, which calls a kernel with a slice one element too
// short, and checks it panics and writes nothing to any of the buffers.
func (r *Report) expectPanic(name string, f func(), bufs ...*guarded) {
	c := r.begin(name)
	prints := make([]fingerprint, len(bufs))
	for i, g := range bufs {
		prints[i] = g.fingerprint()
	}
	panicked := func() (p bool) {
		defer func() { p = recover() != nil }()
		f()
		return false
	}()
	if !panicked {
		c.fail("no panic on a length mismatch")
	}
	for i, g := range bufs {
		g.unchanged(c, fmt.Sprintf("argument %d", i+1), prints[i])
	}
	if c.fails == 0 {
		c.r.ratio(0, c.name)
	}
}

// maxAbs is the largest |v| over vs (0 for none).
func maxAbs(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// Merge returns one report holding the cases and failures of rs, all of
// one spec and variant (a package's encoding and its attention form, say):
// the cases add up, MaxRatio and Worst are the largest, the failures are
// concatenated (within the cap).
func Merge(rs ...*Report) *Report {
	m := &Report{}
	for i, r := range rs {
		if i == 0 {
			m.Spec, m.Target = r.Spec, r.Target
		}
		m.Cases += r.Cases
		if r.Worst != "" {
			m.ratio(r.MaxRatio, r.Worst)
		}
		for _, f := range r.Failures {
			m.addFailure(f)
		}
		m.omitted += r.omitted
	}
	return m
}
