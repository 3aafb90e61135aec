package cudahost

import (
	"fmt"
	"strings"

	"github.com/posenc/posenc/spec"
)

// Operation codes of the driver protocol (see driverSource).
const (
	opApply     = 1
	opApplyQK   = 2
	opInverse   = 3
	opAddBias   = 4
	opSoftmax   = 5
	opBias      = 6
	opAdd       = 7
	opEncode    = 8
	opRoundTrip = 9
	opScores    = 10 // rpe_full, xl
	opOutput    = 11 // rpe_full
	opRelative  = 12 // xl
	// The bias position forms: P0 qpos, P1 kpos, I[0] h0, I[1] nh.
	opAddBiasPos = 13
	opSoftmaxPos = 14
	opBiasPos    = 15
	// The M-RoPE launchers (templates/mrope.cu.tmpl): I[0] heads (q_heads),
	// I[1] k_heads, I[2] tokens; P0 the token-major positions, tokens·Axes
	// of them.
	opApplyMRoPE   = 16
	opApplyQKMRoPE = 17
	opInverseMRoPE = 18

	// RoPE engine forms. I[0], I[1]: heads (q, k); I[2]: max_pos (shift:
	// seq_len); I[3], I[4]: strides, the cache's slot count or delta and
	// tokens (see driverSource).
	opApplyStrided   = 19
	opApplyHeadMajor = 20
	opApplyQKStrided = 21
	opApplyTo        = 22
	opApplyToSlots   = 23
	opShift          = 24
	// ScaleQ of a rope spec with attn_temperature
	// (templates/temperature.cu.tmpl): F0 q, P0 pos, I[0] heads.
	opScaleQ = 25
	// 26, 27, 28: the attention form (attention.go).
	// opHostMMAs asks a host-emulation build whether a tensor-core mma ran
	// (Lib.TensorCoresUsed); an nvcc build has no such case.
	opHostMMAs = 29
)

// driverSource returns the C++ driver for s's launchers. One source serves
// both builds: compiled by nvcc (__CUDACC__ defined) it drives a real
// device; compiled by the host C++ compiler it includes the host-emulation
// header first, whose runtime subset (cudaMalloc, cudaMemcpy, events, …)
// makes the same code run on the CPU. It then includes the generated .cu
// (at cuPath), reports the device and serves requests on stdin,
// little-endian:
//
//	hello:    int32 status (cudaError_t of cudaGetDeviceProperties),
//	          uint32 n, n bytes: the device name (or the error's text)
//	request:  int32 op, int64 I[8], float32 F,
//	          int64 reps, int64 copy_bytes,
//	          uint32 nf, nf × (uint64 n, n float32),
//	          uint32 ni, ni × (uint64 n, n int32)
//	response: reps = 0 (a call): int32 status, then every float array of
//	          the request, after the call;
//	          reps > 0 (a bench): int32 status, float64 kernel_ms,
//	          float64 copy_ms
//
// Every array lives in device memory (cudaMalloc, cudaMemcpy to the device
// before the launcher, back after it), between guard bands of kGuard
// elements filled with a byte pattern. Float arrays are converted to the
// storage type on the host before the copy and back after it. A call's
// status is the launcher's cudaError_t, then cudaDeviceSynchronize's, then
// cudaGetLastError's; −1 for an unknown op, −2 when a guard band or an int
// array changed (a write outside the arrays, or to an input). Arrays start
// 128-byte aligned (cudaMalloc's 256-byte alignment plus the guard band);
// I[7] = 1 shifts every float array by one element, so the launchers'
// scalar fallback for unaligned pointers runs too; bit 1 + i of I[7]
// shifts float array i alone (Lib.MisalignArrays). A bench runs the op
// once (warm-up), then reps times between two cudaEvents on the default
// stream, then times reps cudaMemcpy device-to-device copies of copy_bytes
// bytes the same way (after a warm-up copy); I[6] > 1 makes a bench
// cache-cold: launches and copies rotate over I[6] copies of their arrays.
//
// The cases of the op switch (ops below) see the request as I[0..7], F,
// the float arrays F0…F7 (device pointers to the storage type, at most
// eight), the int arrays P0…P7 (at most eight) with their lengths NP
// (= NP0), NP1…NP7 (an array the request leaves out is a null pointer of
// length 0), and return the launcher's cudaError_t.
func driverSource(s *spec.Spec, cuPath string) (string, error) {
	n := s.Name
	seq := ""
	if sc := s.Scaling; sc != nil && (sc.Type == spec.ScaleDynamic || sc.Type == spec.ScaleLongRoPE) {
		seq = ", (int)I[2]"
	}
	var ops []string
	switch s.Encoding {
	case spec.RoPE:
		ops = []string{
			fmt.Sprintf("case %d: return posenc_%s_apply(F0, P0, NP, (int)I[0]%s, 0);", opApply, n, seq),
			fmt.Sprintf("case %d: return posenc_%s_apply_qk(F0, F1, P0, NP, (int)I[0], (int)I[1]%s, 0);", opApplyQK, n, seq),
			fmt.Sprintf("case %d: return posenc_%s_inverse(F0, P0, NP, (int)I[0]%s, 0);", opInverse, n, seq),
			// x, pos; I[3], I[4]: stride, head_stride.
			fmt.Sprintf("case %d: return posenc_%s_apply_strided(F0, P0, NP, (int)I[0], (long long)I[3], (long long)I[4]%s, 0);", opApplyStrided, n, seq),
			fmt.Sprintf("case %d: return posenc_%s_apply_head_major(F0, P0, NP, (int)I[0]%s, 0);", opApplyHeadMajor, n, seq),
			// qkv, pos; I[3]: stride.
			fmt.Sprintf("case %d: return posenc_%s_apply_qk_strided(F0, P0, NP, (int)I[0], (int)I[1], (long long)I[3]%s, 0);", opApplyQKStrided, n, seq),
			// F0 dst, F1 src.
			fmt.Sprintf("case %d: return posenc_%s_apply_to(F0, F1, P0, NP, (int)I[0]%s, 0);", opApplyTo, n, seq),
			// F0 cache of I[3] slots, P1 slots, F1 src, P0 pos.
			fmt.Sprintf("case %d: return posenc_%s_apply_to_slots(F0, (long long)I[3], P1, F1, P0, NP, (int)I[0]%s, 0);", opApplyToSlots, n, seq),
			// F0 x; I[3] delta, I[4] tokens, I[2] seq_len.
			fmt.Sprintf("case %d: return posenc_%s_shift(F0, (int)I[3], (int)I[4], (int)I[0]%s, 0);", opShift, n, seq),
		}
		ops = append(ops, mropeOps(s)...)
		ops = append(ops, temperatureOps(s)...)
	case spec.ALiBi, spec.RPEBias:
		tab := ""
		if s.Encoding == spec.RPEBias {
			tab = " F1,"
		}
		ops = []string{
			fmt.Sprintf("case %d: return posenc_%s_add_bias(F0,%s (int)I[0], (int)I[1], (int)I[2], 0);", opAddBias, n, tab),
			fmt.Sprintf("case %d: return posenc_%s_softmax(F0,%s (int)I[0], (int)I[1], (int)I[2], F, 0);", opSoftmax, n, tab),
			fmt.Sprintf("case %d: return posenc_%s_bias(F0,%s (int)I[0], (int)I[1], (int)I[2], 0);", opBias, n, tab),
			fmt.Sprintf("case %d: return posenc_%s_add_bias_pos(F0,%s P0, P1, (int)NP, (int)NP1, (int)I[0], (int)I[1], 0);", opAddBiasPos, n, tab),
			fmt.Sprintf("case %d: return posenc_%s_softmax_pos(F0,%s P0, P1, (int)NP, (int)NP1, (int)I[0], (int)I[1], F, 0);", opSoftmaxPos, n, tab),
			fmt.Sprintf("case %d: return posenc_%s_bias_pos(F0,%s P0, P1, (int)NP, (int)NP1, (int)I[0], (int)I[1], 0);", opBiasPos, n, tab),
		}
	case spec.Sinusoidal, spec.Algebraic, spec.Binary:
		ops = []string{
			fmt.Sprintf("case %d: return posenc_%s_add(F0, P0, NP, 0);", opAdd, n),
			fmt.Sprintf("case %d: return posenc_%s_encode(F0, P0, NP, 0);", opEncode, n),
		}
	case spec.Learned:
		ops = []string{fmt.Sprintf("case %d: return posenc_%s_add(F0, F1, (int)I[0], P0, NP, 0);", opAdd, n)}
	case spec.Mixture:
		ops = []string{fmt.Sprintf("case %d: return posenc_%s_add(F0, F1, (int)I[0], P0, NP, F, 0);", opAdd, n)}
	case spec.RPEFull:
		// F0…F3: dst, q, k, aK (scores) or dst, weights, v, aV (output);
		// I[0..2]: lq, lk, q_offset.
		ops = []string{
			fmt.Sprintf("case %d: return posenc_%s_scores(F0, F1, F2, F3, (int)I[0], (int)I[1], (int)I[2], 0);", opScores, n),
			fmt.Sprintf("case %d: return posenc_%s_output(F0, F1, F2, F3, (int)I[0], (int)I[1], (int)I[2], 0);", opOutput, n),
		}
	case spec.XL:
		// F0…F5: dst, q, k, r, u, v; I[0..2]: lq, lk, q_offset (scores);
		// F0: dst, I[0]: n (relative).
		ops = []string{
			fmt.Sprintf("case %d: return posenc_%s_scores(F0, F1, F2, F3, F4, F5, (int)I[0], (int)I[1], (int)I[2], 0);", opScores, n),
			fmt.Sprintf("case %d: return posenc_%s_relative(F0, (int)I[0], 0);", opRelative, n),
		}
	default:
		return "", fmt.Errorf("cudahost: encoding %q has no CUDA kernels", s.Encoding)
	}
	ops = append(ops, attentionOps(s)...)
	ops = append(ops, fmt.Sprintf("case %d: return cudaSuccess; // storage round trip", opRoundTrip))
	// Host builds only: F0[0] = 1 when a tensor-core mma ran since the last
	// such request, else 0 (Lib.TensorCoresUsed).
	ops = append(ops, fmt.Sprintf("#ifndef __CUDACC__\n\tcase %d: F0[0] = to_store(posenc_host::mma_calls ? 1.f : 0.f); posenc_host::mma_calls = 0; return cudaSuccess;\n#endif", opHostMMAs))
	toStore, fromStore := "v", "v"
	switch s.DType {
	case "f16":
		toStore, fromStore = "__float2half_rn(v)", "__half2float(v)"
	case "bf16":
		toStore, fromStore = "__float2bfloat16_rn(v)", "__bfloat162float(v)"
	}
	return fmt.Sprintf(driverTemplate, cuPath, n, strings.Join(ops, "\n\t"), toStore, fromStore), nil
}

// driverTemplate: %[1]s the .cu path, %[2]s the spec name, %[3]s the cases,
// %[4]s and %[5]s the storage conversions of v (float to T, T to float).
// It is C++17 (nvcc's default dialect) and uses only the runtime subset
// posenc_cuda_host.h implements.
const driverTemplate = `// posenc cudahost driver (generated by verify/cudahost; see driver.go).
// nvcc builds it for a CUDA device; a host C++ compiler builds it against
// the host-emulation header. Either way the tensors live in "device" memory.
#ifndef __CUDACC__
#include "posenc_cuda_host.h"
#endif
#include "%[1]s"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

typedef posenc_%[2]s_t T;

// to_store and from_store convert one element between float and the
// storage type, on the host (cuda_fp16.h / cuda_bf16.h under nvcc, the
// emulation header's bit-exact versions otherwise).
static inline T to_store(float v) { return %[4]s; }
static inline float from_store(T v) { return %[5]s; }

static bool rd(void *p, size_t n) { return std::fread(p, 1, n, stdin) == n; }
static void wr(const void *p, size_t n) { std::fwrite(p, 1, n, stdout); }

constexpr int kMaxArrays = 8;           // float arrays, and int arrays, per request
constexpr size_t kGuard = 64;           // guard elements each side of every array
constexpr unsigned char kPattern = 0xa5; // guard band byte

static int64_t I[8];
static float F;
static T *FA[kMaxArrays];
static int *PA[kMaxArrays];
static int NPA[kMaxArrays];
#define F0 (FA[0])
#define F1 (FA[1])
#define F2 (FA[2])
#define F3 (FA[3])
#define F4 (FA[4])
#define F5 (FA[5])
#define F6 (FA[6])
#define F7 (FA[7])
#define P0 (PA[0])
#define P1 (PA[1])
#define P2 (PA[2])
#define P3 (PA[3])
#define P4 (PA[4])
#define P5 (PA[5])
#define P6 (PA[6])
#define P7 (PA[7])
#define NP (NPA[0])
#define NP0 (NPA[0])
#define NP1 (NPA[1])
#define NP2 (NPA[2])
#define NP3 (NPA[3])
#define NP4 (NPA[4])
#define NP5 (NPA[5])
#define NP6 (NPA[6])
#define NP7 (NPA[7])

static int dispatch(int op) {
	switch (op) {
	%[3]s
	}
	return -1;
}

// Buf is one array in device memory: bytes at base, the data at base+off,
// guard bands around it.
struct Buf {
	char *base = nullptr;
	size_t bytes = 0, off = 0, n = 0, elem = 0;
};

// upload allocates b for n elements of elem bytes (shifted by shift
// elements), fills the allocation with the guard pattern and copies src
// (host) into the data part.
static cudaError_t upload(Buf &b, const void *src, size_t n, size_t elem, size_t shift) {
	b.n = n;
	b.elem = elem;
	b.off = (kGuard + shift) * elem;
	b.bytes = (2 * kGuard + shift + n) * elem;
	cudaError_t e = cudaMalloc((void **)&b.base, b.bytes);
	if (e != cudaSuccess)
		return e;
	e = cudaMemset(b.base, kPattern, b.bytes);
	if (e != cudaSuccess || n == 0)
		return e;
	return cudaMemcpy(b.base + b.off, src, n * elem, cudaMemcpyHostToDevice);
}

// download copies b's whole allocation to host; guards_ok reports whether
// the guard bands still hold the pattern.
static cudaError_t download(const Buf &b, std::vector<unsigned char> &host, bool *guards_ok) {
	host.resize(b.bytes);
	*guards_ok = true;
	if (b.bytes == 0)
		return cudaSuccess;
	cudaError_t e = cudaMemcpy(host.data(), b.base, b.bytes, cudaMemcpyDeviceToHost);
	if (e != cudaSuccess)
		return e;
	for (size_t i = 0; i < b.bytes; ++i)
		if ((i < b.off || i >= b.off + b.n * b.elem) && host[i] != kPattern) {
			*guards_ok = false;
			break;
		}
	return cudaSuccess;
}

// finish turns a launcher's status into the call's: a launch error, else
// an error of the kernel's execution, else a pending error.
static int32_t finish(int32_t st) {
	if (st != 0) {
		cudaGetLastError();
		return st;
	}
	st = (int32_t)cudaDeviceSynchronize();
	if (st != 0)
		return st;
	return (int32_t)cudaGetLastError();
}

// elapsed_ms times reps runs of f between two events on the default stream.
template <typename Fn>
static int32_t elapsed_ms(int64_t reps, double *ms, Fn f) {
	cudaEvent_t a, b;
	int32_t st = (int32_t)cudaEventCreate(&a);
	if (st != 0)
		return st;
	st = (int32_t)cudaEventCreate(&b);
	if (st != 0) {
		cudaEventDestroy(a);
		return st;
	}
	st = (int32_t)cudaEventRecord(a, 0);
	for (int64_t i = 0; st == 0 && i < reps; ++i)
		st = f();
	if (st == 0)
		st = (int32_t)cudaEventRecord(b, 0);
	if (st == 0)
		st = (int32_t)cudaEventSynchronize(b);
	float t = 0;
	if (st == 0)
		st = (int32_t)cudaEventElapsedTime(&t, a, b);
	*ms = t;
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return finish(st);
}

// bench times reps launches of op (after one warm-up launch) and reps
// device-to-device copies of copy_bytes bytes (after one warm-up copy).
// With rot > 1 (cache-cold) the launches rotate over rot copies of the
// float arrays and the copies over rot source/destination pairs, so that
// each launch or copy finds its data evicted from L2 by the ones before
// (the caller picks rot so the rotation spans a few times the L2 size).
static int32_t bench(int op, int64_t reps, int64_t copy_bytes, int64_t rot, const std::vector<Buf> &df,
                     double *kernel_ms, double *copy_ms) {
	*kernel_ms = *copy_ms = 0;
	if (rot < 1)
		rot = 1;
	int32_t st = 0;
	// sets[r][i]: float array i of rotation r (r = 0: the uploaded ones).
	std::vector<std::vector<T *>> sets((size_t)rot, std::vector<T *>(df.size(), nullptr));
	std::vector<void *> owned;
	for (size_t i = 0; i < df.size(); ++i)
		sets[0][i] = FA[i];
	for (int64_t r = 1; r < rot && st == 0; ++r)
		for (size_t i = 0; i < df.size() && st == 0; ++i) {
			void *p = nullptr;
			st = (int32_t)cudaMalloc(&p, df[i].n * sizeof(T) + 16);
			if (st != 0)
				break;
			owned.push_back(p);
			// Same alignment as the uploaded array (the misaligned case too).
			T *d = (T *)((char *)p + ((uintptr_t)FA[i] & 15));
			st = (int32_t)cudaMemcpy(d, FA[i], df[i].n * sizeof(T), cudaMemcpyDeviceToDevice);
			sets[(size_t)r][i] = d;
		}
	const auto use = [&](int64_t r) {
		for (size_t i = 0; i < df.size(); ++i)
			FA[i] = sets[(size_t)(r %% rot)][i];
	};
	if (st == 0)
		st = finish(dispatch(op));
	int64_t k = 0;
	if (st == 0)
		st = elapsed_ms(reps, kernel_ms, [&]() {
			use(++k);
			return (int32_t)dispatch(op);
		});
	use(0);
	for (void *p : owned)
		cudaFree(p);
	if (st != 0 || copy_bytes <= 0)
		return st;
	std::vector<void *> src((size_t)rot, nullptr), dst((size_t)rot, nullptr);
	for (int64_t r = 0; r < rot && st == 0; ++r) {
		st = (int32_t)cudaMalloc(&src[(size_t)r], (size_t)copy_bytes);
		if (st == 0)
			st = (int32_t)cudaMalloc(&dst[(size_t)r], (size_t)copy_bytes);
		if (st == 0)
			st = (int32_t)cudaMemset(src[(size_t)r], 1, (size_t)copy_bytes);
		if (st == 0)
			st = (int32_t)cudaMemset(dst[(size_t)r], 0, (size_t)copy_bytes);
	}
	int64_t c = 0;
	const auto copy = [&]() {
		const size_t r = (size_t)(++c %% rot);
		return (int32_t)cudaMemcpy(dst[r], src[r], (size_t)copy_bytes, cudaMemcpyDeviceToDevice);
	};
	if (st == 0)
		st = finish(copy());
	if (st == 0)
		st = elapsed_ms(reps, copy_ms, copy);
	for (int64_t r = 0; r < rot; ++r) {
		cudaFree(src[(size_t)r]);
		cudaFree(dst[(size_t)r]);
	}
	return st;
}

int main() {
	cudaDeviceProp prop;
	std::memset(&prop, 0, sizeof prop);
	const int32_t hello = (int32_t)cudaGetDeviceProperties(&prop, 0);
	const char *name = hello == 0 ? prop.name : cudaGetErrorString((cudaError_t)hello);
	const uint32_t name_len = (uint32_t)std::strlen(name);
	wr(&hello, 4);
	wr(&name_len, 4);
	wr(name, name_len);
	std::fflush(stdout);
	if (hello != 0)
		return 1;
	for (;;) {
		int32_t op;
		int64_t B[2];
		uint32_t nf, ni;
		if (!rd(&op, 4))
			return 0;
		if (!rd(I, sizeof I) || !rd(&F, 4) || !rd(B, sizeof B) || !rd(&nf, 4) || nf > (uint32_t)kMaxArrays)
			return 2;
		const auto shift_of = [&](uint32_t i) -> size_t { return (I[7] & 1) || ((I[7] >> (1 + i)) & 1) ? 1 : 0; };
		int32_t st = 0;
		std::vector<std::vector<float>> hf(nf);
		std::vector<Buf> df(nf);
		std::vector<T> stage;
		for (uint32_t i = 0; i < nf; ++i) {
			uint64_t n;
			if (!rd(&n, 8))
				return 2;
			hf[i].resize(n);
			if (n && !rd(hf[i].data(), 4 * n))
				return 2;
			stage.resize(n);
			for (uint64_t j = 0; j < n; ++j)
				stage[j] = to_store(hf[i][j]);
			if (st == 0)
				st = (int32_t)upload(df[i], stage.data(), n, sizeof(T), shift_of(i));
		}
		if (!rd(&ni, 4) || ni > (uint32_t)kMaxArrays)
			return 2;
		std::vector<std::vector<int>> hi(ni);
		std::vector<Buf> di(ni);
		for (uint32_t i = 0; i < ni; ++i) {
			uint64_t n;
			if (!rd(&n, 8))
				return 2;
			hi[i].resize(n);
			if (n && !rd(hi[i].data(), 4 * n))
				return 2;
			if (st == 0)
				st = (int32_t)upload(di[i], hi[i].data(), n, sizeof(int), 0);
		}
		for (int i = 0; i < kMaxArrays; ++i) {
			FA[i] = i < (int)nf && df[i].base ? (T *)(df[i].base + df[i].off) : nullptr;
			PA[i] = i < (int)ni && di[i].base ? (int *)(di[i].base + di[i].off) : nullptr;
			NPA[i] = i < (int)ni ? (int)hi[i].size() : 0;
		}
		if (B[0] > 0) {
			double t[2] = {0, 0};
			if (st == 0)
				st = bench(op, B[0], B[1], I[6], df, &t[0], &t[1]);
			wr(&st, 4);
			wr(t, sizeof t);
		} else {
			if (st == 0)
				st = finish(dispatch(op));
			std::vector<unsigned char> back;
			bool ok = true;
			for (uint32_t i = 0; i < ni && st >= 0; ++i) {
				const int32_t e = (int32_t)download(di[i], back, &ok);
				if (e != 0)
					st = e;
				else if (!ok || (hi[i].size() && std::memcmp(back.data() + di[i].off, hi[i].data(), 4 * hi[i].size()) != 0))
					st = -2;
			}
			for (uint32_t i = 0; i < nf && st >= 0; ++i) {
				const int32_t e = (int32_t)download(df[i], back, &ok);
				if (e != 0) {
					st = e;
					break;
				}
				if (!ok && st == 0)
					st = -2;
				const T *v = (const T *)(back.data() + df[i].off);
				for (size_t j = 0; j < hf[i].size(); ++j)
					hf[i][j] = from_store(v[j]);
			}
			wr(&st, 4);
			for (const auto &a : hf)
				if (!a.empty())
					wr(a.data(), 4 * a.size());
		}
		std::fflush(stdout);
		for (Buf &b : df)
			cudaFree(b.base);
		for (Buf &b : di)
			cudaFree(b.base);
	}
}
`
