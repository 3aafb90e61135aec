package plot

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// Render draws the picture of the given kind for s: every kind but
// KindError, whose measurements come from running a generated kernel (see
// RenderError). The kind must apply to the spec's encoding (CheckKind).
func Render(s *spec.Spec, kind string) (*Figure, error) {
	if err := CheckKind(s, kind); err != nil {
		return nil, err
	}
	switch kind {
	case KindSpectrum:
		return spectrumFigure(s)
	case KindDecay:
		return decayFigure(s)
	case KindBias:
		return alibiFigure(s)
	case KindBuckets:
		return bucketFigure(s), nil
	case KindBucketCurve:
		return bucketCurveFigure(s)
	case KindHeatmap:
		return heatmapFigure(s), nil
	case KindComponents:
		return componentsFigure(s)
	case KindError:
		return nil, fmt.Errorf("kind %q needs measurements of a generated kernel: use RenderError", kind)
	}
	return nil, fmt.Errorf("kind %q has no renderer", kind)
}
