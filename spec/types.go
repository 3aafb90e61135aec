// Package spec defines posenc's declarative description of a positional
// encoding: the typed Spec, its strict YAML decoding with line-numbered
// errors, defaults and validation, and the embedded model zoo.
package spec

// Encoding names, as written in the `encoding` field.
const (
	RoPE       = "rope"
	ALiBi      = "alibi"
	RPEBias    = "rpe_bias"
	Sinusoidal = "sinusoidal"
	Learned    = "learned"
	Algebraic  = "algebraic"
	Binary     = "binary"
	Mixture    = "mixture"
	RPEFull    = "rpe_full"
	XL         = "xl"
)

// Target names, as written in the `targets` field.
const (
	TargetGo     = "go"
	TargetAVX2   = "avx2"
	TargetAVX512 = "avx512"
	TargetNEON   = "neon"
	TargetCUDA   = "cuda"
)

// AllTargets is the default target list, in dispatch-preference order
// (later entries are preferred when the CPU has them).
var AllTargets = []string{TargetGo, TargetAVX2, TargetAVX512, TargetNEON, TargetCUDA}

// RoPE layouts.
const (
	LayoutHalf        = "half"        // NeoX / rotate_half: pairs (i, i+R/2)
	LayoutInterleaved = "interleaved" // GPT-J / RoFormer: pairs (2i, 2i+1)
)

// RoPE scaling types (Hugging Face modeling_rope_utils rope_type names,
// except ntk, which is the static NTK-aware base change).
const (
	ScaleLinear   = "linear"
	ScaleNTK      = "ntk"
	ScaleDynamic  = "dynamic"
	ScaleYaRN     = "yarn"
	ScaleLlama3   = "llama3"
	ScaleLongRoPE = "longrope"
)

// Spec is one positional encoding, decoded from one YAML file. After Parse
// every defaulted field holds its effective value, so consumers never
// re-apply defaults. Fields that do not belong to Encoding are zero.
type Spec struct {
	// File is where the spec came from (a path, or "zoo/NAME.yaml"); it is
	// not a YAML key. It appears in error messages and generated headers.
	File string `yaml:"-"`
	// Source is the spec's YAML text exactly as read; it is not a YAML key.
	Source string `yaml:"-"`

	Name     string   // Go package name: [a-z][a-z0-9_]*
	Encoding string   // one of the Encoding constants
	Targets  []string // default AllTargets
	DType    string   // "f32" (default), "f16", "bf16"

	// HeadDim is the per-head dimension of q and k. rope and xl: even,
	// required; rpe_full: ≥ 1, required; alibi and rpe_bias: optional, the
	// head size of the fused attention form (1 ≤ HeadDim ≤
	// MaxAttentionHeadDim, any parity), 0 when absent (no attention form).
	// Absolute encodings: always 0.
	HeadDim int

	// RoPE
	RotaryDim   int     // rope: even, 2 ≤ RotaryDim ≤ HeadDim; default HeadDim
	Layout      string  // rope: LayoutHalf | LayoutInterleaved; required
	Base        float64 // rope: rope_theta, default 10000; sinusoidal, xl: default 10000; > 1
	MaxPosition int     // rope: default 4096; positions below it may come from a table
	Scaling     *Scaling

	// Multimodal RoPE (spec/mrope.go): rotary pairs per position axis,
	// Qwen3-VL's interleaved sections, and the frequency assignment.
	MRoPESection     []int  // rope: mrope_section; sums to RotaryDim/2
	MRoPEInterleaved bool   // rope: mrope_interleaved (Qwen3-VL)
	MRoPEFreqs       string // rope: mrope_freqs, default MRoPEFreqsShared with mrope_section

	// AttnTemperature is Llama 4's query temperature of the NoPE layers
	// (spec/attntemp.go, key attn_temperature); nil when not asked for.
	AttnTemperature *AttnTemperature

	// ALiBi, rpe_bias
	Heads   int       // ≥ 1
	MaxBias float64   // alibi: default 8
	Slopes  []float64 // alibi: explicit slopes (len == Heads) instead of MaxBias
	Causal  bool      // alibi: default true

	// rpe_bias, rpe_full
	RMax    int      // clamp rule: 2·RMax−1 buckets; ≥ 1
	Buckets *Buckets // rpe_bias: T5 rule (exclusive with RMax)

	// Absolute encodings
	DModel int // sinusoidal, algebraic, binary, learned, mixture: > 0
	MaxLen int // sinusoidal (table size, default 4096), algebraic (formula constant, ≥ 2), binary (bit count source), learned/mixture (table rows)
}

// Scaling is RoPE's optional context-extension rule. Zero-valued optional
// fields have been replaced by their defaults after Parse, except Mscale,
// MscaleAllDim and AttentionFactor, whose absence is meaningful (HasX).
type Scaling struct {
	Type                string    // one of the Scale constants
	Factor              float64   // > 0 (all types except longrope may not omit it)
	OriginalMaxPosition int       // dynamic, yarn, llama3, longrope
	LowFreqFactor       float64   // llama3
	HighFreqFactor      float64   // llama3
	BetaFast            float64   // yarn, default 32
	BetaSlow            float64   // yarn, default 1
	Mscale              float64   // yarn (DeepSeek-style); valid when HasMscale
	MscaleAllDim        float64   // yarn; valid when HasMscaleAllDim
	AttentionFactor     float64   // yarn, longrope; valid when HasAttentionFactor
	Truncate            bool      // yarn, default true
	ShortFactor         []float64 // longrope, RotaryDim/2 entries
	LongFactor          []float64 // longrope, RotaryDim/2 entries

	HasMscale          bool
	HasMscaleAllDim    bool
	HasAttentionFactor bool
}

// Buckets is the T5 relative-position bucketing rule.
type Buckets struct {
	Num           int  // number of buckets, ≥ 2 (≥ 4 when bidirectional)
	MaxDistance   int  // ≥ 1
	Bidirectional bool // default true
}

// NumBuckets is the number of learned rows per head of an rpe_bias or
// rpe_full table: 2·RMax−1 for the clamp rule, Buckets.Num for T5.
func (s *Spec) NumBuckets() int {
	if s.Buckets != nil {
		return s.Buckets.Num
	}
	return 2*s.RMax - 1
}

// HasTarget reports whether t is among the spec's targets.
func (s *Spec) HasTarget(t string) bool {
	for _, x := range s.Targets {
		if x == t {
			return true
		}
	}
	return false
}

// RotaryDimOK reports whether rotary_dim r can rotate heads of headDim
// dims: r pairs up, so it must be even, with 2 ≤ r ≤ headDim. It is the one
// statement of the rule; the validator and the generator both ask it.
func RotaryDimOK(r, headDim int) bool {
	return r >= 2 && r%2 == 0 && r <= headDim
}
