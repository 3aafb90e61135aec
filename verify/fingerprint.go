package verify

import "math"

// snapshotFloats is the largest guarded buffer a fingerprint copies; a
// larger one (the 256 MiB tables of specs at the size limits) is hashed, so
// that checking a kernel left its inputs alone costs no second copy of
// them.
const snapshotFloats = 1 << 20

// fingerprint records a guarded buffer's contents, sentinels included, so
// that unchanged can tell whether a call modified it: a copy of a small
// buffer (a failure then names the offset), a 64-bit FNV-1a hash of the
// float bits of a large one.
type fingerprint struct {
	copy []float32
	hash uint64
}

// fingerprint records g's whole buffer.
func (g *guarded) fingerprint() fingerprint {
	if len(g.buf) <= snapshotFloats {
		return fingerprint{copy: append([]float32(nil), g.buf...)}
	}
	return fingerprint{hash: hashFloats(g.buf)}
}

// hashFloats is FNV-1a over the 32-bit words of v (one word at a time).
func hashFloats(v []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range v {
		h = (h ^ uint64(math.Float32bits(x))) * 1099511628211
	}
	return h
}

// unchanged checks that g's whole buffer still matches fp.
func (g *guarded) unchanged(c *check, what string, fp fingerprint) {
	if fp.copy == nil {
		if hashFloats(g.buf) != fp.hash {
			c.fail("%s modified (its buffer's hash changed)", what)
		}
		return
	}
	for i, v := range g.buf {
		if math.Float32bits(v) != math.Float32bits(fp.copy[i]) {
			c.fail("%s modified at offset %d of its buffer", what, i-guardPad)
			return
		}
	}
}
