package plot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/posenc/posenc/spec"
)

// Kind names, as given to `posenc plot -kind`.
const (
	KindSpectrum    = "spectrum"    // rope: θ_i per pair, unscaled and scaled
	KindDecay       = "decay"       // rope: RoFormer's long-term decay bound
	KindError       = "error"       // rope: kernel error against position
	KindBias        = "bias"        // alibi: bias against distance per head
	KindBuckets     = "buckets"     // rpe_bias, rpe_full: bucket of (query, key)
	KindBucketCurve = "bucketcurve" // rpe_bias, rpe_full: bucket against relative position
	KindHeatmap     = "heatmap"     // absolute encodings, xl: [position][dim]
	KindComponents  = "components"  // absolute encodings: a few dims against position
)

// kindsOf lists the kinds of each encoding, the default first.
var kindsOf = map[string][]string{
	spec.RoPE:       {KindSpectrum, KindDecay, KindError},
	spec.ALiBi:      {KindBias},
	spec.RPEBias:    {KindBuckets, KindBucketCurve},
	spec.RPEFull:    {KindBuckets, KindBucketCurve},
	spec.Sinusoidal: {KindHeatmap, KindComponents},
	spec.Algebraic:  {KindHeatmap, KindComponents},
	spec.Binary:     {KindHeatmap, KindComponents},
	spec.Mixture:    {KindHeatmap, KindComponents},
	spec.XL:         {KindHeatmap, KindComponents},
}

// AllKinds returns every kind name, sorted.
func AllKinds() []string {
	var all []string
	for _, ks := range kindsOf {
		for _, k := range ks {
			if !slices.Contains(all, k) {
				all = append(all, k)
			}
		}
	}
	slices.Sort(all)
	return all
}

// Kinds returns the kinds that apply to an encoding, the default first
// (none for learned).
func Kinds(encoding string) []string {
	return slices.Clone(kindsOf[encoding])
}

// CheckKind reports whether kind applies to the spec's encoding, with an
// error that lists the kinds that do.
func CheckKind(s *spec.Spec, kind string) error {
	if !slices.Contains(AllKinds(), kind) {
		return fmt.Errorf("unknown kind %q (kinds: %s)", kind, strings.Join(AllKinds(), ", "))
	}
	ks := kindsOf[s.Encoding]
	if len(ks) == 0 {
		return noKinds(s)
	}
	if !slices.Contains(ks, kind) {
		return fmt.Errorf("kind %q does not apply to encoding %s (its kinds: %s)", kind, s.Encoding, strings.Join(ks, ", "))
	}
	return nil
}

// DefaultKind returns the first kind of the spec's encoding.
func DefaultKind(s *spec.Spec) (string, error) {
	ks := kindsOf[s.Encoding]
	if len(ks) == 0 {
		return "", noKinds(s)
	}
	return ks[0], nil
}

func noKinds(s *spec.Spec) error {
	if s.Encoding == spec.Learned {
		return fmt.Errorf("encoding learned has nothing to plot: its table is a run-time argument")
	}
	return fmt.Errorf("encoding %s has nothing to plot", s.Encoding)
}
