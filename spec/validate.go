package spec

import (
	"fmt"
	"regexp"
	"strings"
)

// Defaults applied by Parse.
const (
	DefaultDType       = "f32"
	DefaultBase        = 10000.0
	DefaultMaxPosition = 4096
	DefaultMaxBias     = 8.0
	DefaultMaxLen      = 4096
	DefaultBetaFast    = 32.0
	DefaultBetaSlow    = 1.0
)

// nameRE is the shape of a spec name (a Go package name).
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// reservedNames cannot be package names of generated code: Go keywords,
// predeclared identifiers (the generated test refers to the package by
// name, and shadowing e.g. len breaks it), main, and the packages generated
// files import.
var reservedNames = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		break case chan const continue default defer else fallthrough for func
		go goto if import interface map package range return select struct
		switch type var
		any bool byte comparable complex64 complex128 error float32 float64
		int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64
		uintptr true false iota nil append cap clear close complex copy delete
		imag len make max min new panic print println real recover
		main math sync unsafe cpu testing verify spec fmt os`) {
		reservedNames[w] = true
	}
}

// validate applies defaults and checks every rule, in a fixed order.
func (d *decoder) validate(s *Spec) {
	d.checkName(s)
	if s.Targets == nil {
		s.Targets = append([]string(nil), AllTargets...)
	}
	if !d.has("dtype") {
		s.DType = DefaultDType
	} else if !contains(DTypes, s.DType) {
		d.fail(d.line("dtype"), "dtype", "unknown dtype %q; %s", s.DType, oneOf(DTypes))
	}
	switch s.Encoding {
	case RoPE:
		d.rope(s)
	case ALiBi:
		d.alibi(s)
	case RPEBias:
		d.rpeBias(s)
	case Sinusoidal:
		d.absolute(s, 2, 1, true)
		d.base(s)
	case Algebraic:
		d.absolute(s, 2, 2, false)
	case Binary:
		d.absolute(s, 1, 1, false)
	case Learned:
		d.absolute(s, 1, 1, false)
	case Mixture:
		// The sinusoidal half always uses Vaswani et al.'s base 10000, so
		// mixture takes no base key.
		d.absolute(s, 1, 1, false)
	case RPEFull:
		if d.intIn(s.HeadDim, "head_dim", 1, MaxDim, true, "the per-head dimension") &&
			d.intIn(s.RMax, "r_max", 1, MaxRMax, true, "relative distances are clipped to ±(r_max−1)") {
			d.tableMax(2*s.RMax-1, s.HeadDim, MaxRPEFullTableBytes, "r_max", "each of the relative tables a^K and a^V ([2·r_max−1][head_dim])")
		}
	case XL:
		if d.evenDim(s.HeadDim, "head_dim", MaxDim) {
			d.cudaConst(s.HeadDim/2, 8, "head_dim", "the CUDA divisor table (head_dim/2 doubles)")
		}
		d.base(s)
	}
}

// checkName requires a name usable as a Go package name.
func (d *decoder) checkName(s *Spec) {
	if !d.has("name") {
		d.fail(d.rootLine, "name", "required: the Go package name, matching [a-z][a-z0-9_]*")
		return
	}
	l := d.line("name")
	switch {
	case !nameRE.MatchString(s.Name):
		d.fail(l, "name", "%q is not a valid package name: must match [a-z][a-z0-9_]*", s.Name)
	case len(s.Name) > MaxNameLen:
		d.fail(l, "name", "%q is longer than %d characters", s.Name, MaxNameLen)
	case reservedNames[s.Name]:
		d.fail(l, "name", "%q is a Go keyword, predeclared identifier or package name the generated code needs; choose another", s.Name)
	case strings.HasSuffix(s.Name, "_test"):
		d.fail(l, "name", "%q ends in _test, which Go reserves for external test packages", s.Name)
	case buildSuffix(s.Name) != "":
		d.fail(l, "name", "%q ends in %s, which Go reads as a build constraint on the file %s.go: the package would build on one platform only", s.Name, buildSuffix(s.Name), s.Name)
	}
}

// intIn checks lo ≤ v ≤ hi for the integer field at path; a missing field is
// an error when required.
func (d *decoder) intIn(v int, path string, lo, hi int, required bool, what string) bool {
	if !d.has(path) {
		if required {
			d.fail(d.line(path), path, "required: %s (an integer in [%d, %d])", what, lo, hi)
			return false
		}
		return true
	}
	if v < lo || v > hi {
		d.fail(d.line(path), path, "must be an integer in [%d, %d], got %d", lo, hi, v)
		return false
	}
	return true
}

// positive checks v > 0 for a present number field.
func (d *decoder) positive(v float64, path string) bool {
	if v > 0 {
		return true
	}
	d.fail(d.line(path), path, "must be > 0, got %v", v)
	return false
}

// evenDim requires an even head dimension of at most hi.
func (d *decoder) evenDim(v int, path string, hi int) bool {
	if !d.intIn(v, path, 2, hi, true, "the per-head dimension, even") {
		return false
	}
	if v%2 != 0 {
		d.fail(d.line(path), path, "must be even (dimensions rotate in pairs), got %d", v)
		return false
	}
	return true
}

// base applies the default base and requires base > 1.
func (d *decoder) base(s *Spec) {
	if !d.has("base") {
		s.Base = DefaultBase
		return
	}
	if !(s.Base > 1) {
		d.fail(d.line("base"), "base", "must be > 1, got %v", s.Base)
	}
}

// tableBytes is the size of a rows × cols float32 table, computed without
// integer overflow.
func tableBytes(rows, cols int) float64 {
	return float64(rows) * float64(cols) * 4
}

// table requires a rows × cols float32 table, sized by the field at path,
// to fit MaxTableBytes.
func (d *decoder) table(rows, cols int, path, what string) bool {
	return d.tableMax(rows, cols, MaxTableBytes, path, what)
}

// tableMax requires a rows × cols float32 table, sized by the field at
// path, to fit limit bytes.
func (d *decoder) tableMax(rows, cols, limit int, path, what string) bool {
	if b := tableBytes(rows, cols); b > float64(limit) {
		d.fail(d.line(path), path, "%s (%d × %d floats × 4 bytes = %.0f MiB) exceeds %d MiB", what, rows, cols, b/(1<<20), limit>>20)
		return false
	}
	return true
}

// rope checks a RoPE spec and applies its defaults.
func (d *decoder) rope(s *Spec) {
	if !d.evenDim(s.HeadDim, "head_dim", MaxRoPEHeadDim) {
		return
	}
	if !d.has("rotary_dim") {
		s.RotaryDim = s.HeadDim
	} else if !RotaryDimOK(s.RotaryDim, s.HeadDim) {
		d.fail(d.line("rotary_dim"), "rotary_dim", "must be even with 2 ≤ rotary_dim ≤ head_dim (%d), got %d", s.HeadDim, s.RotaryDim)
		return
	}
	layouts := []string{LayoutHalf, LayoutInterleaved}
	if !d.has("layout") {
		d.fail(d.line("layout"), "layout", "required for encoding rope; %s (half = NeoX/rotate_half pairs (i, i+R/2), interleaved = GPT-J pairs (2i, 2i+1))", oneOf(layouts))
		return
	}
	if !contains(layouts, s.Layout) {
		d.fail(d.line("layout"), "layout", "unknown layout %q; %s", s.Layout, oneOf(layouts))
		return
	}
	d.base(s)
	if !d.has("max_position") {
		s.MaxPosition = DefaultMaxPosition
	} else if !d.intIn(s.MaxPosition, "max_position", 1, MaxPositionLimit, false, "") {
		return
	}
	rowLen := s.RotaryDim
	if s.Layout == LayoutInterleaved {
		rowLen *= 2
	}
	if b := tableBytes(s.MaxPosition, rowLen); b > MaxTableBytes {
		d.fail(d.line("max_position"), "max_position", "the cos/sin table (max_position %d × %d floats × 4 bytes = %.0f MiB) exceeds %d MiB; lower max_position (larger positions are still computed exactly)", s.MaxPosition, rowLen, b/(1<<20), MaxTableBytes>>20)
		return
	}
	if s.Scaling != nil {
		d.scalingRules(s)
	}
	if d.err == nil {
		d.mrope(s)
	}
	if d.err == nil {
		d.attnTemperatureRules(s)
	}
	if d.err == nil {
		d.ropeRanges(s)
	}
}

// scalingRules checks the RoPE scaling mapping and applies its defaults.
func (d *decoder) scalingRules(s *Spec) {
	sc := s.Scaling
	if sc.Type == ScaleLongRoPE && !d.has("scaling.factor") {
		sc.Factor = 1
	} else if !d.has("scaling.factor") {
		d.fail(d.line("scaling.factor"), "scaling.factor", "required for scaling type %s: the context extension factor (> 0)", sc.Type)
		return
	} else if !d.positive(sc.Factor, "scaling.factor") {
		return
	}
	switch sc.Type {
	case ScaleNTK, ScaleDynamic:
		if s.RotaryDim < 4 {
			d.fail(d.line("scaling.type"), "scaling.type", "%s scaling raises the base to the power d/(d−2) and needs rotary_dim ≥ 4, got %d", sc.Type, s.RotaryDim)
			return
		}
	}
	if sc.Type == ScaleLinear || sc.Type == ScaleNTK {
		return
	}
	// LongRoPE's default attention factor divides by ln(original_max_position).
	minOrig := 1
	if sc.Type == ScaleLongRoPE {
		minOrig = 2
	}
	if !d.intIn(sc.OriginalMaxPosition, "scaling.original_max_position", minOrig, MaxPositionLimit, true,
		"the pre-training context length (HF original_max_position_embeddings)") {
		return
	}
	switch sc.Type {
	case ScaleLlama3:
		if !d.has("scaling.low_freq_factor") {
			d.fail(d.line("scaling.low_freq_factor"), "scaling.low_freq_factor", "required for scaling type llama3 (> 0)")
			return
		}
		if !d.positive(sc.LowFreqFactor, "scaling.low_freq_factor") {
			return
		}
		if !d.has("scaling.high_freq_factor") {
			d.fail(d.line("scaling.high_freq_factor"), "scaling.high_freq_factor", "required for scaling type llama3 (≥ low_freq_factor)")
			return
		}
		d.llama3Band(s)
	case ScaleYaRN:
		if !d.has("scaling.beta_fast") {
			sc.BetaFast = DefaultBetaFast
		}
		if !d.has("scaling.beta_slow") {
			sc.BetaSlow = DefaultBetaSlow
		}
		if !d.has("scaling.truncate") {
			sc.Truncate = true
		}
		if !(sc.BetaSlow > 0) {
			d.fail(d.line("scaling.beta_slow"), "scaling.beta_slow", "must be > 0, got %v", sc.BetaSlow)
			return
		}
		if !(sc.BetaFast > sc.BetaSlow) {
			p := "scaling.beta_fast"
			if !d.has(p) {
				p = "scaling.beta_slow"
			}
			d.fail(d.line(p), p, "need beta_fast > beta_slow, got beta_fast %v and beta_slow %v", sc.BetaFast, sc.BetaSlow)
			return
		}
		if sc.HasMscale && !d.positive(sc.Mscale, "scaling.mscale") {
			return
		}
		if sc.HasMscaleAllDim && !d.positive(sc.MscaleAllDim, "scaling.mscale_all_dim") {
			return
		}
		if sc.HasAttentionFactor {
			d.positive(sc.AttentionFactor, "scaling.attention_factor")
		}
	case ScaleLongRoPE:
		if sc.HasAttentionFactor && !d.positive(sc.AttentionFactor, "scaling.attention_factor") {
			return
		}
		n := s.RotaryDim / 2
		if !d.factorList(sc.ShortFactor, "scaling.short_factor", n) {
			return
		}
		d.factorList(sc.LongFactor, "scaling.long_factor", n)
	}
}

// factorList requires a longrope factor list of n positive entries.
func (d *decoder) factorList(f []float64, path string, n int) bool {
	if !d.has(path) {
		d.fail(d.line(path), path, "required for scaling type longrope: a list of rotary_dim/2 = %d positive factors", n)
		return false
	}
	if len(f) != n {
		d.fail(d.line(path), path, "must have rotary_dim/2 = %d entries, got %d", n, len(f))
		return false
	}
	for i, v := range f {
		if !d.positive(v, fmt.Sprintf("%s[%d]", path, i)) {
			return false
		}
	}
	return true
}

// alibi checks an ALiBi spec and applies its defaults.
func (d *decoder) alibi(s *Spec) {
	if !d.intIn(s.Heads, "heads", 1, MaxHeads, true, "the number of attention heads") {
		return
	}
	if d.has("slopes") {
		if d.has("max_bias") {
			d.fail(d.line("max_bias"), "max_bias", "give either max_bias (slopes from the ALiBi rule) or explicit slopes, not both")
			return
		}
		if len(s.Slopes) != s.Heads {
			d.fail(d.line("slopes"), "slopes", "must have one slope per head (heads = %d), got %d", s.Heads, len(s.Slopes))
			return
		}
		for i, v := range s.Slopes {
			p := fmt.Sprintf("slopes[%d]", i)
			if !d.positive(v, p) || !d.normal32(v, MaxSlope, p, "slope", "the bias −slope·|p−q| at distances up to 2^31 must be a finite float32, and the slope a normal one") {
				return
			}
		}
	} else if !d.has("max_bias") {
		s.MaxBias = DefaultMaxBias
	} else if !d.positive(s.MaxBias, "max_bias") {
		return
	} else if s.MaxBias > MaxMaxBias {
		d.fail(d.line("max_bias"), "max_bias", "must be ≤ %d, got %v: the smallest slope 2^−max_bias must be a normal float32", MaxMaxBias, s.MaxBias)
		return
	}
	if !d.has("causal") {
		s.Causal = true
	}
	d.attnHeadDim(s)
}

// attnHeadDim checks the optional head_dim of alibi and rpe_bias: the
// per-head dimension of q and k in the fused attention form. It need not be
// even (nothing rotates in pairs); absent, HeadDim stays 0 and the package
// has no attention form.
func (d *decoder) attnHeadDim(s *Spec) {
	if d.err == nil {
		d.intIn(s.HeadDim, "head_dim", 1, MaxAttentionHeadDim, false, "the per-head dimension of the attention form")
	}
}

// rpeBias checks an rpe_bias spec and applies its defaults.
func (d *decoder) rpeBias(s *Spec) {
	if !d.intIn(s.Heads, "heads", 1, MaxHeads, true, "the number of attention heads") {
		return
	}
	hasR, hasB := d.has("r_max"), d.has("buckets")
	switch {
	case hasR && hasB:
		p := "buckets"
		if d.line("r_max") > d.line("buckets") {
			p = "r_max"
		}
		d.fail(d.line(p), p, "give exactly one of r_max (clamp rule) and buckets (T5 rule), not both")
	case !hasR && !hasB:
		d.fail(d.rootLine, "r_max", "rpe_bias needs exactly one of r_max (clamp rule, an integer ≥ 1) and buckets (T5 rule: num, max_distance, bidirectional)")
	case hasR:
		if d.intIn(s.RMax, "r_max", 1, MaxRMax, true, "") {
			d.table(s.Heads, 2*s.RMax-1, "r_max", "the bias table ([heads][2·r_max−1])")
		}
	default:
		if d.t5(s.Buckets) {
			d.table(s.Heads, s.Buckets.Num, "buckets.num", "the bias table ([heads][num])")
		}
	}
	d.attnHeadDim(s)
}

// t5 checks the T5 bucketing rule and applies its default; it reports
// whether the rule is valid.
func (d *decoder) t5(b *Buckets) bool {
	if !d.has("buckets.bidirectional") {
		b.Bidirectional = true
	}
	if !d.intIn(b.Num, "buckets.num", 2, MaxBucketNum, true, "the number of buckets") {
		return false
	}
	n := b.Num
	if b.Bidirectional {
		if b.Num%2 != 0 || b.Num < 4 {
			d.fail(d.line("buckets.num"), "buckets.num", "must be even and ≥ 4 when bidirectional (each direction gets num/2 ≥ 2 buckets), got %d", b.Num)
			return false
		}
		n = b.Num / 2
	}
	maxExact := n / 2
	if d.has("buckets.max_distance") && b.MaxDistance <= maxExact {
		d.fail(d.line("buckets.max_distance"), "buckets.max_distance",
			"must be > %d, the number of exact buckets per direction (half of %d), got %d", maxExact, n, b.MaxDistance)
		return false
	}
	return d.intIn(b.MaxDistance, "buckets.max_distance", maxExact+1, MaxBucketSpan, true,
		"the distance from which all keys share the last bucket")
}

// absolute checks d_model and max_len of an absolute encoding. minDModel and
// minMaxLen are the least allowed values; max_len defaults to 4096 when
// defaultLen, else it is required. Encodings whose table is built at
// generation or init time (all but learned and mixture) are bounded by
// MaxTableBytes.
func (d *decoder) absolute(s *Spec, minDModel, minMaxLen int, defaultLen bool) {
	if !d.intIn(s.DModel, "d_model", minDModel, MaxDim, true, "the model dimension") {
		return
	}
	if s.Encoding == Sinusoidal && s.DModel%2 != 0 {
		d.fail(d.line("d_model"), "d_model", "must be even for the sin/cos pairs, got %d", s.DModel)
		return
	}
	if defaultLen && !d.has("max_len") {
		s.MaxLen = DefaultMaxLen
	}
	what := "the number of table rows (positions)"
	if s.Encoding == Algebraic {
		what = "the formula constant max_seq_len"
	}
	if !d.intIn(s.MaxLen, "max_len", minMaxLen, MaxPositionLimit, !defaultLen, what) {
		return
	}
	tw := "the encoding table (max_len × d_model)"
	if s.Encoding == Learned || s.Encoding == Mixture {
		tw = "the caller's table (max_len × d_model)"
	}
	if !d.table(s.MaxLen, s.DModel, "max_len", tw) {
		return
	}
	switch s.Encoding {
	case Sinusoidal, Mixture:
		d.cudaConst(s.DModel/2, 8, "d_model", "the CUDA divisor table (d_model/2 doubles)")
	case Algebraic:
		d.cudaConst(s.DModel, 8, "d_model", "the CUDA divisor table (d_model doubles)")
	}
}
