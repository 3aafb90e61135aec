package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// ALiBiSlopes returns the spec's per-head ALiBi slopes: the explicit Slopes
// when given, otherwise the ALiBi paper's get_slopes (Press et al.,
// "Train Short, Test Long", reference implementation) generalized to
// max_bias: for a power of two n, start = 2^(−max_bias/n) and
// slope_h = start^(h+1); otherwise, with c = 2^⌊log2 n⌋, slopes(c) followed
// by the even-indexed entries of slopes(2c), the first n−c of them.
func ALiBiSlopes(s *spec.Spec) []float64 {
	if len(s.Slopes) > 0 {
		return append([]float64(nil), s.Slopes...)
	}
	mb := s.MaxBias
	if mb == 0 {
		mb = 8
	}
	return alibiSlopes(s.Heads, mb)
}

func alibiSlopes(n int, maxBias float64) []float64 {
	pow2 := func(n int) []float64 {
		sl := make([]float64, n)
		for h := range sl {
			// start^(h+1) with start = 2^(−maxBias/n), as one exponent.
			sl[h] = math.Exp2(-maxBias * float64(h+1) / float64(n))
		}
		return sl
	}
	if n&(n-1) == 0 {
		return pow2(n)
	}
	c := 1
	for c*2 <= n {
		c *= 2
	}
	sl := pow2(c)
	extra := alibiSlopes(2*c, maxBias)
	for i := 0; len(sl) < n; i += 2 {
		sl = append(sl, extra[i])
	}
	return sl
}

// ALiBiBias returns the ALiBi bias [Heads][lq][lk]: query i sits at position
// qOffset+i, key j at position j, and the bias is −slope_h·|qOffset+i−j|
// (get_alibi_biases of Géron's appendix D notebook). It is unmasked even
// for causal specs, as the generated Bias function (the golden case galibi6
// checks this); use CausalMask for the masked forms.
func ALiBiBias(s *spec.Spec, lq, lk, qOffset int) []float64 {
	sl := ALiBiSlopes(s)
	out := make([]float64, len(sl)*lq*lk)
	for h, m := range sl {
		for i := range lq {
			for j := range lk {
				d := math.Abs(float64(qOffset + i - j))
				out[(h*lq+i)*lk+j] = -m * d
			}
		}
	}
	return out
}

// Mask reports whether the score of head h, query row i and key j is masked
// (excluded from the softmax).
type Mask func(h, i, j int) bool

// CausalMask masks the keys after the query: key j is masked for query row
// i when j > qOffset+i.
func CausalMask(qOffset int) Mask {
	return func(_, i, j int) bool { return j > qOffset+i }
}

// BiasMask is the mask of the spec's bias kernels: CausalMask(qOffset) for a
// causal ALiBi spec, nil (nothing masked) otherwise.
func BiasMask(s *spec.Spec, qOffset int) Mask {
	if s.Encoding == spec.ALiBi && s.Causal {
		return CausalMask(qOffset)
	}
	return nil
}

// RPEBucket returns the table column of an rpe_bias spec for
// rel = query position − key position:
//   - r_max rule (Shaw et al. 2018; Géron's gather_biases):
//     clamp(rel, −(r_max−1), r_max−1) + r_max−1;
//   - T5 rule: Hugging Face T5Attention._relative_position_bucket with
//     relative_position = key − query = −rel, computed in float64.
func RPEBucket(s *spec.Spec, rel int) int {
	if s.Buckets == nil {
		m := s.RMax - 1
		return min(max(rel, -m), m) + m
	}
	return t5Bucket(-rel, s.Buckets.Bidirectional, s.Buckets.Num, s.Buckets.MaxDistance)
}

// t5Bucket is T5Attention._relative_position_bucket for one
// relative_position (memory position − context position).
func t5Bucket(relPos int, bidirectional bool, numBuckets, maxDistance int) int {
	bucket := 0
	if bidirectional {
		numBuckets /= 2
		if relPos > 0 {
			bucket += numBuckets
		}
		if relPos < 0 {
			relPos = -relPos
		}
	} else {
		relPos = -min(relPos, 0)
	}
	// relPos is now in [0, ∞).
	maxExact := numBuckets / 2
	if relPos < maxExact {
		return bucket + relPos
	}
	large := maxExact + int(math.Log(float64(relPos)/float64(maxExact))/
		math.Log(float64(maxDistance)/float64(maxExact))*float64(numBuckets-maxExact))
	return bucket + min(large, numBuckets-1)
}

// RPEBias returns the rpe_bias bias [Heads][lq][lk] gathered from table
// ([Heads][NumBuckets]): entry (h, i, j) is table[h][RPEBucket(qOffset+i−j)]
// (Géron's gather_biases with query i at position qOffset+i).
func RPEBias(s *spec.Spec, table []float32, lq, lk, qOffset int) []float64 {
	nb := s.NumBuckets()
	if len(table) != s.Heads*nb {
		panic("verify: RPEBias: len(table) does not match Heads·NumBuckets")
	}
	out := make([]float64, s.Heads*lq*lk)
	for i := range lq {
		for j := range lk {
			b := RPEBucket(s, qOffset+i-j)
			for h := range s.Heads {
				out[(h*lq+i)*lk+j] = float64(table[h*nb+b])
			}
		}
	}
	return out
}

// AddBias returns scores + bias ([heads][lq][lk]) with masked entries set to
// −Inf, the contract of the generated AddBias. bias may be nil (zero) and
// mask may be nil (nothing masked).
func AddBias(scores []float32, bias []float64, mask Mask, heads, lq, lk int) []float64 {
	out := make([]float64, heads*lq*lk)
	for h := range heads {
		for i := range lq {
			for j := range lk {
				k := (h*lq+i)*lk + j
				switch {
				case mask != nil && mask(h, i, j):
					out[k] = math.Inf(-1)
				case bias != nil:
					out[k] = float64(scores[k]) + bias[k]
				default:
					out[k] = float64(scores[k])
				}
			}
		}
	}
	return out
}

// Softmax returns, for every head and query row of scores ([heads][lq][lk]),
// the softmax over keys of scale·scores + bias, computed in float64 with
// the row maximum subtracted. Masked entries are 0 and a row with every key
// masked is all 0. bias may be nil (zero) and mask nil (nothing masked).
func Softmax(scores []float32, bias []float64, mask Mask, heads, lq, lk int, scale float64) []float64 {
	out := make([]float64, heads*lq*lk)
	for h := range heads {
		for i := range lq {
			row := out[(h*lq+i)*lk : (h*lq+i+1)*lk]
			mx := math.Inf(-1)
			for j := range lk {
				k := (h*lq+i)*lk + j
				if mask != nil && mask(h, i, j) {
					row[j] = math.Inf(-1)
					continue
				}
				v := scale * float64(scores[k])
				if bias != nil {
					v += bias[k]
				}
				row[j] = v
				mx = math.Max(mx, v)
			}
			if math.IsInf(mx, -1) {
				clear(row)
				continue
			}
			sum := 0.0
			for j, v := range row {
				e := math.Exp(v - mx) // exp(−Inf) = 0 for masked keys
				row[j] = e
				sum += e
			}
			for j := range row {
				row[j] /= sum
			}
		}
	}
	return out
}
