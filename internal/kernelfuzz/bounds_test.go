package kernelfuzz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// shortCase is one call with one argument a single element too short.
type shortCase struct {
	call string // the call, for messages
	want string // the panic message must contain it: the argument's name
	run  func()
	// views are the float32 slices the call receives (the short one
	// included); pos is its position slice, if any.
	views [][]float32
	pos   []int32
}

// shortCases returns, for every kernel of every package, the calls with one
// slice argument one element short: x, q, k, pos (rope); scores, dst, table
// (bias); x, pos, table, Encode's dst (absolute); dst, q, k, aK, weights, v,
// aV (rpe_full Scores and Output, with keys clipped on both sides); dst, q,
// k, r, u, v (xl Scores) and Relative's dst.
func shortCases() map[string][]shortCase {
	r := rand.New(rand.NewPCG(5, 5))
	out := map[string][]shortCase{}
	mk := func(call, want string, pos []int32, run func(), views ...[]float32) shortCase {
		return shortCase{call: call, want: want, run: run, views: views, pos: pos}
	}
	for _, p := range ropePkgs {
		const tok, qh, kh = 3, 2, 1
		pos := []int32{1, int32(p.maxPosition) + 2, -4}
		x := randomValues(r, tok*qh*p.headDim)
		k := randomValues(r, tok*kh*p.headDim)
		xs, ks, ps := x[:len(x)-1], k[:len(k)-1], pos[:len(pos)-1]
		out[p.name] = []shortCase{
			mk("Apply(x short)", "len(x)", pos, func() { p.apply(xs, pos, qh) }, xs),
			mk("Apply(pos short)", "len(pos)", ps, func() { p.apply(x, ps, qh) }, x),
			mk("Inverse(x short)", "len(x)", pos, func() { p.inverse(xs, pos, qh) }, xs),
			mk("Inverse(pos short)", "len(pos)", ps, func() { p.inverse(x, ps, qh) }, x),
			mk("ApplyQK(q short)", "len(q)", pos, func() { p.applyQK(xs, k, pos, qh, kh) }, xs, k),
			mk("ApplyQK(k short)", "len(k)", pos, func() { p.applyQK(x, ks, pos, qh, kh) }, x, ks),
		}
	}
	for _, p := range biasPkgs {
		const lq, lk, qo = 3, 5, 2
		n := p.heads * lq * lk
		sc, dst := uniform(r, n, 4), uniform(r, n, 4)
		scs, dsts := sc[:n-1], dst[:n-1]
		var cases []shortCase
		var table []float32
		if p.buckets > 0 {
			table = uniform(r, p.heads*p.buckets, 4)
			ts := table[:len(table)-1]
			cases = append(cases,
				mk("Bias(table short)", "len(table)", nil, func() { p.bias(dst, ts, lq, lk, qo) }, dst, ts),
				mk("AddBias(table short)", "len(table)", nil, func() { p.add(sc, ts, lq, lk, qo) }, sc, ts),
				mk("Softmax(table short)", "len(table)", nil, func() { p.softmax(sc, ts, lq, lk, qo, 1) }, sc, ts),
			)
		}
		cases = append(cases,
			mk("Bias(dst short)", "len(dst)", nil, func() { p.bias(dsts, table, lq, lk, qo) }, dsts, table),
			mk("AddBias(scores short)", "len(scores)", nil, func() { p.add(scs, table, lq, lk, qo) }, scs, table),
			mk("Softmax(scores short)", "len(scores)", nil, func() { p.softmax(scs, table, lq, lk, qo, 1) }, scs, table),
		)
		out[p.name] = cases
	}
	for _, p := range absPkgs {
		pos := []int32{0, 5, 2}
		x := randomValues(r, len(pos)*p.dModel)
		xs, ps := x[:len(x)-1], pos[:len(pos)-1]
		var table, ts []float32
		if p.learned {
			table = slices.Clone(learnedTable())
			ts = table[:len(table)-1]
		}
		cases := []shortCase{
			mk("Add(x short)", "len(x)", pos, func() { p.add(xs, table, pos) }, xs, table),
			mk("Add(pos short)", "len(pos)", ps, func() { p.add(x, table, ps) }, x, table),
		}
		if p.learned {
			cases = append(cases, mk("Add(table short)", "len(table)", pos, func() { p.add(x, ts, pos) }, x, ts))
		}
		if p.encode != nil {
			d := uniform(r, p.dModel, 1)[:p.dModel-1]
			cases = append(cases, mk("Encode(dst short)", "len(dst)", nil, func() { p.encode(d, 3) }, d))
		}
		out[p.name] = cases
	}
	for _, p := range rpeFullPkgs {
		const lq, lk, qo = 3, 40, 18 // query 0: keys 0…2 and 34…39 clipped
		d := p.headDim
		dst, q, k := uniform(r, lq*lk, 1), randomValues(r, lq*d), randomValues(r, lk*d)
		aK, aV := randomValues(r, p.buckets*d), randomValues(r, p.buckets*d)
		od, w, v := uniform(r, lq*d, 1), uniform(r, lq*lk, 1), randomValues(r, lk*d)
		short := func(x []float32) []float32 { return x[:len(x)-1] }
		out[p.name] = []shortCase{
			mk("Scores(dst short)", "len(dst)", nil, func() { p.scores(short(dst), q, k, aK, lq, lk, qo) }, short(dst), q, k, aK),
			mk("Scores(q short)", "len(q)", nil, func() { p.scores(dst, short(q), k, aK, lq, lk, qo) }, dst, short(q), k, aK),
			mk("Scores(k short)", "len(k)", nil, func() { p.scores(dst, q, short(k), aK, lq, lk, qo) }, dst, q, short(k), aK),
			mk("Scores(aK short)", "len(aK)", nil, func() { p.scores(dst, q, k, short(aK), lq, lk, qo) }, dst, q, k, short(aK)),
			mk("Output(dst short)", "len(dst)", nil, func() { p.output(short(od), w, v, aV, lq, lk, qo) }, short(od), w, v, aV),
			mk("Output(weights short)", "len(weights)", nil, func() { p.output(od, short(w), v, aV, lq, lk, qo) }, od, short(w), v, aV),
			mk("Output(v short)", "len(v)", nil, func() { p.output(od, w, short(v), aV, lq, lk, qo) }, od, w, short(v), aV),
			mk("Output(aV short)", "len(aV)", nil, func() { p.output(od, w, v, short(aV), lq, lk, qo) }, od, w, v, short(aV)),
		}
	}
	for _, p := range xlPkgs {
		const lq, lk, qo = 3, 5, 2
		d := p.headDim
		dst, q, k := uniform(r, lq*lk, 1), randomValues(r, lq*d), randomValues(r, lk*d)
		rr, u, v := randomValues(r, p.relRows(lq, lk)*d), randomValues(r, d), randomValues(r, d)
		rd := uniform(r, 7*d, 1)
		short := func(x []float32) []float32 { return x[:len(x)-1] }
		out[p.name] = []shortCase{
			mk("Scores(dst short)", "len(dst)", nil, func() { p.scores(short(dst), q, k, rr, u, v, lq, lk, qo) }, short(dst), q, k, rr, u, v),
			mk("Scores(q short)", "len(q)", nil, func() { p.scores(dst, short(q), k, rr, u, v, lq, lk, qo) }, dst, short(q), k, rr, u, v),
			mk("Scores(k short)", "len(k)", nil, func() { p.scores(dst, q, short(k), rr, u, v, lq, lk, qo) }, dst, q, short(k), rr, u, v),
			mk("Scores(r short)", "len(r)", nil, func() { p.scores(dst, q, k, short(rr), u, v, lq, lk, qo) }, dst, q, k, short(rr), u, v),
			mk("Scores(u short)", "len(u)", nil, func() { p.scores(dst, q, k, rr, short(u), v, lq, lk, qo) }, dst, q, k, rr, short(u), v),
			mk("Scores(v short)", "len(v)", nil, func() { p.scores(dst, q, k, rr, u, short(v), lq, lk, qo) }, dst, q, k, rr, u, short(v)),
			mk("Relative(dst short)", "len(dst)", nil, func() { p.relative(short(rd), 7) }, short(rd)),
		}
	}
	return out
}

// TestShortSlicePanics requires every kernel of every package, in every
// runnable variant, to panic when a slice argument is one element too short,
// with a message naming that argument, and to have written nothing: every
// slice it was given keeps its bits (checked after recovering).
func TestShortSlicePanics(t *testing.T) {
	all := shortCases()
	regs := map[string]registry{}
	for _, p := range ropePkgs {
		regs[p.name] = p.reg
	}
	for _, p := range biasPkgs {
		regs[p.name] = p.reg
	}
	for _, p := range absPkgs {
		regs[p.name] = p.reg
	}
	for _, p := range rpeFullPkgs {
		regs[p.name] = p.reg
	}
	for _, p := range xlPkgs {
		regs[p.name] = p.reg
	}
	for name, cases := range all {
		regs[name].each(t, func(v string) {
			for _, c := range cases {
				snaps := make([][]float32, len(c.views))
				for i, b := range c.views {
					snaps[i] = slices.Clone(b)
				}
				pos := slices.Clone(c.pos)
				e := catch(c.run)
				msg := fmt.Sprint(e)
				switch {
				case e == nil:
					t.Errorf("%s %s %s: no panic", name, v, c.call)
				case !strings.Contains(msg, c.want):
					t.Errorf("%s %s %s: panic %q does not name %s", name, v, c.call, msg, c.want)
				}
				for i, b := range c.views {
					if !sameBits(b, snaps[i]) {
						t.Errorf("%s %s %s: argument %d was written before the panic", name, v, c.call, i)
					}
				}
				if !slices.Equal(pos, c.pos) {
					t.Errorf("%s %s %s: pos was written", name, v, c.call)
				}
			}
		})
	}
}
