package positions

import "math"

// Decode returns the ids of n tokens fed at cache positions start,
// start+1, … to a row whose rope delta is delta: start + j + delta on all
// three axes (the cached branch of Qwen2VLModel.forward, Qwen2.5-VL and
// Qwen3-VL alike: arange(seq_length) + cache_position[0] + rope_deltas).
// start counts every token of the row so far, padding included. The result
// is token-major, 3 per token, for a generated package's ApplyMRoPE:
//
//	pos, err := positions.Decode(ix.Deltas[b], cachePos, 1)
//	qwen25_vl_7b.ApplyQKMRoPE(q, k, pos, qHeads, kHeads)
//
// It refuses start < 0, n < 0 or n > MaxTokens, and ids beyond int32.
func Decode(delta int64, start, n int) ([]int32, error) {
	if start < 0 || n < 0 {
		return nil, invalid("cache position %d and count %d must not be negative", start, n)
	}
	if n > MaxTokens {
		return nil, overflow("%d tokens, more than MaxTokens", n)
	}
	if delta < math.MinInt32-int64(MaxTokens) || delta > math.MaxInt32 || int64(start) > math.MaxInt32+int64(MaxTokens) {
		return nil, overflow("cache position %d with delta %d is beyond int32", start, delta)
	}
	out := make([]int32, 3*n)
	for j := 0; j < n; j++ {
		p := int64(start) + int64(j) + delta
		if p < math.MinInt32 || p > math.MaxInt32 {
			return nil, overflow("cache position %d with delta %d gives id %d, beyond int32", start+j, delta, p)
		}
		out[3*j], out[3*j+1], out[3*j+2] = int32(p), int32(p), int32(p)
	}
	return out, nil
}

// Decode returns the ids of n tokens fed at cache positions start, … to row
// b of the prompt: Decode(ix.Deltas[b], start, n).
func (ix *Index) Decode(b, start, n int) ([]int32, error) {
	if b < 0 || b >= len(ix.Deltas) {
		return nil, invalid("row %d of %d", b, len(ix.Deltas))
	}
	return Decode(ix.Deltas[b], start, n)
}
