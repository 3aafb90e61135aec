package verify

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/posenc/posenc/spec"
)

// expectPanicArg is expectPanic for a misuse that must panic with a message
// naming one of args (as a whole word, any case) before writing anything.
func (r *Report) expectPanicArg(name string, args []string, f func(), bufs ...*guarded) {
	c := r.begin(name)
	prints := make([]fingerprint, len(bufs))
	for i, g := range bufs {
		prints[i] = g.fingerprint()
	}
	var msg any
	panicked := func() (p bool) {
		defer func() {
			msg = recover()
			p = msg != nil
		}()
		f()
		return false
	}()
	switch {
	case !panicked:
		c.fail("no panic")
	case !namesArg(fmt.Sprint(msg), args):
		c.fail("panic %q names none of %v", fmt.Sprint(msg), args)
	}
	for i, g := range bufs {
		g.unchanged(c, fmt.Sprintf("argument %d", i+1), prints[i])
	}
	if c.fails == 0 {
		c.r.ratio(0, c.name)
	}
}

// namesArg reports whether msg holds one of args as a word (split at
// every character that cannot be in a Go identifier), ignoring case.
func namesArg(msg string, args []string) bool {
	words := strings.FieldsFunc(msg, func(c rune) bool {
		return !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	})
	for _, w := range words {
		for _, a := range args {
			if strings.EqualFold(w, a) {
				return true
			}
		}
	}
	return false
}

// attnPanics checks the misuses: each call must panic, naming the
// argument, with out (and every input) untouched.
func attnPanics(rep *Report, s *spec.Spec, k AttentionKernels, r *rand.Rand, table []float32) {
	hd := k.HeadDim
	qh := 4
	if s.Encoding == spec.ALiBi || s.Encoding == spec.RPEBias {
		qh = s.Heads
	}
	o := AttentionOptions{QHeads: qh, KVHeads: 1, Scale: 0.5, Causal: true}
	qpos, kpos := []int32{3, 4}, []int32{0, 1, 2}
	if s.Encoding == spec.XL {
		table = attnXLTable(r, hd, o, qpos, kpos, 0) // u and v for qh heads, 5 rows of rel
	}
	vec := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	nq, nk := len(qpos)*qh*hd, len(kpos)*hd
	type bad struct {
		name              string
		args              []string
		out, q, k, v, tab int
		o                 AttentionOptions
	}
	cases := []bad{
		{"out one element short", []string{"out"}, nq - 1, nq, nk, nk, len(table), o},
		{"q one element short", []string{"q"}, nq, nq - 1, nk, nk, len(table), o},
		{"k one element short", []string{"k"}, nq, nq, nk - 1, nk, len(table), o},
		{"v one element short", []string{"v"}, nq, nq, nk, nk - 1, len(table), o},
		{"QHeads not a multiple of KVHeads", []string{"QHeads", "KVHeads"}, nq, nq, nk * (qh + 1), nk * (qh + 1), len(table), AttentionOptions{QHeads: qh, KVHeads: qh + 1, Scale: 1}},
		{"KVHeads 0", []string{"KVHeads"}, nq, nq, 0, 0, len(table), AttentionOptions{QHeads: qh, Scale: 1}},
	}
	if s.Encoding == spec.ALiBi || s.Encoding == spec.RPEBias {
		o2 := AttentionOptions{QHeads: 2 * qh, KVHeads: qh, Scale: 1}
		cases = append(cases, bad{"QHeads ≠ Heads", []string{"QHeads", "Heads"}, 2 * nq, 2 * nq, nk * qh, nk * qh, len(table), o2})
	}
	switch s.Encoding {
	case spec.RPEBias:
		cases = append(cases, bad{"table one element short", []string{"table"}, nq, nq, nk, nk, len(table) - 1, o})
	case spec.RPEFull:
		// The adapter passes the first and second halves of table as aK and aV.
		cases = append(cases, bad{"aK and aV one row short", []string{"aK", "aV"}, nq, nq, nk, nk, len(table) - 2*hd, o})
	case spec.XL:
		// The adapter splits table into uBias, vBias (QHeads·HeadDim each, or what
		// is left) and rel (the rest).
		cases = append(cases,
			bad{"rel one element short", []string{"rel"}, nq, nq, nk, nk, len(table) - 1, o},
			bad{"rel empty", []string{"rel"}, nq, nq, nk, nk, 2 * qh * hd, o},
			bad{"vBias one element short", []string{"vBias"}, nq, nq, nk, nk, 2*qh*hd - 1, o})
	}
	for _, b := range cases {
		og, qg, kg, vg := guardUnset(b.out), guard(vec(b.q)), guard(vec(b.k)), guard(vec(b.v))
		tg := guard(table[:b.tab])
		rep.expectPanicArg("Attention with "+b.name, b.args, func() {
			k.Attention(og.s, qg.s, kg.s, vg.s, tg.s, qpos, kpos, b.o)
		}, og, qg, kg, vg, tg)
		if k.AttentionRotated != nil && !strings.HasPrefix(b.name, "table") {
			og, qg, kg, vg := guardUnset(b.out), guard(vec(b.q)), guard(vec(b.k)), guard(vec(b.v))
			rep.expectPanicArg("AttentionRotated with "+b.name, b.args, func() {
				k.AttentionRotated(og.s, qg.s, kg.s, vg.s, qpos, kpos, b.o)
			}, og, qg, kg, vg)
		}
	}
	if k.AttentionMRoPE != nil {
		// M-RoPE: MRoPEAxes ids per query and key.
		qids, kids := attnMRoPEIDs(s, qpos), attnMRoPEIDs(s, kpos)
		for _, b := range []struct {
			name       string
			qids, kids []int32
		}{{"qids one id short", qids[1:], kids}, {"kids one id short", qids, kids[1:]}} {
			og, qg, kg, vg := guardUnset(nq), guard(vec(nq)), guard(vec(nk)), guard(vec(nk))
			rep.expectPanicArg("AttentionMRoPE with "+b.name, []string{b.name[:4]}, func() {
				k.AttentionMRoPE(og.s, qg.s, kg.s, vg.s, b.qids, b.kids, qpos, kpos, o)
			}, og, qg, kg, vg)
		}
		og, qg, kg, vg := guardUnset(nq), guard(vec(nq)), guard(vec(nk)), guard(vec(nk))
		rep.expectPanicArg("AttentionRotatedMRoPE with qids one id short", []string{"qids"}, func() {
			k.AttentionRotatedMRoPE(og.s, qg.s, kg.s, vg.s, qids[1:], qpos, kpos, o)
		}, og, qg, kg, vg)
	}
	if k.AttentionPaged == nil {
		return
	}
	// Two sequences: queries {3} and {4, 5}, keys {0, 1} and {0, 1, 2} in
	// slots of a 7-row cache.
	pq := []int32{3, 4, 5}
	qStart, kStart := []int32{0, 1, 3}, []int32{0, 2, 5}
	slots, pk := []int32{6, 0, 2, 3, 5}, []int32{0, 1, 0, 1, 2}
	const nSlots = 7
	npq := len(pq) * qh * hd
	type pbad struct {
		name                  string
		args                  []string
		out                   int
		qStart, slots, kStart []int32
	}
	for _, b := range []pbad{
		{"out one element short", []string{"out"}, npq - 1, qStart, slots, kStart},
		{"qStart not ending at len(qpos)", []string{"qStart"}, npq, []int32{0, 1, 2}, slots, kStart},
		{"qStart decreasing", []string{"qStart"}, npq, []int32{0, 2, 1, 3}, slots, []int32{0, 2, 2, 5}},
		{"kStart not from 0", []string{"kStart"}, npq, qStart, slots, []int32{1, 2, 5}},
		{"kStart decreasing", []string{"kStart"}, npq, qStart, slots, []int32{0, 6, 5}},
		{"kStart longer than qStart", []string{"kStart", "qStart"}, npq, qStart, slots, []int32{0, 2, 4, 5}},
		{"slot past the cache", []string{"slots"}, npq, qStart, []int32{6, 0, nSlots, 3, 5}, kStart},
		{"negative slot", []string{"slots"}, npq, qStart, []int32{6, 0, 2, -1, 5}, kStart},
		{"slots shorter than kpos", []string{"slots", "kpos"}, npq, qStart, slots[:4], kStart},
	} {
		og, qg := guardUnset(b.out), guard(vec(npq))
		kg, vg, tg := guard(vec(nSlots*hd)), guard(vec(nSlots*hd)), guard(table)
		rep.expectPanicArg("AttentionPaged with "+b.name, b.args, func() {
			k.AttentionPaged(og.s, qg.s, kg.s, vg.s, tg.s, pq, b.qStart, b.slots, pk, b.kStart, o)
		}, og, qg, kg, vg, tg)
	}
}
