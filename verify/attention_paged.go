package verify

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// attentionPagedRef is AttentionRef for the paged form: sequence t has the
// queries qStart[t]…qStart[t+1] and the keys kStart[t]…kStart[t+1], key j
// being row slots[j] of kCache and vCache ([nSlots][KVHeads][headDim]). The
// keys are gathered in kpos order and every query sees only its own
// sequence's keys; the rope frequencies are those of the whole call's
// positions. kRotated: the cache holds rotated k.
func attentionPagedRef(s *spec.Spec, hd int, q, kCache, vCache, table []float32, qpos, qStart, slots, kpos, kStart []int32, o AttentionOptions, kRotated bool, st Storage, ids mropeIDs) (out, bound []float64) {
	row := o.KVHeads * hd
	checkPaged(len(qpos), len(kpos), len(kCache), row, qStart, slots, kStart)
	if len(vCache) != len(kCache) {
		panic("verify: attention: len(vCache) does not match len(kCache)")
	}
	k := make([]float32, 0, len(kpos)*row)
	v := make([]float32, 0, len(kpos)*row)
	for _, sl := range slots {
		k = append(k, kCache[int(sl)*row:int(sl+1)*row]...)
		v = append(v, vCache[int(sl)*row:int(sl+1)*row]...)
	}
	checkAttnArgs(s, hd, q, k, v, table, len(qpos), len(kpos), o)
	a := newAttnCtx(s, hd, q, k, v, table, qpos, kpos, o, kRotated, attentionSeqLen(qpos, kpos), st, ids)
	out = make([]float64, len(qpos)*o.QHeads*hd)
	bound = make([]float64, len(out))
	for t := range len(qStart) - 1 {
		lo, hi := int(kStart[t]), int(kStart[t+1])
		for i := int(qStart[t]); i < int(qStart[t+1]); i++ {
			a.query(out, bound, i, qpos[i], kpos, lo, hi)
		}
	}
	return out, bound
}

// checkPaged panics, naming the argument, unless qStart and kStart are
// sequence boundaries over lq queries and lk keys (same length ≥ 1, from
// 0, non-decreasing, ending at lq and lk), len(slots) == lk and every slot
// indexes a row of a cache of cacheLen floats (row floats a row).
func checkPaged(lq, lk, cacheLen, row int, qStart, slots, kStart []int32) {
	bounds := func(name string, st []int32, n int) {
		if len(st) < 1 || st[0] != 0 || int(st[len(st)-1]) != n {
			panic(fmt.Sprintf("verify: attention: %s must run from 0 to %d", name, n))
		}
		for i := 1; i < len(st); i++ {
			if st[i] < st[i-1] {
				panic(fmt.Sprintf("verify: attention: %s decreases at %d", name, i))
			}
		}
	}
	bounds("qStart", qStart, lq)
	bounds("kStart", kStart, lk)
	switch {
	case len(kStart) != len(qStart):
		panic("verify: attention: len(kStart) != len(qStart)")
	case len(slots) != lk:
		panic("verify: attention: len(slots) != len(kpos)")
	case row < 1 || cacheLen%row != 0:
		panic("verify: attention: len(kCache) is not a whole number of KVHeads·headDim rows")
	}
	for j, sl := range slots {
		if sl < 0 || int(sl) >= cacheLen/row {
			panic(fmt.Sprintf("verify: attention: slots[%d] = %d out of range", j, sl))
		}
	}
}
