package kernelfuzz

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/posenc/posenc/verify"
)

// job is one deterministic kernel call: run builds fresh inputs from a
// fixed seed, calls the kernel and returns its output, so concurrent runs
// never share a buffer.
type job struct {
	name string
	run  func() []float32
}

// suite is the jobs of one generated package.
type suite struct {
	name string
	reg  registry
	jobs []job
}

// suites returns jobs for every package FuzzRoPE, FuzzBias, FuzzAbsolute,
// FuzzRPEFull and FuzzXL cover: rope positions inside the table and on the
// exact path (negative, ≥ MaxPosition, 2^31−1; one-token calls through its
// row cache), bias calls with small and
// large qOffset, absolute adds inside and outside the sinusoidal table,
// rpe_full Scores and Output with keys clipped on both sides and with
// qOffset 2^31−1 (the calls of different lengths share the scratch pool),
// xl Scores and Relative. Building them calls no kernel, so the lazy tables
// stay unbuilt.
func suites() []suite {
	var out []suite
	for i, p := range ropePkgs {
		pos := []int32{0, 7, int32(p.maxPosition) - 1, int32(p.maxPosition) + 3, -5, 1<<20 + 1, math.MaxInt32}
		const qh, kh = 3, 2
		in := func(heads int, salt uint64) []float32 {
			return randomValues(rand.New(rand.NewPCG(uint64(i), salt)), len(pos)*heads*p.headDim)
		}
		out = append(out, suite{p.name, p.reg, []job{
			{"Apply", func() []float32 { x := in(qh, 1); p.apply(x, pos, qh); return x }},
			{"Inverse", func() []float32 { x := in(qh, 2); p.inverse(x, pos, qh); return x }},
			{"ApplyQK", func() []float32 {
				q, k := in(qh, 3), in(kh, 4)
				p.applyQK(q, k, pos, qh, kh)
				return append(q, k...)
			}},
			{"Apply table only", func() []float32 { x := in(1, 5)[:3*p.headDim]; p.apply(x, pos[:3], 1); return x }},
			// One token per call, three calls per position (the layers of a decode
			// step): the exact path's row cache fills and is reused, and the first
			// two positions share a cache slot, so concurrent calls evict each other.
			{"ApplyQK decode", func() []float32 {
				var out []float32
				for j, p0 := range []int32{int32(p.maxPosition) + 3, int32(p.maxPosition) + 7, -5, 1<<20 + 1, int32(p.maxPosition) + 3} {
					for l := range 3 {
						q, k := in(qh, uint64(10+6*j+2*l))[:qh*p.headDim], in(kh, uint64(11+6*j+2*l))[:kh*p.headDim]
						p.applyQK(q, k, []int32{p0}, qh, kh)
						out = append(append(out, q...), k...)
					}
				}
				return out
			}},
		}})
	}
	for i, p := range biasPkgs {
		var table []float32
		if p.buckets > 0 {
			table = uniform(rand.New(rand.NewPCG(uint64(i), 9)), p.heads*p.buckets, 4)
		}
		scores := func(lq, lk int, salt uint64) []float32 {
			return uniform(rand.New(rand.NewPCG(uint64(i), salt)), p.heads*lq*lk, 4)
		}
		var jobs []job
		for _, qo := range []int{0, 1 << 20} {
			jobs = append(jobs,
				job{"Bias", func() []float32 { d := make([]float32, p.heads*3*17); p.bias(d, table, 3, 17, qo); return d }},
				job{"AddBias", func() []float32 { s := scores(3, 17, 1); p.add(s, table, 3, 17, qo); return s }},
				job{"Softmax", func() []float32 { s := scores(3, 17, 2); p.softmax(s, table, 3, 17, qo, 0.125); return s }},
			)
		}
		out = append(out, suite{p.name, p.reg, jobs})
	}
	for i, p := range absPkgs {
		pos := []int32{0, 3, int32(p.maxLen) - 1, 1}
		if !p.learned {
			pos = append(pos, int32(p.maxLen), -9, math.MaxInt32)
		}
		jobs := []job{{"Add", func() []float32 {
			var table []float32
			if p.learned {
				table = learnedTable()
			}
			x := randomValues(rand.New(rand.NewPCG(uint64(i), 1)), len(pos)*p.dModel)
			p.add(x, table, pos)
			return x
		}}}
		if p.encode != nil {
			jobs = append(jobs, job{"Encode", func() []float32 { d := make([]float32, p.dModel); p.encode(d, -77); return d }})
		}
		out = append(out, suite{p.name, p.reg, jobs})
	}
	for i, p := range rpeFullPkgs {
		d := p.headDim
		in := func(n int, salt uint64) []float32 {
			return randomValues(rand.New(rand.NewPCG(uint64(i), salt)), n)
		}
		aK, aV := in(p.buckets*d, 1), in(p.buckets*d, 2)
		var jobs []job
		for _, sh := range [][3]int{{3, 40, 18}, {5, 9, 0}, {2, 70, math.MaxInt32}} {
			lq, lk, qo := sh[0], sh[1], sh[2]
			jobs = append(jobs,
				job{"Scores", func() []float32 {
					dst := make([]float32, lq*lk)
					p.scores(dst, in(lq*d, 3), in(lk*d, 4), aK, lq, lk, qo)
					return dst
				}},
				job{"Output", func() []float32 {
					dst := make([]float32, lq*d)
					p.output(dst, in(lq*lk, 5), in(lk*d, 6), aV, lq, lk, qo)
					return dst
				}},
			)
		}
		out = append(out, suite{p.name, p.reg, jobs})
	}
	for i, p := range xlPkgs {
		d := p.headDim
		in := func(n int, salt uint64) []float32 {
			return randomValues(rand.New(rand.NewPCG(uint64(i), salt)), n)
		}
		var jobs []job
		for _, sh := range [][2]int{{3, 17}, {9, 5}} {
			lq, lk := sh[0], sh[1]
			jobs = append(jobs, job{"Scores", func() []float32 {
				dst := make([]float32, lq*lk)
				p.scores(dst, in(lq*d, 1), in(lk*d, 2), in(p.relRows(lq, lk)*d, 3), in(d, 4), in(d, 5), lq, lk, 7)
				return dst
			}})
		}
		jobs = append(jobs, job{"Relative", func() []float32 { d := make([]float32, 300*p.headDim); p.relative(d, 300); return d }})
		out = append(out, suite{p.name, p.reg, jobs})
	}
	// The attention forms share a scratch pool between calls of different
	// shapes (a decode step, a prefill, far positions): 8 at once must give
	// the single-threaded bits.
	for i, p := range attnPkgs {
		qh := max(p.qHeads, 4)
		in := func(n int, salt uint64) []float32 { return randomValues(rand.New(rand.NewPCG(uint64(100+i), salt)), n) }
		call := func(lq, lk, kvh int, q0 int32, causal bool) func() []float32 {
			return func() []float32 {
				qpos, kpos := make([]int32, lq), make([]int32, lk)
				for j := range kpos {
					kpos[j] = int32(j)
				}
				for x := range qpos {
					qpos[x] = q0 + int32(x)
				}
				var table []float32
				switch {
				case p.table:
					table = in(p.tableLen, 7)
				case p.xl: // u, v and a row of rel for each of 50 distances
					table = in((2*qh+50*kvh)*p.headDim, 7)
				}
				out := make([]float32, lq*qh*p.headDim)
				o := verify.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.1, Causal: causal}
				q, k, v := in(lq*qh*p.headDim, 1), in(lk*kvh*p.headDim, 2), in(lk*kvh*p.headDim, 3)
				if p.mrope != nil {
					// Ids off the positions on the second and third axes (vision patches).
					ids := func(pos []int32) []int32 {
						var out []int32
						for _, x := range pos {
							out = append(out, x, x/3, x%7)
						}
						return out
					}
					p.mrope(out, q, k, v, ids(qpos), ids(kpos), qpos, kpos, o)
					return out
				}
				p.attention(out, q, k, v, table, qpos, kpos, o)
				return out
			}
		}
		out = append(out, suite{p.name + " attention", p.reg, []job{
			{"decode", call(1, 300, qh/2, 299, true)},
			{"prefill", call(40, 40, 1, 0, true)},
			{"far", call(2, 70, qh, math.MaxInt32-1, false)},
		}})
	}
	return out
}

// workers is the number of goroutines that call the kernels at once.
const workers = 8

// runAll runs every job of ss from workers goroutines released together and
// returns each goroutine's outputs, [worker][suite][job].
func runAll(ss []suite) [][][][]float32 {
	res := make([][][][]float32, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res[w] = make([][][]float32, len(ss))
			for si, s := range ss {
				// Rotate the job order so that the goroutines hit different kernels.
				res[w][si] = make([][]float32, len(s.jobs))
				for k := range s.jobs {
					j := (k + w) % len(s.jobs)
					res[w][si][j] = s.jobs[j].run()
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	return res
}

// compareAll fails t for every concurrent output that differs, in any bit,
// from the single-threaded one.
func compareAll(t *testing.T, ss []suite, got [][][][]float32, variant func(suite) string) {
	t.Helper()
	for si, s := range ss {
		for j, jb := range s.jobs {
			want := jb.run()
			for w := range workers {
				if !sameBits(got[w][si][j], want) {
					t.Errorf("%s %s %s: goroutine %d's output differs from the single-threaded one", s.name, variant(s), jb.name, w)
				}
			}
		}
	}
}

// TestConcurrentKernels calls the kernels of every package from 8
// goroutines at once, each on its own buffers, for every runnable variant,
// and requires the bits of the single-threaded results. Under -race it also
// checks that the shared state (tables, scratch pools) is synchronized.
func TestConcurrentKernels(t *testing.T) {
	for _, s := range suites() {
		s.reg.each(t, func(v string) {
			got := runAll([]suite{s})
			compareAll(t, []suite{s}, got, func(suite) string { return v })
		})
	}
}

// firstUseEnv marks the child process of TestConcurrentFirstUse.
const firstUseEnv = "KERNELFUZZ_FIRST_USE_CHILD"

// TestConcurrentFirstUse runs the test binary again (a fresh process, where
// no lazy table has been built) with firstUseEnv set; there the first calls
// of every package's kernels come from 8 goroutines at once, racing to build
// the sync.Once tables, and their results must equal the single-threaded
// ones computed afterwards. Run under -race the child is race-instrumented
// too (same binary) and a data race fails it.
func TestConcurrentFirstUse(t *testing.T) {
	if os.Getenv(firstUseEnv) == "1" {
		ss := suites()
		got := runAll(ss) // the very first kernel calls of this process
		compareAll(t, ss, got, func(s suite) string { return s.reg.active() })
		if !t.Failed() {
			t.Log("first-use child: ok")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentFirstUse$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), firstUseEnv+"=1")
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.ENOEXEC) {
		// Under go test -exec qemu-aarch64-static the test binary is not
		// directly executable on the host.
		t.Skipf("cannot re-execute the test binary: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "first-use child: ok") {
		t.Fatalf("child process: %v\n%s", err, out)
	}
}
