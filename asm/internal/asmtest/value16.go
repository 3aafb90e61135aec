package asmtest

// Value16 is Go source for the generated test packages of 16-bit kernels
// (no format verbs; it needs "math" and a constant storage, "f16" or
// "bf16"): value(h), the float64 the 16-bit element h encodes, exactly.
const Value16 = `
// value returns the value the 16-bit element h encodes, exactly.
func value(h uint16) float64 {
	if storage == "bf16" {
		return float64(math.Float32frombits(uint32(h) << 16))
	}
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	case 0:
		return sign * math.Ldexp(m, -24)
	}
	return sign * math.Ldexp(1024+m, e-25)
}
`
