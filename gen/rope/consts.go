// Package rope is the RoPE family (Su et al., "RoFormer", 2021): the
// derived frequencies and attention factor, the Go emitter, the CUDA
// template data, and the explain and list text.
package rope

import (
	"fmt"
	"math"

	"github.com/posenc/posenc/spec"
)

// Consts are the derived constants of one rope spec.
type Consts struct {
	Spec *spec.Spec

	// Freqs are ω_i (i < RotaryDim/2) used whenever no runtime switch
	// applies: the scaled frequencies for linear, ntk, yarn and llama3; the
	// unscaled base frequencies for dynamic (a call rescales only when
	// max(pos)+1 > OriginalMaxPosition); the short_factor frequencies for
	// longrope. LongFreqs are longrope's long_factor frequencies (nil
	// otherwise).
	Freqs           []float64
	LongFreqs       []float64
	AttentionFactor float64 // A: cos and sin are multiplied by it
	RowLen          int     // floats per table row: RotaryDim (half) or 2·RotaryDim (interleaved)
	TableRows       int     // rows in the lazily built table (MaxPosition)

	// Dynamic holds the constant pieces of dynamic NTK scaling's run-time
	// base (nil unless scaling.type is dynamic).
	Dynamic *DynamicNTK

	// MRoPE holds the axis of every pair of a multimodal RoPE spec
	// (mrope_section; nil otherwise). Freqs are then per pair (mrope.go).
	MRoPE *MRoPE
}

// DynamicNTK are the constants of Hugging Face's
// _compute_dynamic_ntk_parameters (modeling_rope_utils.py): a call whose
// sequence length L exceeds OMP uses the base
//
//	Base·((Factor·L/OMP) − (Factor−1))^(Dim/(Dim−2))
//
// with Dim the rotary dimension. Both the Go and the CUDA emitter print
// this formula with these values.
type DynamicNTK struct {
	Base, Factor float64
	OMP, Dim     int
}

// RuntimeSwitch reports whether the frequencies depend on the call (dynamic
// NTK rescales the base, longrope picks short or long factors), so the
// generated functions take the call's largest position.
func (c *Consts) RuntimeSwitch() bool {
	sc := c.Spec.Scaling
	return sc != nil && (sc.Type == spec.ScaleDynamic || sc.Type == spec.ScaleLongRoPE)
}

// derive computes the RoPE constants of s: the frequencies ω_i for
// i < RotaryDim/2 after the spec's scaling, longrope's long-factor
// frequencies, the attention factor A and the table geometry. The rules are
// those of Hugging Face transformers' modeling_rope_utils.py, with its `dim`
// being the spec's rotary_dim (HF: head_dim·partial_rotary_factor).
func derive(s *spec.Spec) (*Consts, error) {
	c := &Consts{Spec: s}
	if err := c.derive(); err != nil {
		return nil, err
	}
	if err := c.deriveMRoPE(); err != nil {
		return nil, err
	}
	return c, nil
}

// derive fills c from c.Spec.
func (c *Consts) derive() error {
	s := c.Spec
	r := s.RotaryDim
	if !spec.RotaryDimOK(r, s.HeadDim) {
		return fmt.Errorf("rope: rotary_dim %d must be even and in [2, head_dim = %d]", r, s.HeadDim)
	}
	if !(s.Base > 1) || math.IsInf(s.Base, 0) {
		return fmt.Errorf("rope: base %v must be a finite number > 1", s.Base)
	}
	if s.MaxPosition < 0 {
		return fmt.Errorf("rope: max_position %d must not be negative", s.MaxPosition)
	}
	// A table row holds cos then sin of every pair: RotaryDim floats in the
	// half layout (ω_i once each), 2·RotaryDim interleaved (each twice, so
	// a row lines up with the interleaved pairs of a head).
	switch s.Layout {
	case spec.LayoutHalf:
		c.RowLen = r
	case spec.LayoutInterleaved:
		c.RowLen = 2 * r
	default:
		return fmt.Errorf("rope: unknown layout %q", s.Layout)
	}
	c.TableRows = s.MaxPosition
	c.AttentionFactor = 1

	sc := s.Scaling
	if sc == nil {
		c.Freqs = BaseFreqs(s.Base, r)
		return nil
	}
	if sc.Type != spec.ScaleLongRoPE && !(sc.Factor > 0) {
		return fmt.Errorf("rope: scaling.factor %v must be > 0", sc.Factor)
	}
	switch sc.Type {
	case spec.ScaleLinear:
		// _compute_linear_scaling_rope_parameters: inv_freq /= factor.
		c.Freqs = BaseFreqs(s.Base, r)
		for i := range c.Freqs {
			c.Freqs[i] /= sc.Factor
		}
	case spec.ScaleNTK:
		// Static NTK-aware scaling (bloc97, "NTK-Aware Scaled RoPE"): the
		// base becomes base·factor^(dim/(dim−2)), the same change of base
		// that _compute_dynamic_ntk_parameters applies at seq_len =
		// factor·original_max_position.
		c.Freqs = BaseFreqs(NTKBase(s.Base, sc.Factor, r), r)
	case spec.ScaleDynamic:
		// _compute_dynamic_ntk_parameters: the rescaled base depends on the
		// call's sequence length, so the generated code rescales at run
		// time (DynamicNTK); the baked frequencies are the unscaled ones,
		// used while seq_len ≤ original_max_position.
		if sc.OriginalMaxPosition < 1 {
			return fmt.Errorf("rope: dynamic scaling needs original_max_position ≥ 1")
		}
		c.Freqs = BaseFreqs(s.Base, r)
		c.Dynamic = &DynamicNTK{Base: s.Base, Factor: sc.Factor, OMP: sc.OriginalMaxPosition, Dim: r}
	case spec.ScaleYaRN:
		if sc.OriginalMaxPosition < 1 {
			return fmt.Errorf("rope: yarn scaling needs original_max_position ≥ 1")
		}
		c.Freqs, c.AttentionFactor = yarn(s.Base, r, sc)
	case spec.ScaleLlama3:
		if sc.OriginalMaxPosition < 1 || !(sc.HighFreqFactor >= sc.LowFreqFactor) || !(sc.LowFreqFactor > 0) {
			return fmt.Errorf("rope: llama3 scaling needs original_max_position ≥ 1 and 0 < low_freq_factor ≤ high_freq_factor")
		}
		var err error
		if c.Freqs, err = llama3(s.Base, r, sc); err != nil {
			return err
		}
	case spec.ScaleLongRoPE:
		if sc.OriginalMaxPosition < 2 {
			// ln(original_max_position) divides in the default attention factor.
			return fmt.Errorf("rope: longrope scaling needs original_max_position ≥ 2")
		}
		var err error
		if c.Freqs, err = longrope(s.Base, r, sc.ShortFactor, "short_factor"); err != nil {
			return err
		}
		if c.LongFreqs, err = longrope(s.Base, r, sc.LongFactor, "long_factor"); err != nil {
			return err
		}
		c.AttentionFactor = longropeAttention(sc)
	default:
		return fmt.Errorf("rope: unknown scaling type %q", sc.Type)
	}
	return nil
}
