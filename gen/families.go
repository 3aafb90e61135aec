package gen

import (
	"fmt"

	"github.com/posenc/posenc/gen/absolute"
	"github.com/posenc/posenc/gen/bias"
	"github.com/posenc/posenc/gen/family"
	"github.com/posenc/posenc/gen/relative"
	"github.com/posenc/posenc/gen/rope"
	"github.com/posenc/posenc/spec"
)

// families is the table of encoding families: the one place outside spec/,
// verify/ and importer/ that tells encodings apart by name.
var families = map[string]family.Family{
	spec.RoPE:       rope.Family,
	spec.ALiBi:      bias.Family,
	spec.RPEBias:    bias.Family,
	spec.Sinusoidal: absolute.Family,
	spec.Learned:    absolute.Family,
	spec.Algebraic:  absolute.Family,
	spec.Binary:     absolute.Family,
	spec.Mixture:    absolute.Family,
	spec.RPEFull:    relative.Family,
	spec.XL:         relative.Family,
}

// Lookup returns the family of an encoding.
func Lookup(encoding string) (family.Family, bool) {
	f, ok := families[encoding]
	return f, ok
}

// Backends returns the generated backends of an encoding (none for an
// encoding the generator does not support).
func Backends(encoding string) family.Backends {
	f, ok := families[encoding]
	if !ok {
		return family.Backends{}
	}
	return f.Backends(encoding)
}

// Derive computes the constants of a parsed (defaulted and validated) spec
// through its family.
func Derive(s *spec.Spec) (family.Derived, error) {
	f, ok := families[s.Encoding]
	if !ok {
		return nil, fmt.Errorf("%s: encoding %q is not supported by the generator yet", s.File, s.Encoding)
	}
	d, err := f.Derive(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	return d, nil
}
