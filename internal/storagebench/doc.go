// Package storagebench measures the 16-bit storage paths of rope against
// the float32 one in one process: Apply of llama31_8b (float32,
// generated/llama31_8b) and of the same spec with bf16 and f16 storage
// (internal/goldens/grope_llama31_bf16 and grope_llama31_f16) on 64 MiB of
// float32-equivalent data, for every variant both packages can run. It
// holds benchmarks only.
package storagebench
