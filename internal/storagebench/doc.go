// Package storagebench measures the 16-bit storage path of rope (issue 14)
// against the float32 one in one process: Apply of llama31_8b (float32,
// generated/llama31_8b) and of the same spec with bf16 storage
// (internal/goldens/grope_llama31_bf16) on 64 MiB of float32-equivalent
// data, with the fastest variant each package dispatches to. It holds
// benchmarks only.
package storagebench
