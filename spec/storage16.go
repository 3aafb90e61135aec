package spec

// storage16Targets applies the rules of 16-bit rope storage (dtype f16 or
// bf16, whose Go API is []uint16): the forms without a []uint16 API refuse
// it. Every target has a 16-bit rotate kernel (NEON too), so the targets,
// defaulted or not (defaultTargets), stay as they are. Other encodings keep
// a float32 Go API; their dtype only sets the CUDA storage.
func (d *decoder) storage16Targets(s *Spec, defaultTargets bool) {
	if s.Encoding != RoPE || (s.DType != "f16" && s.DType != "bf16") {
		return
	}
	if s.IsMRoPE() {
		// The M-RoPE forms (ApplyMRoPE, …) have only a float32 Go API so far.
		d.fail(d.line("dtype"), "dtype", "%s storage is not available with mrope_section yet (the M-RoPE forms are float32 only); use dtype f32", s.DType)
		return
	}
	if s.AttnTemperature != nil {
		// ScaleQ has only a float32 Go API so far.
		d.fail(d.line("dtype"), "dtype", "%s storage is not available with attn_temperature yet (ScaleQ is float32 only); use dtype f32", s.DType)
		return
	}
}
