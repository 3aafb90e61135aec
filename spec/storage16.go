package spec

// storage16Targets applies the rule of 16-bit rope storage (dtype f16 or
// bf16, whose Go API is []uint16): there is no NEON kernel for it yet, so
// the default targets of such a spec leave neon out (arm64 builds run the
// generic Go kernel) and a targets list naming neon is an error. Other
// encodings keep a float32 Go API; their dtype only sets the CUDA storage.
// The M-RoPE forms (mrope_section) and ScaleQ (attn_temperature) take the
// storage type like every other rope form, so they fall under the same rule.
func (d *decoder) storage16Targets(s *Spec, defaultTargets bool) {
	if s.Encoding != RoPE || (s.DType != "f16" && s.DType != "bf16") {
		return
	}
	if defaultTargets {
		kept := s.Targets[:0]
		for _, t := range s.Targets {
			if t != TargetNEON {
				kept = append(kept, t)
			}
		}
		s.Targets = kept
		return
	}
	if contains(s.Targets, TargetNEON) {
		d.fail(d.line("targets"), "targets", "rope with dtype %s has no neon kernel yet; list the targets without neon (arm64 then runs the generic Go kernel)", s.DType)
	}
}
