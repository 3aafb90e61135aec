package bias

import (
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/spec"
)

// The bias family's two members differ only in where a head's bias comes
// from: alibi computes −slope·|p−q| (and may be causal), rpe_bias reads a
// learned [heads][buckets] table through the bucket map. The rest of the
// family reads these two flags.

// isRPE reports whether s is rpe_bias: the exported functions take a
// learned table.
func isRPE(s *spec.Spec) bool { return s.Encoding == spec.RPEBias }

// isCausal reports whether queries are masked from later keys (causal alibi).
func isCausal(s *spec.Spec) bool { return s.Encoding == spec.ALiBi && s.Causal }

// Backends are the bias family's backends (both members): assembly and CUDA.
var Backends = family.Backends{Assembly: true, CUDA: true}
