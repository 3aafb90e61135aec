package importer

import (
	"fmt"

	"github.com/posenc/posenc/spec"
)

// Bounds on what the importers read (docs/spec.md, "Input files"). Each is
// checked before anything in proportion to the number is allocated, and
// each is far above what real models need; spec.Parse then applies the
// spec's own limits to the values a spec keeps.
const (
	// maxInputBytes bounds a config.json and the bytes read of a GGUF
	// header (spec.MaxInputBytes, 64 MiB).
	maxInputBytes = spec.MaxInputBytes
	// maxJSONValues bounds the values of a config.json, counted before it
	// is decoded (each costs some tens of bytes decoded): real configs hold
	// some hundreds.
	maxJSONValues = 1 << 20
	// maxLayers bounds num_hidden_layers and the per-layer lists
	// layer_types and no_rope_layers: Llama 3.1 405B has 126 layers,
	// DeepSeek V3 61, Gemma 3 27B 62.
	maxLayers = 1024
	// maxHeads bounds attention head counts (num_attention_heads and its
	// aliases, the vision tower's num_heads, GGUF attention.head_count):
	// real models have at most 128. spec.MaxHeads bounds the specs that
	// keep a head count (alibi, rpe_bias).
	maxHeads = 1 << 16
	// maxFactors bounds the longrope short_factor and long_factor lists:
	// rotary_dim/2 ≤ spec.MaxRoPEHeadDim/2 entries.
	maxFactors = spec.MaxRoPEHeadDim / 2
	// maxSections bounds the entries of mrope_section.
	maxSections = spec.MaxMRoPEAxes
)

// tooLarge is the error for an input of n bytes over maxInputBytes.
func tooLarge(source string, n int) error {
	return &Error{Source: source, Msg: fmt.Sprintf("input of %d bytes is larger than the %d MiB limit", n, maxInputBytes>>20)}
}

// list reads the list at key, of at most limit entries (what says what
// they are, for the error).
func (o obj) list(key, want string, limit int, what string) ([]any, error) {
	l, ok := o.m[key].([]any)
	if !ok {
		return nil, o.errf(key, "must be a list of %s, got %s", want, jsonKind(o.m[key]))
	}
	if len(l) > limit {
		return nil, o.errf(key, "has %d entries, more than the %d allowed (%s)", len(l), limit, what)
	}
	return l, nil
}
