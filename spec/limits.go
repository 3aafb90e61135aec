package spec

// Size limits of a spec. Each keeps a derived size inside int32, inside
// memory, inside the generator's time budget or inside what a CUDA kernel
// can hold; docs/spec.md ("Limits") states them with their reasons. With
// them every accepted spec generates and verifies in well under a minute and
// 2 GiB.
const (
	// MaxTableBytes bounds any float32 table a generated package builds or
	// its verification allocates: RoPE cos/sin rows, the sinusoidal,
	// algebraic and binary encodings (max_len × d_model × 4 bytes; their
	// packages cache at most 64 MiB of it, float64 values for algebraic,
	// and compute the other rows exactly), the caller's learned and mixture
	// tables, the rpe_bias [heads][buckets] table (rpe_full's tables have
	// the lower MaxRPEFullTableBytes).
	MaxTableBytes = 256 << 20
	// MaxRPEFullTableBytes bounds each of rpe_full's [2·r_max−1][head_dim]
	// tables a^K and a^V: verification draws both, runs every variant on
	// them natively, under qemu and through CUDA host emulation, which took
	// minutes and over 2 GiB at 256 MiB per table. Shaw et al.'s models use
	// r_max 16 at head_dim 64 (8 KiB).
	MaxRPEFullTableBytes = 64 << 20
	// MaxDim bounds d_model and the head_dim of rpe_full.
	MaxDim = 1 << 16
	// MaxRoPEHeadDim bounds rope's head_dim: the AVX2/AVX-512 kernels are
	// unrolled over the rotary pairs, and their register allocation grows
	// faster than linearly (about 4 s at 1024, 24 s at 2048).
	MaxRoPEHeadDim = 1024
	// MaxAttentionHeadDim bounds the optional head_dim of alibi and
	// rpe_bias (the head size of their fused attention form): rope's bound,
	// since the attention kernels loop over the head in the same way. Real
	// ALiBi and T5 models use 64 to 128.
	MaxAttentionHeadDim = MaxRoPEHeadDim
	// CUDAConstBytes is CUDA's constant memory per module (64 KiB): the
	// tables the .cu file keeps there (RoPE frequencies, ALiBi slopes, the
	// rpe_bias bucket map, the sinusoidal, algebraic and xl divisors) must
	// fit in it together.
	CUDAConstBytes = 64 << 10
	// CUDASharedBytes is the static shared memory one CUDA block may
	// declare (48 KiB); the RoPE kernel stages 16 bytes per rotary pair.
	CUDASharedBytes = 48 << 10
	// MaxHeads bounds heads: verification runs every head under qemu for
	// NEON and CUDA host emulation (16384 heads took over 6 minutes, 1024
	// over 4 on a shared machine), and the ALiBi slopes are
	// 4-byte floats in CUDA constant memory (at most 16384). Real models
	// have at most 128 (T5-11B).
	MaxHeads = 256
	// MaxPositionLimit bounds max_position, original_max_position and
	// max_len: positions are int32.
	MaxPositionLimit = 1<<31 - 1
	// MaxBucketSpan bounds the largest distance with its own entry in the
	// bucket map (r_max−1, or T5's max_distance): the map has 2·span+1
	// 4-byte entries, kept in CUDA constant memory and as a Go array.
	MaxBucketSpan = CUDAConstBytes/8 - 1
	// MaxRMax bounds r_max of rpe_bias and rpe_full (r_max−1 ≤ MaxBucketSpan).
	MaxRMax = MaxBucketSpan + 1
	// MaxBucketNum bounds buckets.num.
	MaxBucketNum = 1 << 20
	// MaxNameLen bounds the length of name.
	MaxNameLen = 64
)

// Ranges of derived constants. Kernels store frequencies, slopes and the
// attention factor as float32 (the CUDA kernels compute in float32), so each
// must be a normal float32; RoPE frequencies also bound the angle error.
const (
	// MinNormal32 is the least normal float32, 2^−126: a smaller derived
	// constant would be flushed to zero (CUDA's -ftz) or lose precision.
	MinNormal32 = 0x1p-126
	// MaxFrequency bounds every RoPE frequency ω (radians per token), baked
	// or chosen at run time. The angle p·ω is formed in float64; at
	// |p| < 2^31 its rounding error, at most 2^31·ω·2^−53, stays below the
	// verified 1e-6 only while ω ≤ 4. Unscaled frequencies are ≤ 1, so
	// this only limits scaling factors below 1/4.
	MaxFrequency = 4
	// MinAttention and MaxAttention bound a RoPE attention factor A (YaRN,
	// LongRoPE): it multiplies cos and sin, so A·x must stay a normal
	// float32 for every input 2^−62 ≤ |x| ≤ 2^63. Real models use 1 to 2.
	MinAttention = 0x1p-64
	MaxAttention = 0x1p64
	// MaxSlope bounds an ALiBi slope: the bias −slope·|p−q| at a distance
	// up to 2^31 must stay a finite float32 (2^127/2^31).
	MaxSlope = 0x1p96
	// MaxMaxBias bounds max_bias: the smallest slope of the ALiBi rule is
	// 2^−max_bias, which must be a normal float32.
	MaxMaxBias = 126
)
