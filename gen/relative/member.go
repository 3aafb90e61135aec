package relative

import (
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// isXL reports whether s is xl (Transformer-XL) rather than rpe_full; the
// family's two members share only the per-head layouts, so each other file
// is one member's or reads this.
func isXL(s *spec.Spec) bool { return s.Encoding == spec.XL }

// Backends are the relative family's backends (both members): assembly and CUDA.
var Backends = family.Backends{Assembly: true, CUDA: true}
