package plot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
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

// encodingPlots is everything the plot files need to know about one
// encoding, decided here: this file is the only one that tells encodings
// apart, and the others draw what its entry hands them.
type encodingPlots struct {
	// kinds lists the encoding's kinds, the default first.
	kinds []string
	// bucket maps rel = query position − key position to the table column
	// (KindBuckets, KindBucketCurve).
	bucket func(s *spec.Spec, rel int) int
	// rows returns the values of the KindHeatmap and KindComponents
	// pictures, one row of width dims per position (or distance) p in [0, n).
	rows func(s *spec.Spec, n int) (rows [][]float64, dims int)
	// subject says what those pictures show (after "<name>: "); position
	// names their p.
	subject  string
	position string
}

// absoluteEntry is the entry of an absolute encoding whose pictures show
// verify.AbsoluteEncoding.
func absoluteEntry(subject string) encodingPlots {
	return encodingPlots{
		kinds: []string{KindHeatmap, KindComponents},
		rows:  absoluteRows, subject: subject, position: "position",
	}
}

// plotsOf holds the entry of every encoding that has a picture.
var plotsOf = map[string]encodingPlots{
	spec.RoPE:       {kinds: []string{KindSpectrum, KindDecay, KindError}},
	spec.ALiBi:      {kinds: []string{KindBias}},
	spec.RPEBias:    {kinds: []string{KindBuckets, KindBucketCurve}, bucket: verify.RPEBucket},
	spec.RPEFull:    {kinds: []string{KindBuckets, KindBucketCurve}, bucket: verify.RPEFullRow},
	spec.Sinusoidal: absoluteEntry("sinusoidal positional encoding"),
	spec.Algebraic:  absoluteEntry("algebraic positional encoding"),
	spec.Binary:     absoluteEntry("binary positional encoding"),
	spec.Mixture:    absoluteEntry("mixture, its sinusoidal half (α and the table are run-time inputs)"),
	spec.XL: {
		kinds: []string{KindHeatmap, KindComponents},
		rows:  xlRows, subject: "Transformer-XL relative sinusoid R (before projection)", position: "distance",
	},
}

// plotsFor returns the entry of the spec's encoding; the zero entry, with
// no kinds, for one that has no picture.
func plotsFor(s *spec.Spec) encodingPlots { return plotsOf[s.Encoding] }

// AllKinds returns every kind name, sorted.
func AllKinds() []string {
	var all []string
	for _, e := range plotsOf {
		for _, k := range e.kinds {
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
	return slices.Clone(plotsOf[encoding].kinds)
}

// CheckKind reports whether kind applies to the spec's encoding, with an
// error that lists the kinds that do.
func CheckKind(s *spec.Spec, kind string) error {
	if !slices.Contains(AllKinds(), kind) {
		return fmt.Errorf("unknown kind %q (kinds: %s)", kind, strings.Join(AllKinds(), ", "))
	}
	ks := plotsFor(s).kinds
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
	ks := plotsFor(s).kinds
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
