package verify

import (
	"math"
	"math/rand/v2"
)

// The inputs of RunAttention's cases: position layouts and q, k, v drawn
// from pools of values of the case's storage type.

// attnPositions returns query and key positions of the layout named scheme
// for lq queries and lk keys; every position stays ≤ 2^31−1.
func attnPositions(r *rand.Rand, scheme string, lq, lk int) (qpos, kpos []int32) {
	qpos, kpos = make([]int32, lq), make([]int32, lk)
	switch scheme {
	case "prefill": // the last lq of lk tokens from 0 (qpos = kpos when lq = lk)
		for j := range kpos {
			kpos[j] = int32(j)
		}
		for i := range qpos {
			qpos[i] = int32(max(lk-lq, 0) + i)
		}
	case "decode": // queries from the last key on
		for j := range kpos {
			kpos[j] = int32(j)
		}
		for i := range qpos {
			qpos[i] = int32(lk - 1 + i)
		}
	case "random", "random+pad":
		base := int64(1000)
		if scheme == "random+pad" {
			base = 1 << 20
		}
		for j := range kpos {
			kpos[j] = int32(base + r.Int64N(int64(2*lk)))
			if scheme == "random+pad" && r.IntN(5) == 0 {
				kpos[j] = []int32{-1, -2, math.MinInt32}[r.IntN(3)]
			}
		}
		for i := range qpos {
			qpos[i] = int32(base + r.Int64N(int64(2*lk)))
		}
	case "near 2^31−1": // shuffled keys up to 2^31−1, queries up to it
		base := int64(math.MaxInt32) - int64(lk) + 1
		for j, p := range r.Perm(lk) {
			kpos[j] = int32(base + int64(p))
		}
		for i := range qpos {
			qpos[i] = int32(math.MaxInt32 - r.Int64N(int64(lk)))
		}
		qpos[0] = math.MaxInt32
	case "far after keys", "far and near keys", "far keys, near last": // distances ≈ 2^31, beyond every table
		for j := range kpos {
			kpos[j] = int32(j)
			if j%7 == 3 {
				kpos[j] = -1
			}
			// ALiBi's bias must be taken from the near keys, not from the
			// far ones: every fifth key, or only the last three (one
			// thread's, one warp's of a kernel that spreads keys over
			// threads, whose nearest must still win).
			if scheme == "far and near keys" && j%5 == 4 || scheme == "far keys, near last" && j >= lk-3 {
				kpos[j] = int32(math.MaxInt32 - int64(lk) + int64(j))
			}
		}
		for i := range qpos {
			qpos[i] = int32(math.MaxInt32 - i)
		}
	case "far after a run", "far keys, near odd": // keys 0, 1, … (no padding), queries from 2^31−1 down
		for j := range kpos {
			kpos[j] = int32(j)
			// Three near keys just before every query, at odd places among
			// the last six (j = lk−5, lk−3, lk−1 for an even lk): the rows'
			// nearest, in lanes of odd rank of a kernel that deals a row's
			// keys to 2 or 8 lanes in turn, the weighty keys whose biases
			// only a shift from them keeps apart.
			if scheme == "far keys, near odd" && j >= lk-6 && (lk-1-j)%2 == 0 {
				kpos[j] = int32(math.MaxInt32 - int64(lq) - int64(lk-1-j))
			}
		}
		for i := range qpos {
			qpos[i] = int32(math.MaxInt32 - i)
		}
	default:
		panic("verify: unknown attention scheme " + scheme)
	}
	return qpos, kpos
}

// attnInputs draws q, k and v of a case: normal values times qs and ks
// (v standard), keys each scaled by 10^U(−2, 1.5) when spread, every value
// rounded to the case's storage type.
func attnInputs(r *rand.Rand, ac attnCase, hd int) [3][]float32 {
	lq, lk := len(ac.qpos), len(ac.kpos)
	row := ac.o.KVHeads * hd
	q := make([]float32, lq*ac.o.QHeads*hd)
	k := make([]float32, lk*row)
	v := make([]float32, lk*row)
	pool := normalPool(ac.st)
	draw := func(x []float32, sd float64) {
		fillPool(r, x, pool)
		for i := range x {
			x[i] = float32(sd * float64(x[i]))
			if ac.st != StorageF32 && sd != 1 {
				x[i] = float32(ac.st.Round(float64(x[i])))
			}
		}
	}
	draw(q, ac.qs)
	draw(k, ac.ks)
	draw(v, 1)
	// Padding keys (kpos < 0) hold NaN keys and values, as a cache's unused
	// entries may: no row may meet them.
	for j, kp := range ac.kpos {
		if kp < 0 {
			for t := j * row; t < (j+1)*row; t++ {
				k[t], v[t] = float32(math.NaN()), float32(math.NaN())
			}
		}
	}
	if ac.poison {
		nan := float32(math.NaN())
		if len(ac.qpos) > 1 {
			h := min(3, ac.o.QHeads-1)
			for t := range hd {
				q[(ac.o.QHeads+h)*hd+t] = nan
			}
		}
		v[2*row+min(7, hd-1)] = nan
		if len(ac.kpos) > 5 { // an even dim too: 16-bit kernels pack two values a word
			v[5*row+min(4, hd-1)] = nan
		}
	}
	if ac.spread {
		for j := range lk {
			f := math.Pow(10, -2+3.5*r.Float64())
			for t := j * row; t < (j+1)*row; t++ {
				k[t] = float32(ac.st.Round(float64(k[t]) * f))
			}
		}
	}
	return [3][]float32{q, k, v}
}

// poolBits sizes normalPool: 2^12 standard normal values.
const poolBits = 12

// normalPool returns 2^poolBits standard normal draws (fixed seed) rounded
// to st: the attention inputs are drawn from it, several values per random
// word, as generating megabytes of keys one NormFloat64 at a time dominated
// the harness's run time.
func normalPool(st Storage) []float32 {
	r := rand.New(rand.NewPCG(0x9001, uint64(len(st))))
	p := make([]float32, 1<<poolBits)
	for i := range p {
		p[i] = float32(st.Round(r.NormFloat64()))
	}
	return p
}

// fillPool fills x with entries of pool at random indices (five per
// 64-bit word).
func fillPool(r *rand.Rand, x []float32, pool []float32) {
	const mask = 1<<poolBits - 1
	for i := 0; i < len(x); {
		w := r.Uint64()
		for n := 0; n < 5 && i < len(x); n++ {
			x[i] = pool[w&mask]
			w >>= poolBits
			i++
		}
	}
}

// attnRun returns the n consecutive positions from p.
func attnRun(p int32, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = p + int32(i)
	}
	return out
}
