// posenc_shapes.cu: times one generated posenc .cu on the shapes that
// `posenc bench -gpu` does not cover (decode, 1024 tokens, GQA, long
// softmax rows), against a device-to-device copy of the same bytes, with
// the tensors cache-hot (one buffer reused) and cache-cold (rotating over
// buffers totalling 3x the L2), and checks the >2^31-element index math by
// comparing rows of one huge launch bit for bit with small launches.
//
// Built once per spec by tools/gpu/gpu_check.sh:
//   nvcc -O3 -std=c++17 -arch=sm_90 -DPSPEC=<name> -DPKIND=<1 rope|2 alibi|3 rpe_bias>
//        -DPDTYPE=<f32|f16|bf16> [-DPMAXPOS] -DPCU='"<dir>/<name>.cu"' -o bin posenc_shapes.cu
// (PMAXPOS for specs whose launchers take max_pos, e.g. phi35_mini), or,
// for a smoke test without a GPU, with `g++ -x c++ -std=c++20 -O1
// -fno-strict-aliasing -I verify/cudahost` against the emulation header
// posenc_cuda_host.h: then it runs tiny shapes once.
// Usage: bin bench | bin bench-graph | bin big | bin sanitize | bin smoke | bin smoke-big
// (bench-graph: bench's rows timed as CUDA-graph replays of the timed
// calls, kernel and copy alike, on a stream of its own, as the peers'
// figures of Liger-Kernel were; without the host's launch cost per call)
#if defined(__CUDACC__) || defined(__CUDA__)
#define PSH_GPU 1
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#else
#include "posenc_cuda_host.h"
#endif
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <algorithm>
#include <string>
#include <vector>

#include PCU

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define PFN(s) CAT(CAT(CAT(posenc_, PSPEC), _), s)
#define STR_(x) #x
#define STR(x) STR_(x)
typedef CAT(CAT(posenc_, PSPEC), _t) T;

#ifdef PSH_GPU
static const bool kEmulated = false;
static size_t l2_bytes() {
	int v = 0;
	cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0);
	return (size_t)v;
}
#else
static const bool kEmulated = true;
static cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t = 0) {
	return cudaMemcpy(d, s, n, k);
}
static cudaError_t cudaMemGetInfo(size_t *f, size_t *t) {
	*f = *t = (size_t)1 << 30;
	return cudaSuccess;
}
static size_t l2_bytes() { return (size_t)1 << 16; }
#endif

static void check(cudaError_t e, const char *what) {
	if (e != cudaSuccess) {
		std::printf("ERROR %s: %s (cudaError_t %d)\n", what, cudaGetErrorString(e), (int)e);
		std::fflush(stdout);
		std::exit(1);
	}
}

// ---- device helpers -------------------------------------------------------

__device__ __forceinline__ void put(float *p, float v) { *p = v; }
__device__ __forceinline__ void put(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void put(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

// fill_kernel writes a hash of the global index, scaled to [-scale, scale).
__global__ void fill_kernel(T *x, size_t n, unsigned seed, float scale) {
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i < n; i += stride) {
		unsigned h = ((unsigned)i ^ (unsigned)(i >> 32)) * 2654435761u ^ seed;
		h ^= h >> 16;
		h *= 2246822519u;
		h ^= h >> 13;
		put(x + i, scale * ((float)(h & 0xffffffu) * (1.0f / 8388608.0f) - 1.0f));
	}
}

__global__ void iota_kernel(int *p, int n, int start) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] = start + i;
}

static void fill(T *x, size_t n, unsigned seed, float scale) {
	if (n == 0)
		return;
	const unsigned g = kEmulated ? 1u : 4096u;
	POSENC_LAUNCH(fill_kernel, dim3(g), dim3(256), 0, 0, x, n, seed, scale);
	check(cudaGetLastError(), "fill launch");
}

static void iota(int *p, int n, int start) {
	if (n == 0)
		return;
	const unsigned g = kEmulated ? 1u : 1024u;
	POSENC_LAUNCH(iota_kernel, dim3(g), dim3(256), 0, 0, p, n, start);
	check(cudaGetLastError(), "iota launch");
}

// ---- buffers ----------------------------------------------------------------

// Arena holds n copies of a tensor of `bytes` bytes, 256-byte aligned, so
// that consecutive reps touch different memory (cold) or the same (n = 1).
struct Arena {
	char *base = nullptr;
	size_t stride = 0, bytes = 0;
	int n = 0;
	T *at(int i) const { return (T *)(base + (size_t)(i % n) * stride); }
};

static size_t g_budget = 0; // bytes this process may allocate for one case

static Arena arena(size_t bytes, bool cold) {
	Arena a;
	a.bytes = bytes;
	a.stride = (bytes + 255) / 256 * 256;
	a.n = 1;
	if (cold) {
		const size_t want = 3 * l2_bytes();
		a.n = (int)std::max<size_t>(2, (want + a.stride - 1) / a.stride);
		while (a.n > 1 && (size_t)a.n * a.stride > g_budget / 4)
			--a.n;
	}
	check(cudaMalloc((void **)&a.base, (size_t)a.n * a.stride), "cudaMalloc arena");
	for (int i = 0; i < a.n; ++i)
		fill(a.at(i), bytes / sizeof(T), 1234u + i, 1.0f);
	return a;
}

static void release(Arena &a) {
	cudaFree(a.base);
	a.base = nullptr;
}

// ---- timing -----------------------------------------------------------------

// g_stream is the stream of every timed call (the legacy default stream 0,
// or bench-graph's own, which a graph capture needs); g_graph: time graph
// replays (bench-graph).
static cudaStream_t g_stream = 0;
static bool g_graph = false;

#ifdef PSH_GPU
// graph_us captures reps calls f(1) … f(reps) on g_stream into a CUDA
// graph, replays it once (warm-up), then once between two events, and
// returns microseconds per call; a negative value where the capture or
// replay failed (a launcher call a capture refuses), after printing why.
template <typename F>
static double graph_us(F f, int reps) {
	cudaGraph_t g = nullptr;
	cudaGraphExec_t ge = nullptr;
	cudaEvent_t a = nullptr, b = nullptr;
	float ms = -1;
	cudaError_t e = cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal);
	if (e == cudaSuccess) {
		for (int i = 0; i < reps; ++i)
			f(i + 1);
		e = cudaStreamEndCapture(g_stream, &g);
	}
	if (e == cudaSuccess)
		e = cudaGraphInstantiate(&ge, g, 0);
	if (e == cudaSuccess)
		e = cudaGraphLaunch(ge, g_stream);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(g_stream);
	if (e == cudaSuccess)
		e = cudaEventCreate(&a);
	if (e == cudaSuccess)
		e = cudaEventCreate(&b);
	if (e == cudaSuccess)
		e = cudaEventRecord(a, g_stream);
	if (e == cudaSuccess)
		e = cudaGraphLaunch(ge, g_stream);
	if (e == cudaSuccess)
		e = cudaEventRecord(b, g_stream);
	if (e == cudaSuccess)
		e = cudaEventSynchronize(b);
	if (e == cudaSuccess)
		e = cudaEventElapsedTime(&ms, a, b);
	if (e != cudaSuccess) {
		std::printf("# graph timing failed: %s; the row is a loop of calls\n", cudaGetErrorString(e));
		(void)cudaGetLastError();
		ms = -1;
	}
	if (a)
		cudaEventDestroy(a);
	if (b)
		cudaEventDestroy(b);
	if (ge)
		cudaGraphExecDestroy(ge);
	if (g)
		cudaGraphDestroy(g);
	return ms < 0 ? -1.0 : 1000.0 * ms / reps;
}
#endif

// time_us runs f(i) once (warm-up), then reps times between two events,
// and returns microseconds per call. reps adapts so that the timed loop
// lasts about 20 ms (at least 20 calls, at most 20000). With g_graph, the
// reps calls are then timed as a graph replay (graph_us), which replaces
// the loop's figure where it succeeds.
template <typename F>
static double time_us(F f) {
	f(0);
	check(cudaDeviceSynchronize(), "warm-up");
	check(cudaGetLastError(), "warm-up (launch)");
	cudaEvent_t a, b;
	check(cudaEventCreate(&a), "event");
	check(cudaEventCreate(&b), "event");
	int reps = 1;
	float ms = 0;
	for (int round = 0; round < 2; ++round) {
		check(cudaEventRecord(a, g_stream), "record");
		for (int i = 0; i < reps; ++i)
			f(i + 1);
		check(cudaEventRecord(b, g_stream), "record");
		check(cudaEventSynchronize(b), "sync");
		check(cudaGetLastError(), "timed launches");
		check(cudaEventElapsedTime(&ms, a, b), "elapsed");
		if (kEmulated)
			break;
		if (round == 0) {
			const double per = std::max(1e-4, (double)ms / reps);
			reps = (int)std::min(20000.0, std::max(20.0, 20.0 / per));
		}
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
#ifdef PSH_GPU
	if (g_graph) {
		const double g = graph_us(f, reps);
		if (g > 0)
			return g;
	}
#endif
	return 1000.0 * ms / reps;
}

struct Row {
	std::string kernel, shape;
	size_t bytes; // S, the tensor(s) updated in place
	double k_hot, c_hot, k_cold, c_cold; // us per call
	int n_cold;
};

static std::vector<Row> g_rows;

static const char *dtype() { return sizeof(T) == 4 ? "f32" : STR(PDTYPE); }

static void print_header() {
	std::printf("%-16s %-5s %-9s %-40s %9s | %10s %9s %9s %6s | %10s %9s %9s %6s %5s\n", "spec", "dtype", "kernel",
	            "shape", "MiB", "hot us", "GB/s", "copyGB/s", "xcopy", "cold us", "GB/s", "copyGB/s", "xcopy", "bufs");
}

static void print_row(const Row &r) {
	const double B = 2.0 * (double)r.bytes; // read + write, as posenc bench -gpu
	auto gb = [&](double us) { return us > 0 ? B / (us * 1e-6) / 1e9 : 0.0; };
	std::printf("%-16s %-5s %-9s %-40s %9.2f | %10.2f %9.1f %9.1f %6.2f | %10.2f %9.1f %9.1f %6.2f %5d\n", STR(PSPEC),
	            dtype(), r.kernel.c_str(), r.shape.c_str(), (double)r.bytes / (1 << 20), r.k_hot, gb(r.k_hot), gb(r.c_hot),
	            r.c_hot / r.k_hot, r.k_cold, gb(r.k_cold), gb(r.c_cold), r.c_cold / r.k_cold, r.n_cold);
	std::fflush(stdout);
}

// measure times launch(i, arenas) hot and cold, and a D2D copy of the same
// total bytes hot and cold. sizes are the byte sizes of the in-place tensors.
template <typename L>
static void measure(const std::string &kernel, const std::string &shape, const std::vector<size_t> &sizes, L launch) {
	size_t total = 0;
	for (size_t s : sizes)
		total += s;
	size_t freeb = 0, totb = 0;
	check(cudaMemGetInfo(&freeb, &totb), "cudaMemGetInfo");
	g_budget = freeb;
	if (4 * total + ((size_t)256 << 20) > freeb) {
		std::printf("%-16s %-5s %-9s %-40s skipped: needs %.0f MiB, %.0f MiB free\n", STR(PSPEC), dtype(), kernel.c_str(),
		            shape.c_str(), 4.0 * total / (1 << 20), (double)freeb / (1 << 20));
		return;
	}
	Row r{kernel, shape, total, 0, 0, 0, 0, 0};
	for (int cold = 0; cold < 2; ++cold) {
		std::vector<Arena> as;
		for (size_t s : sizes)
			as.push_back(arena(s, cold != 0));
		const double k = time_us([&](int i) { launch(i, as); });
		for (Arena &a : as)
			release(a);
		// the copy: one source and one destination arena of the total size
		Arena src = arena(total, cold != 0), dst = arena(total, cold != 0);
		const double c = time_us([&](int i) {
			check(cudaMemcpyAsync(dst.at(i), src.at(i), total, cudaMemcpyDeviceToDevice, g_stream), "copy");
		});
		if (cold) {
			r.k_cold = k;
			r.c_cold = c;
			r.n_cold = src.n;
		} else {
			r.k_hot = k;
			r.c_hot = c;
		}
		release(src);
		release(dst);
	}
	print_row(r);
	g_rows.push_back(r);
}

// same reports whether n bytes at device pointers a and b are identical.
static bool same(const void *a, const void *b, size_t n) {
	std::vector<unsigned char> x(n), y(n);
	check(cudaMemcpy(x.data(), a, n, cudaMemcpyDeviceToHost), "D2H");
	check(cudaMemcpy(y.data(), b, n, cudaMemcpyDeviceToHost), "D2H");
	return std::memcmp(x.data(), y.data(), n) == 0;
}

static char buf[256];
static std::string fmt(const char *f, long long a, long long b = 0, long long c = 0, long long d = 0) {
	std::snprintf(buf, sizeof buf, f, a, b, c, d);
	return buf;
}

#if PKIND == 1
// ---- RoPE -------------------------------------------------------------------

#ifdef PMAXPOS
#define MAXPOS_ARG(m) , (m)
#else
#define MAXPOS_ARG(m)
#endif

static int *positions(int tokens, int start) {
	int *p = nullptr;
	check(cudaMalloc((void **)&p, sizeof(int) * (size_t)std::max(tokens, 1)), "cudaMalloc pos");
	iota(p, tokens, start);
	return p;
}

static void rope_case(int tokens, int qh, int kh, int start) {
	const size_t qb = (size_t)tokens * qh * kHeadDim * sizeof(T), kb = (size_t)tokens * kh * kHeadDim * sizeof(T);
	int *pos = positions(tokens, start);
	const int mp = start + tokens - 1;
	(void)mp;
	if (kh == 0) {
		measure("apply", fmt("tokens=%lld,heads=%lld,pos0=%lld", tokens, qh, start), {qb}, [&](int i, std::vector<Arena> &as) {
			check(PFN(apply)(as[0].at(i), pos, tokens, qh MAXPOS_ARG(mp), g_stream), "apply");
		});
	} else {
		measure("apply_qk", fmt("tokens=%lld,q=%lld,k=%lld,pos0=%lld", tokens, qh, kh, start), {qb, kb},
		        [&](int i, std::vector<Arena> &as) {
			        check(PFN(apply_qk)(as[0].at(i), as[1].at(i), pos, tokens, qh, kh MAXPOS_ARG(mp), g_stream), "apply_qk");
		        });
	}
	cudaFree(pos);
}

static void run_bench(bool smoke) {
	if (smoke) {
		for (int t : {1, 3, 17})
			rope_case(t, 4, 0, t == 1 ? 32000 : 0);
		rope_case(5, 4, 2, 7);
		return;
	}
	// decode (one token per sequence, positions deep in the context), then prefill
	for (int t : {1, 8, 64})
		rope_case(t, 32, 0, 32000);
	for (int t : {16, 256, 1024, 4096, 16384, 65536})
		rope_case(t, 32, 0, 0);
	// grouped-query attention, Llama 3 8B shape (32 q heads, 8 kv heads)
	for (int t : {1, 64})
		rope_case(t, 32, 8, 32000);
	for (int t : {1024, 4096, 16384})
		rope_case(t, 32, 8, 0);
}

// sanitize: each launcher once on small odd shapes, 16-byte aligned and
// shifted by one element (the scalar path), for compute-sanitizer.
static int run_sanitize() {
	for (int shift = 0; shift < 2; ++shift)
		for (int tokens : {1, 17, 300})
			for (int qh : {3, 32}) {
				const int kh = qh == 32 ? 8 : 1;
				const size_t n = (size_t)tokens * qh * kHeadDim + shift, m = (size_t)tokens * kh * kHeadDim + shift;
				T *q = nullptr, *k = nullptr;
				check(cudaMalloc((void **)&q, n * sizeof(T)), "cudaMalloc");
				check(cudaMalloc((void **)&k, m * sizeof(T)), "cudaMalloc");
				fill(q, n, 1u, 1.0f);
				fill(k, m, 2u, 1.0f);
				int *pos = positions(tokens, tokens == 1 ? 70000 : 0);
				const int mp = (tokens == 1 ? 70000 : 0) + tokens - 1;
				(void)mp;
				check(PFN(apply)(q + shift, pos, tokens, qh MAXPOS_ARG(mp), 0), "apply");
				check(PFN(inverse)(q + shift, pos, tokens, qh MAXPOS_ARG(mp), 0), "inverse");
				check(PFN(apply_qk)(q + shift, k + shift, pos, tokens, qh, kh MAXPOS_ARG(mp), 0), "apply_qk");
				check(cudaDeviceSynchronize(), "sanitize launches");
				cudaFree(q);
				cudaFree(k);
				cudaFree(pos);
			}
	std::printf("sanitize: %s: rope launches done\n", STR(PSPEC));
	return 0;
}

// big: one apply over tokens x heads x kHeadDim > 2^31 elements; the first,
// a middle and the last token must match single-token launches bit for bit.
static int run_big(bool smoke) {
	const int heads = smoke ? 3 : 64;
	long long tokens = smoke ? 40 : (1 << 20);
	size_t freeb = 0, totb = 0;
	check(cudaMemGetInfo(&freeb, &totb), "cudaMemGetInfo");
	while (!smoke && (size_t)tokens * heads * kHeadDim * sizeof(T) + ((size_t)1 << 30) > freeb)
		tokens /= 2;
	const size_t elems = (size_t)tokens * heads * kHeadDim, row = (size_t)heads * kHeadDim;
	std::printf("big: apply tokens=%lld heads=%d head_dim=%d: %zu elements (%s 2^31), %.2f GiB\n", tokens, heads, kHeadDim, elems,
	            elems > ((size_t)1 << 31) ? ">" : "<=", (double)elems * sizeof(T) / (1 << 30));
	T *x = nullptr, *s = nullptr;
	check(cudaMalloc((void **)&x, elems * sizeof(T)), "cudaMalloc big");
	check(cudaMalloc((void **)&s, 3 * row * sizeof(T)), "cudaMalloc small");
	fill(x, elems, 99u, 1.0f);
	const long long picks[3] = {0, tokens / 2 + 777 % (tokens / 2), tokens - 1};
	for (int j = 0; j < 3; ++j)
		check(cudaMemcpy(s + j * row, x + (size_t)picks[j] * row, row * sizeof(T), cudaMemcpyDeviceToDevice), "copy row");
	int *pos = positions((int)tokens, 0);
	const int mp = (int)tokens - 1;
	(void)mp;
	check(PFN(apply)(x, pos, (int)tokens, heads MAXPOS_ARG(mp), 0), "apply big");
	check(cudaDeviceSynchronize(), "apply big (execution)");
	int bad = 0;
	for (int j = 0; j < 3; ++j) {
		int *p1 = positions(1, (int)picks[j]);
		check(PFN(apply)(s + j * row, p1, 1, heads MAXPOS_ARG(mp), 0), "apply small");
		check(cudaDeviceSynchronize(), "apply small (execution)");
		const bool ok = same(x + (size_t)picks[j] * row, s + j * row, row * sizeof(T));
		std::printf("big: token %lld: %s\n", picks[j], ok ? "bit-identical to a 1-token launch" : "MISMATCH");
		bad += !ok;
		cudaFree(p1);
	}
	cudaFree(pos);
	cudaFree(x);
	cudaFree(s);
	return bad;
}

#else
// ---- fused softmax (alibi: PKIND 2, rpe_bias: PKIND 3) ------------------------

#if PKIND == 3
#define TABLE_ARG , g_table
static T *g_table = nullptr;
static void make_table() {
	check(cudaMalloc((void **)&g_table, sizeof(T) * kHeads * kBuckets), "cudaMalloc table");
	fill(g_table, (size_t)kHeads * kBuckets, 7u, 4.0f);
}
#else
#define TABLE_ARG
static void make_table() {}
#endif

static void softmax_case(int lq, int lk, int q_offset) {
	const size_t b = (size_t)kHeads * lq * lk * sizeof(T);
	const float scale = 0.08838834764831845f; // 1/sqrt(128)
	measure("softmax", fmt("heads=%lld,lq=%lld,lk=%lld,q_offset=%lld", kHeads, lq, lk, q_offset), {b},
	        [&](int i, std::vector<Arena> &as) {
		        check(PFN(softmax)(as[0].at(i) TABLE_ARG, lq, lk, q_offset, scale, g_stream), "softmax");
	        });
}

static void run_bench(bool smoke) {
	make_table();
	if (smoke) {
		softmax_case(1, 7, 6);
		softmax_case(1, 3000, 2999); // beyond kCache*256: the three-pass path
		softmax_case(5, 300, 0);
		return;
	}
	// decode: one query at the end of the context, all keys valid
	for (int lk : {512, 1024, 4096, 8192, 32768, 131072})
		softmax_case(1, lk, lk - 1);
	// batched decode: 64 queries
	softmax_case(64, 8192, 8192 - 64);
	// prefill, causal from position 0 (bench -gpu's 512 shape first)
	for (int n : {512, 2048, 4096})
		softmax_case(n, n, 0);
}

// sanitize: each launcher once on small odd shapes (including the
// three-pass path beyond 2048 keys), aligned and shifted by one element.
static int run_sanitize() {
	make_table();
	for (int shift = 0; shift < 2; ++shift)
		for (int lq : {1, 5})
			for (int lk : {7, 300, 3000})
				for (int qo : {0, lk - 1}) {
					const size_t n = (size_t)kHeads * lq * lk + shift;
					T *x = nullptr;
					check(cudaMalloc((void **)&x, n * sizeof(T)), "cudaMalloc");
					fill(x, n, 3u, 4.0f);
					check(PFN(softmax)(x + shift TABLE_ARG, lq, lk, qo, 0.125f, 0), "softmax");
					check(PFN(add_bias)(x + shift TABLE_ARG, lq, lk, qo, 0), "add_bias");
					check(PFN(bias)(x + shift TABLE_ARG, lq, lk, qo, 0), "bias");
					check(cudaDeviceSynchronize(), "sanitize launches");
					cudaFree(x);
				}
	std::printf("sanitize: %s: bias launches done\n", STR(PSPEC));
	return 0;
}

// big: one softmax over kHeads x lq x lk > 2^31 elements; its first and last
// rows must match lq = 1 launches bit for bit.
static int run_big(bool smoke) {
	make_table();
	const int lk = smoke ? 300 : 8192;
	long long lq = smoke ? 4 : ((1LL << 31) / ((long long)kHeads * lk) + 2);
	size_t freeb = 0, totb = 0;
	check(cudaMemGetInfo(&freeb, &totb), "cudaMemGetInfo");
	while (!smoke && (size_t)kHeads * lq * lk * sizeof(T) + ((size_t)1 << 30) > freeb)
		lq /= 2;
	const size_t elems = (size_t)kHeads * lq * lk, rowb = (size_t)lk * sizeof(T);
	std::printf("big: softmax heads=%d lq=%lld lk=%d: %zu elements (%s 2^31), %.2f GiB\n", kHeads, lq, lk, elems,
	            elems > ((size_t)1 << 31) ? ">" : "<=", (double)elems * sizeof(T) / (1 << 30));
	T *x = nullptr, *s0 = nullptr, *s1 = nullptr;
	check(cudaMalloc((void **)&x, elems * sizeof(T)), "cudaMalloc big");
	check(cudaMalloc((void **)&s0, (size_t)kHeads * rowb), "cudaMalloc small");
	check(cudaMalloc((void **)&s1, (size_t)kHeads * rowb), "cudaMalloc small");
	fill(x, elems, 5u, 8.0f);
	fill(s0, (size_t)kHeads * lk, 6u, 8.0f);
	fill(s1, (size_t)kHeads * lk, 6u, 8.0f);
	const float scale = 0.125f;
	// small launch lq = 1 at q_offset = lq-1: its row h is head h, query lq-1
	const size_t last = elems - lk;
	check(cudaMemcpy(s1 + (size_t)(kHeads - 1) * lk, x + last, rowb, cudaMemcpyDeviceToDevice), "copy row");
	check(cudaMemcpy(s0, x, rowb, cudaMemcpyDeviceToDevice), "copy row");
	check(PFN(softmax)(x TABLE_ARG, (int)lq, lk, 0, scale, 0), "softmax big");
	check(cudaDeviceSynchronize(), "softmax big (execution)");
	check(PFN(softmax)(s0 TABLE_ARG, 1, lk, 0, scale, 0), "softmax small");
	check(PFN(softmax)(s1 TABLE_ARG, 1, lk, (int)lq - 1, scale, 0), "softmax small");
	check(cudaDeviceSynchronize(), "softmax small (execution)");
	const bool ok0 = same(x, s0, rowb), ok1 = same(x + last, s1 + (size_t)(kHeads - 1) * lk, rowb);
	std::printf("big: first row: %s\n", ok0 ? "bit-identical to an lq=1 launch" : "MISMATCH");
	std::printf("big: last row (element offset %zu): %s\n", last, ok1 ? "bit-identical to an lq=1 launch" : "MISMATCH");
	cudaFree(x);
	cudaFree(s0);
	cudaFree(s1);
	return !ok0 + !ok1;
}
#endif

// ---- attention (every kind: rope, alibi, rpe_bias) ----------------------------

#ifndef MAXPOS_ARG
#define MAXPOS_ARG(m)
#endif
#ifndef TABLE_ARG
#define TABLE_ARG
#endif

// attn_int_array is n ints on the device, a + b·i.
static int *attn_int_array(int n, int a, int b) {
	std::vector<int> h((size_t)std::max(n, 1));
	for (int i = 0; i < n; ++i)
		h[(size_t)i] = a + b * i;
	int *d = nullptr;
	check(cudaMalloc((void **)&d, sizeof(int) * h.size()), "cudaMalloc ints");
	check(cudaMemcpy(d, h.data(), sizeof(int) * h.size(), cudaMemcpyHostToDevice), "H2D ints");
	return d;
}

// sanitize_attention: the attention launchers once each on small odd
// shapes, for compute-sanitizer (memcheck, and racecheck and synccheck for
// the kernels' shared memory and barriers, which host emulation cannot
// judge): decode over 1, 37, 300 and 4100 keys (split), 5 queries over 300
// and a causal prefill of 70, with an MHA, a GQA (the decode kernel's
// tiles of 4 rows) and a group of 8 or more (the tensor-core decode of
// bf16), 16-byte aligned and shifted by one element (the main kernel's
// scalar path), contiguous and paged (two sequences, slots reversed), the
// rope specs' rotated form too; one window.
// (rpe_bias: after run_sanitize, which makes the table.)
static void sanitize_attention() {
#if PKIND == 1
	const std::vector<std::pair<int, int>> heads = {{32, 8}, {32, 4}, {3, 3}};
#else
	const std::vector<std::pair<int, int>> heads = {{kHeads, kHeads}, {kHeads, 1}};
#endif
	const int shapes[6][2] = {{1, 1}, {1, 37}, {1, 300}, {1, 4100}, {5, 300}, {70, 70}};
	const float scale = 1.0f / std::sqrt((float)kAttnDim);
	for (int shift = 0; shift < 2; ++shift)
		for (const auto &hh : heads)
			for (const auto &sh : shapes) {
				const int qh = hh.first, kh = hh.second, lq = sh[0], lk = sh[1], window = lq == 5 ? 50 : 0;
				const size_t nq = (size_t)lq * qh * kAttnDim + shift, nk = (size_t)lk * kh * kAttnDim + shift;
				T *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
				check(cudaMalloc((void **)&q, nq * sizeof(T)), "cudaMalloc q");
				check(cudaMalloc((void **)&o, nq * sizeof(T)), "cudaMalloc out");
				check(cudaMalloc((void **)&k, nk * sizeof(T)), "cudaMalloc k");
				check(cudaMalloc((void **)&v, nk * sizeof(T)), "cudaMalloc v");
				fill(q, nq, 11u, 1.0f);
				fill(k, nk, 12u, 1.0f);
				fill(v, nk, 13u, 1.0f);
				// Queries from the last key on; keys at 1000 + j; paged: two
				// sequences, the first holding half the queries and keys.
				int *qpos = attn_int_array(lq, 1000 + lk - 1, 1), *kpos = attn_int_array(lk, 1000, 1);
				const int qs[3] = {0, lq / 2, lq}, ks[3] = {0, lk / 2, lk};
				int *q_start = attn_int_array(3, 0, 0), *k_start = attn_int_array(3, 0, 0), *slots = attn_int_array(lk, lk - 1, -1);
				check(cudaMemcpy(q_start, qs, sizeof qs, cudaMemcpyHostToDevice), "H2D q_start");
				check(cudaMemcpy(k_start, ks, sizeof ks, cudaMemcpyHostToDevice), "H2D k_start");
				const int mp = 1000 + lk - 1 + lq;
				(void)mp;
				T *const oq = o + shift, *const qq = q + shift, *const kk = k + shift, *const vv = v + shift;
				check(PFN(attention)(oq, qq, kk, vv TABLE_ARG, qpos, kpos, lq, lk, qh, kh, scale, 1, window MAXPOS_ARG(mp), 0), "attention");
#if PKIND == 1
				check(PFN(attention_rotated)(oq, qq, kk, vv, qpos, kpos, lq, lk, qh, kh, scale, 1, window MAXPOS_ARG(mp), 0),
				      "attention_rotated");
#endif
				check(PFN(attention_paged)(oq, qq, kk, vv TABLE_ARG, qpos, q_start, slots, kpos, k_start, lq, lk, 2, (long long)lk, qh,
				                           kh, scale, 1, window MAXPOS_ARG(mp), 0),
				      "attention_paged");
				check(cudaDeviceSynchronize(), "sanitize attention launches");
				for (void *p : {(void *)q, (void *)k, (void *)v, (void *)o, (void *)qpos, (void *)kpos, (void *)q_start,
				                (void *)k_start, (void *)slots})
					cudaFree(p);
			}
	std::printf("sanitize: %s: attention launches done\n", STR(PSPEC));
}

int main(int argc, char **argv) {
	const std::string mode = argc > 1 ? argv[1] : "bench";
	cudaDeviceProp prop;
	std::memset(&prop, 0, sizeof prop);
	check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
	const bool smoke = mode == "smoke" || kEmulated;
	if (mode == "sanitize") {
		const int rc = run_sanitize();
		sanitize_attention();
		return rc;
	}
	if (mode == "big" || mode == "smoke-big") {
		const int bad = run_big(smoke);
		std::printf("big: %s: %s\n", STR(PSPEC), bad ? "FAILED" : "ok");
		return bad ? 1 : 0;
	}
#ifdef PSH_GPU
	if (mode == "bench-graph") {
		g_graph = true;
		check(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
	}
#endif
	std::printf("# %s (%s) on %s, L2 %.1f MiB%s%s\n", STR(PSPEC), dtype(), prop.name, (double)l2_bytes() / (1 << 20),
	            kEmulated ? " [EMULATED: numbers are not GPU figures]" : "",
	            g_graph ? "; CUDA-graph replays of the timed calls (kernel and copy)" : "");
	print_header();
	run_bench(smoke);
	return 0;
}
