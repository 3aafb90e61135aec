package rope

import (
	"fmt"
	"io"

	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// Explain prints the table geometry, the scaling, the attention factor and
// every frequency (`posenc explain`).
func (c *Consts) Explain(w io.Writer) {
	s := c.Spec
	fmt.Fprintf(w, "head_dim %d, rotary_dim %d, layout %s, base %g, max_position %d (table: %d rows × %d floats)\n",
		s.HeadDim, s.RotaryDim, s.Layout, s.Base, s.MaxPosition, c.TableRows, c.RowLen)
	if sc := s.Scaling; sc != nil {
		fmt.Fprintf(w, "scaling %s: %s\n", sc.Type, scalingKeys(sc))
	}
	fmt.Fprintf(w, "attention factor A = %.17g (cos and sin are multiplied by it)\n", c.AttentionFactor)
	if m2, ok := softmaxFactor(s); ok {
		fmt.Fprintf(w, "softmax scale (DeepSeek, SoftmaxScale): qk_head_dim^−0.5 · %.17g (mscale² of mscale_all_dim)\n", m2)
	}
	family.PrintFreqs(w, "frequencies ω_i", c.Freqs)
	if c.LongFreqs != nil {
		family.PrintFreqs(w, "long frequencies ω_i (max(pos)+1 > original_max_position)", c.LongFreqs)
	}
	c.explainMRoPE(w)
	if a := s.AttnTemperature; a != nil {
		fmt.Fprintf(w, "attn_temperature (Llama 4 NoPE layers, ScaleQ): q·(log1p(floor((pos+1)/%d))·%g + 1) per token, 1 at negative positions\n", a.FloorScale, a.AttnScale)
	}
	if d := c.Dynamic; d != nil {
		fmt.Fprintf(w, "dynamic: a call with max(pos)+1 = L > %d uses base·((factor·L/%d) − (factor−1))^(R/(R−2))\n", d.OMP, d.OMP)
	}
}

// scalingKeys lists the keys the scaling type uses, with their values (after
// defaults): a linear or ntk scaling has no original_max_position to show.
func scalingKeys(sc *spec.Scaling) string {
	out := fmt.Sprintf("factor %g", sc.Factor)
	add := func(format string, args ...any) { out += ", " + fmt.Sprintf(format, args...) }
	switch sc.Type {
	case spec.ScaleDynamic, spec.ScaleLongRoPE:
		add("original_max_position %d", sc.OriginalMaxPosition)
	case spec.ScaleLlama3:
		add("original_max_position %d, low_freq_factor %g, high_freq_factor %g", sc.OriginalMaxPosition, sc.LowFreqFactor, sc.HighFreqFactor)
	case spec.ScaleYaRN:
		add("original_max_position %d, beta_fast %g, beta_slow %g, truncate %t", sc.OriginalMaxPosition, sc.BetaFast, sc.BetaSlow, sc.Truncate)
		if sc.HasMscale {
			add("mscale %g", sc.Mscale)
		}
		if sc.HasMscaleAllDim {
			add("mscale_all_dim %g", sc.MscaleAllDim)
		}
	}
	if sc.HasAttentionFactor {
		add("attention_factor %g", sc.AttentionFactor)
	}
	return out
}

// summary is a rope spec's shape for `posenc list`.
func summary(s *spec.Spec) string {
	sc := ""
	if s.Scaling != nil {
		sc = fmt.Sprintf(", %s ×%g", s.Scaling.Type, s.Scaling.Factor)
	}
	return fmt.Sprintf("head_dim %d, rotary %d, %s, base %g%s", s.HeadDim, s.RotaryDim, s.Layout, s.Base, sc)
}
