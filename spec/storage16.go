package spec

// storage16Targets applies the rule of 16-bit rope storage (dtype f16 or
// bf16, whose Go API is []uint16). Every form takes the storage type, the
// M-RoPE forms (mrope_section) and ScaleQ (attn_temperature) included, and
// every target has a 16-bit rotate kernel, NEON too. ScaleQ's 16-bit
// kernel (abi.ScaleRows16) exists for Go, AVX2 and AVX-512 only, so a
// 16-bit spec with attn_temperature leaves neon out of its default targets
// (arm64 builds run the generic Go kernels) and a targets list naming neon
// is an error. Other encodings keep a float32 Go API; their dtype only sets
// the CUDA storage.
func (d *decoder) storage16Targets(s *Spec, defaultTargets bool) {
	if s.Encoding != RoPE || (s.DType != "f16" && s.DType != "bf16") || s.AttnTemperature == nil {
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
		d.fail(d.line("targets"), "targets", "rope with dtype %s and attn_temperature has no neon kernel for ScaleQ yet; list the targets without neon (arm64 then runs the generic Go kernels)", s.DType)
	}
}
