package kernelfuzz

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/posenc/posenc/generated/bert_base"
	"github.com/posenc/posenc/generated/bloom_176b"
	"github.com/posenc/posenc/generated/gptj_6b"
	"github.com/posenc/posenc/generated/llama2_7b"
	"github.com/posenc/posenc/generated/qwen25_7b_yarn"
	"github.com/posenc/posenc/generated/shaw2018_base"
	"github.com/posenc/posenc/generated/t5_base"
	"github.com/posenc/posenc/generated/transformer_base"
	"github.com/posenc/posenc/generated/transformer_xl_base"
	"github.com/posenc/posenc/spec"
)

// registry is the variant registry every generated package exports.
type registry struct {
	variants  func() []string
	available func(string) bool
	use       func(string) func()
	active    func() string
}

// each calls fn once per variant the CPU can run, with that variant active,
// and restores the previous choice afterwards. It fails t when a package
// lists no runnable variant ("go" is always runnable) or when UseVariant does
// not switch ActiveVariant.
func (r registry) each(t testing.TB, fn func(variant string)) {
	t.Helper()
	ran := 0
	for _, v := range r.variants() {
		if !r.available(v) {
			continue
		}
		restore := r.use(v)
		if got := r.active(); got != v {
			restore()
			t.Fatalf("UseVariant(%q): ActiveVariant() = %q", v, got)
		}
		fn(v)
		restore()
		ran++
	}
	if ran == 0 {
		t.Fatal("no runnable variant")
	}
}

// ropePkg adapts a generated rope package.
type ropePkg struct {
	name                 string
	headDim, maxPosition int
	attention            float64
	apply, inverse       func(x []float32, pos []int32, heads int)
	applyQK              func(q, k []float32, pos []int32, qHeads, kHeads int)
	applyQKStrided       func(qkv []float32, pos []int32, qHeads, kHeads, stride int)
	applyTo              func(dst, src []float32, pos []int32, heads int)
	reg                  registry
}

// biasPkg adapts a generated alibi or rpe_bias package; table is nil for
// alibi (the adapters drop it).
type biasPkg struct {
	name    string
	heads   int
	buckets int // rpe_bias only
	add     func(scores, table []float32, lq, lk, qOffset int)
	softmax func(scores, table []float32, lq, lk, qOffset int, scale float32)
	bias    func(dst, table []float32, lq, lk, qOffset int)
	// The position forms (heads [h0, h0+nh), query i at qpos[i], key j at
	// kpos[j], < 0: padding).
	softmaxPos func(scores, table []float32, qpos, kpos []int32, h0, nh int, scale float32)
	addPos     func(scores, table []float32, qpos, kpos []int32, h0, nh int)
	biasPos    func(dst, table []float32, qpos, kpos []int32, h0, nh int)
	reg        registry
}

// absPkg adapts a generated sinusoidal (table == nil) or learned package.
type absPkg struct {
	name    string
	dModel  int
	maxLen  int // learned: rows of the table
	learned bool
	add     func(x, table []float32, pos []int32)
	encode  func(dst []float32, pos int) // sinusoidal only
	reg     registry
}

// rpeFullPkg adapts a generated rpe_full package (Shaw et al. 2018).
type rpeFullPkg struct {
	name    string
	headDim int
	buckets int // rows of aK and aV: 2·RMax−1
	span    int // BucketSpan: RMax−1
	scores  func(dst, q, k, aK []float32, lq, lk, qOffset int)
	output  func(dst, weights, v, aV []float32, lq, lk, qOffset int)
	reg     registry
}

// xlPkg adapts a generated xl package (Transformer-XL).
type xlPkg struct {
	name     string
	headDim  int
	scores   func(dst, q, k, r, u, v []float32, lq, lk, qOffset int)
	relative func(dst []float32, n int)
	relRows  func(lq, lk int) int
	reg      registry
}

var ropePkgs = []ropePkg{
	{
		name: "llama2_7b", headDim: llama2_7b.HeadDim, maxPosition: llama2_7b.MaxPosition,
		attention: llama2_7b.AttentionFactor,
		apply:     llama2_7b.Apply, inverse: llama2_7b.Inverse, applyQK: llama2_7b.ApplyQK,
		applyQKStrided: llama2_7b.ApplyQKStrided, applyTo: llama2_7b.ApplyTo,
		reg: registry{llama2_7b.Variants, llama2_7b.VariantAvailable, llama2_7b.UseVariant, llama2_7b.ActiveVariant},
	},
	{
		name: "gptj_6b", headDim: gptj_6b.HeadDim, maxPosition: gptj_6b.MaxPosition,
		attention: gptj_6b.AttentionFactor,
		apply:     gptj_6b.Apply, inverse: gptj_6b.Inverse, applyQK: gptj_6b.ApplyQK,
		applyQKStrided: gptj_6b.ApplyQKStrided, applyTo: gptj_6b.ApplyTo,
		reg: registry{gptj_6b.Variants, gptj_6b.VariantAvailable, gptj_6b.UseVariant, gptj_6b.ActiveVariant},
	},
	{
		name: "qwen25_7b_yarn", headDim: qwen25_7b_yarn.HeadDim, maxPosition: qwen25_7b_yarn.MaxPosition,
		attention: qwen25_7b_yarn.AttentionFactor,
		apply:     qwen25_7b_yarn.Apply, inverse: qwen25_7b_yarn.Inverse, applyQK: qwen25_7b_yarn.ApplyQK,
		applyQKStrided: qwen25_7b_yarn.ApplyQKStrided, applyTo: qwen25_7b_yarn.ApplyTo,
		reg: registry{qwen25_7b_yarn.Variants, qwen25_7b_yarn.VariantAvailable, qwen25_7b_yarn.UseVariant, qwen25_7b_yarn.ActiveVariant},
	},
}

var biasPkgs = []biasPkg{
	{
		name: "bloom_176b", heads: bloom_176b.Heads,
		add:     func(sc, _ []float32, lq, lk, qo int) { bloom_176b.AddBias(sc, lq, lk, qo) },
		softmax: func(sc, _ []float32, lq, lk, qo int, scale float32) { bloom_176b.Softmax(sc, lq, lk, qo, scale) },
		bias:    func(dst, _ []float32, lq, lk, qo int) { bloom_176b.Bias(dst, lq, lk, qo) },
		softmaxPos: func(sc, _ []float32, q, k []int32, h0, nh int, scale float32) {
			bloom_176b.SoftmaxPos(sc, q, k, h0, nh, scale)
		},
		addPos:  func(sc, _ []float32, q, k []int32, h0, nh int) { bloom_176b.AddBiasPos(sc, q, k, h0, nh) },
		biasPos: func(d, _ []float32, q, k []int32, h0, nh int) { bloom_176b.BiasPos(d, q, k, h0, nh) },
		reg:     registry{bloom_176b.Variants, bloom_176b.VariantAvailable, bloom_176b.UseVariant, bloom_176b.ActiveVariant},
	},
	{
		name: "t5_base", heads: t5_base.Heads, buckets: t5_base.Buckets,
		add: t5_base.AddBias, softmax: t5_base.Softmax, bias: t5_base.Bias,
		softmaxPos: t5_base.SoftmaxPos, addPos: t5_base.AddBiasPos, biasPos: t5_base.BiasPos,
		reg: registry{t5_base.Variants, t5_base.VariantAvailable, t5_base.UseVariant, t5_base.ActiveVariant},
	},
}

var absPkgs = []absPkg{
	{
		name: "transformer_base", dModel: transformer_base.DModel, maxLen: transformer_base.MaxLen,
		add:    func(x, _ []float32, pos []int32) { transformer_base.Add(x, pos) },
		encode: transformer_base.Encode,
		reg:    registry{transformer_base.Variants, transformer_base.VariantAvailable, transformer_base.UseVariant, transformer_base.ActiveVariant},
	},
	{
		name: "bert_base", dModel: bert_base.DModel, maxLen: bert_base.MaxLen, learned: true,
		add: bert_base.Add,
		reg: registry{bert_base.Variants, bert_base.VariantAvailable, bert_base.UseVariant, bert_base.ActiveVariant},
	},
}

var rpeFullPkgs = []rpeFullPkg{
	{
		name: "shaw2018_base", headDim: shaw2018_base.HeadDim,
		buckets: shaw2018_base.Buckets, span: shaw2018_base.BucketSpan,
		scores: shaw2018_base.Scores, output: shaw2018_base.Output,
		reg: registry{shaw2018_base.Variants, shaw2018_base.VariantAvailable, shaw2018_base.UseVariant, shaw2018_base.ActiveVariant},
	},
}

var xlPkgs = []xlPkg{
	{
		name: "transformer_xl_base", headDim: transformer_xl_base.HeadDim,
		scores: transformer_xl_base.Scores, relative: transformer_xl_base.Relative,
		relRows: transformer_xl_base.RelRows,
		reg:     registry{transformer_xl_base.Variants, transformer_xl_base.VariantAvailable, transformer_xl_base.UseVariant, transformer_xl_base.ActiveVariant},
	},
}

// zooSpec returns the parsed zoo spec of a package, the input of the
// reference.
func zooSpec(t testing.TB, name string) *spec.Spec {
	t.Helper()
	s, err := spec.ZooSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// specials are the special float32 values the fuzz targets plant in their
// inputs: signed zeros, subnormals, the normal extremes, infinities and NaNs
// (including one with a payload and the sign bit set).
var specials = []float32{
	0,
	float32(math.Copysign(0, -1)),
	math.SmallestNonzeroFloat32,
	-math.SmallestNonzeroFloat32,
	math.Float32frombits(0x007fffff), // largest subnormal
	-math.Float32frombits(0x00400000),
	math.Float32frombits(0x00800000), // smallest normal
	math.MaxFloat32,
	-math.MaxFloat32,
	1e38,
	float32(math.Inf(1)),
	float32(math.Inf(-1)),
	float32(math.NaN()),
	math.Float32frombits(0xffc01234), // negative quiet NaN with a payload
	1,
	-1e-30,
}

// plant overwrites elements of x with special values: every 3 bytes of
// recipe are an index (2 bytes, modulo len(x)) and a special (1 byte,
// modulo len(specials)); at most 64 values are planted.
func plant(x []float32, recipe []byte) {
	if len(x) == 0 {
		return
	}
	for n := 0; n+3 <= len(recipe) && n < 3*64; n += 3 {
		i := (int(recipe[n])<<8 | int(recipe[n+1])) % len(x)
		x[i] = specials[int(recipe[n+2])%len(specials)]
	}
}

// randomValues returns n normal values with occasional large, tiny and zero
// ones, the distribution of the verify harness.
func randomValues(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		x := r.NormFloat64()
		switch u := r.IntN(100); {
		case u < 4:
			x *= 1e4
		case u < 6:
			x *= 1e-4
		case u < 7:
			x = 0
		}
		v[i] = float32(x)
	}
	return v
}

// uniform returns n values uniform in [−a, a].
func uniform(r *rand.Rand, n int, a float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(a * (2*r.Float64() - 1))
	}
	return v
}

// count maps a fuzzed uint16 to a count in [0, 4097]: u mod 17 below
// 0xFC00, and 17…4097 spread over the top 1024 values (so one input in 64 is
// large and 4097 itself is reachable, at u = 0xFFFF).
func count(u uint16) int {
	if u < 0xFC00 {
		return int(u) % 17
	}
	return 17 + int(u-0xFC00)*4080/1023
}

// counts maps two fuzzed uint16 to lq, lk with count, then shrinks the
// larger of the two until lq·lk ≤ cells.
func counts(ulq, ulk uint16, cells int) (lq, lk int) {
	lq, lk = count(ulq), count(ulk)
	for lq*lk > cells {
		if lq >= lk {
			lq = cells / lk
		} else {
			lk = cells / lq
		}
	}
	return lq, lk
}

// keepNegative reports whether a fuzzed qOffset stays negative (one
// negative value in 16), so the call must panic; the others are mapped to
// non-negative offsets.
func keepNegative(qOffset int64) bool { return qOffset < 0 && qOffset&0xf == 0xf }

// sameBits reports whether a and b hold the same bits.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// catch runs f and returns the value it panicked with (nil when it returned).
func catch(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// ftoa formats v for failure messages.
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
