// posenc_cuda_host.h: host emulation of the CUDA subset that posenc's
// generated kernels use, so that the very .cu that nvcc compiles also
// compiles with the system C++ compiler (g++ -std=c++20) and runs on the
// CPU for verification. Include it before the generated .cu; it defines
// POSENC_CUDA_HOST, which makes the .cu launch through posenc_host::launch.
//
// Execution model: a launch runs its blocks one after another; the threads
// of a block run as fibers (one OS thread) scheduled round-robin between
// barriers. On x86-64 a fiber switch is posenc_host_switch below (callee-
// saved registers and the stack pointer only); elsewhere, or with
// POSENC_HOST_UCONTEXT defined, it is ucontext's swapcontext, which also
// saves the signal mask with a system call on every switch (the 256-head
// ALiBi and r_max 8192 specs make tens of millions of switches). __syncthreads() switches back to the scheduler, which
// resumes every unfinished thread once per round, so a round ends when all
// threads reached the barrier or exited (CUDA's semantics for
// block-uniform barriers). __shared__ is `static`: blocks never overlap, so
// a function-static array is exactly one block's shared memory. Warp
// collectives (shuffles, redux, mma, ldmatrix) exchange values through a
// per-block slot array between two barriers (posenc_host::exchange); they
// therefore require every thread of the block to take part (posenc's
// kernels call them block-uniformly). Device math maps to <cmath>
// (correctly rounded or nearly so, at least as accurate as CUDA's).
//
// It also implements the small part of the CUDA runtime API a host program
// needs to drive the kernels as it would on a GPU (cudaMalloc, cudaMemcpy,
// cudaMemset, cudaDeviceSynchronize, cudaGetLastError, cudaGetErrorString,
// events, cudaGetDeviceProperties): the posenc cudahost driver is one source
// that nvcc builds for a real device and g++ builds against this header.
#ifndef POSENC_CUDA_HOST_H
#define POSENC_CUDA_HOST_H
#define POSENC_CUDA_HOST 1

#include <math.h>
#include <ucontext.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#define __host__
#define __device__
#define __global__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)

struct uint3 {
	unsigned int x, y, z;
};
struct alignas(16) uint4 {
	unsigned int x, y, z, w;
};
struct dim3 {
	unsigned int x, y, z;
	constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};

typedef struct posenc_host_stream *cudaStream_t;
// cudaError_t: the codes the emulation produces, with the CUDA runtime's
// values.
typedef enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorNotReady = 600,
} cudaError_t;

// Device math: the C library's fmaf, fmaxf, fabsf, expf, fma, rint, pow and
// the GNU sincosf from <math.h>, in the global namespace as in CUDA.

#if defined(__x86_64__) && !defined(POSENC_HOST_UCONTEXT)
#define POSENC_HOST_FAST_SWITCH 1
// posenc_host_switch(save, load) pushes the System V callee-saved registers
// (rbp, rbx, r12–r15) on the running stack, stores its stack pointer in
// *save, switches to the stack pointer load and pops the registers saved
// there, returning into the other fiber (or, on a new fiber's stack, into
// posenc_host::fiber_entry). MXCSR and the x87 control word are left
// alone: no kernel changes them.
extern "C" void posenc_host_switch(void **save, void *load);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl posenc_host_switch\n"
        ".type posenc_host_switch,@function\n"
        "posenc_host_switch:\n"
        "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
        "\tmovq %rsp, (%rdi)\n"
        "\tmovq %rsi, %rsp\n"
        "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
        "\tret\n"
        ".size posenc_host_switch, .-posenc_host_switch\n");
#endif

namespace posenc_host {

// CpCopy is a cp.async copy in flight: its destination and the 16 bytes
// it will write there (cp_async16).
using CpCopy = std::pair<void *, std::array<unsigned char, 16>>;

// Fiber is one emulated CUDA thread.
struct Fiber {
#ifdef POSENC_HOST_FAST_SWITCH
	void *sp; // saved stack pointer while switched out
#else
	ucontext_t ctx;
#endif
	std::vector<char> stack;
	uint3 idx;
	bool done;
	unsigned int collectives; // warp collectives done in this block (their slot buffer's parity)
	// cp.async: the copies since the last commit, and the committed groups
	// not yet waited for, oldest first (cp_async16).
	std::vector<CpCopy> cp_open;
	std::deque<std::vector<CpCopy>> cp_groups;
};

// State of the running launch (one at a time: the emulator is
// single-threaded and not reentrant).
#ifdef POSENC_HOST_FAST_SWITCH
inline void *sched_sp; // the scheduler's stack pointer while a fiber runs
#else
inline ucontext_t sched_ctx;
#endif
inline std::vector<Fiber> fibers;
inline Fiber *current;
inline const std::function<void()> *body;
inline uint3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;
// kSlotBytes is a thread's slot in a warp collective's buffer (exchange):
// the largest operands, mma's a and b (six words).
constexpr size_t kSlotBytes = 24;
inline std::vector<unsigned char> slots; // two buffers of kSlotBytes per thread
inline cudaError_t last_error = cudaSuccess;
// mma_calls counts the threads' mma_m16n8k16_bf16 calls since the driver
// last read it (its host-only query of which kernel a launcher chose).
inline unsigned long long mma_calls;
// dyn_smem is the running block's dynamic shared memory (the launch's
// shmem bytes, filled with 0xff, a NaN in every float format, as each
// block starts: a read before a write meets NaN); dyn_max holds the
// kernels' cudaFuncAttributeMaxDynamicSharedMemorySize (48 KiB unset, as
// on a device: a launch asking more fails).
inline std::vector<uint4> dyn_smem;
inline std::vector<std::pair<const void *, size_t>> dyn_max;
constexpr size_t kDynDefault = 48 << 10;

// dyn_limit is func's largest dynamic shared memory a launch may ask.
inline size_t dyn_limit(const void *func) {
	for (const auto &f : dyn_max)
		if (f.first == func)
			return f.second;
	return kDynDefault;
}

// dynamic_shared is the running block's dynamic shared memory (what
// `extern __shared__ T x[]` names in a kernel).
inline uint4 *dynamic_shared() { return dyn_smem.data(); }

// kStack is each fiber's stack size: the kernels keep a few dozen scalars
// and small arrays.
constexpr size_t kStack = 64 * 1024;

#ifdef POSENC_HOST_FAST_SWITCH
// fiber_entry is where a new fiber's stack returns to: it runs the kernel
// body, marks the fiber done and switches to the scheduler for good.
[[noreturn]] inline void fiber_entry() {
	(*body)();
	current->done = true;
	posenc_host_switch(&current->sp, sched_sp);
	std::abort(); // never resumed
}

// start_fiber prepares f's stack so that switching to f.sp enters
// fiber_entry: six zero callee-saved slots, then fiber_entry as the return
// address, then a null one; with the stack top 16-byte aligned, fiber_entry
// starts with rsp ≡ 8 (mod 16), as after a call.
inline void start_fiber(Fiber &f) {
	const std::uintptr_t top = (std::uintptr_t)(f.stack.data() + f.stack.size()) & ~(std::uintptr_t)15;
	void **sp = (void **)(top - 64);
	for (int i = 0; i < 6; ++i)
		sp[i] = nullptr;
	sp[6] = (void *)&fiber_entry;
	sp[7] = nullptr;
	f.sp = sp;
}

// resume switches from the scheduler to f until it yields or finishes.
inline void resume(Fiber &f) { posenc_host_switch(&sched_sp, f.sp); }

// yield switches from the running fiber back to the scheduler.
inline void yield() { posenc_host_switch(&current->sp, sched_sp); }
#else
inline void fiber_main() {
	(*body)();
	current->done = true;
	// returning resumes uc_link, the scheduler
}

inline void start_fiber(Fiber &f) {
	getcontext(&f.ctx);
	f.ctx.uc_stack.ss_sp = f.stack.data();
	f.ctx.uc_stack.ss_size = f.stack.size();
	f.ctx.uc_link = &sched_ctx;
	makecontext(&f.ctx, fiber_main, 0);
}

inline void resume(Fiber &f) {
	if (swapcontext(&sched_ctx, &f.ctx) != 0) {
		std::perror("posenc_cuda_host: swapcontext");
		std::abort();
	}
}

// yield switches from the running fiber back to the scheduler.
inline void yield() {
	if (swapcontext(&current->ctx, &sched_ctx) != 0) {
		std::perror("posenc_cuda_host: swapcontext");
		std::abort();
	}
}
#endif

// launch runs body for every thread of every block of grid, with shmem
// bytes of dynamic shared memory (at most func's limit, dyn_limit).
inline void launch(dim3 grid, dim3 block, const std::function<void()> &kernel, size_t shmem = 0, const void *func = nullptr) {
	const unsigned long long nt = (unsigned long long)block.x * block.y * block.z;
	if (nt == 0 || nt > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
	    grid.y > 65535 || grid.z > 65535) {
		last_error = cudaErrorInvalidConfiguration;
		return;
	}
	if (shmem > dyn_limit(func)) {
		last_error = cudaErrorInvalidValue;
		return;
	}
	dyn_smem.resize((shmem + 15) / 16);
	body = &kernel;
	grid_dim = grid;
	block_dim = block;
	fibers.resize(nt);
	slots.assign(2 * kSlotBytes * nt, 0u);
	for (Fiber &f : fibers)
		if (f.stack.size() != kStack)
			f.stack.assign(kStack, 0);
	for (unsigned int bz = 0; bz < grid.z; ++bz)
		for (unsigned int by = 0; by < grid.y; ++by)
			for (unsigned int bx = 0; bx < grid.x; ++bx) {
				block_idx = uint3{bx, by, bz};
				if (!dyn_smem.empty())
					std::memset((void *)dyn_smem.data(), 0xff, dyn_smem.size() * sizeof(uint4));
				size_t n = 0;
				for (unsigned int tz = 0; tz < block.z; ++tz)
					for (unsigned int ty = 0; ty < block.y; ++ty)
						for (unsigned int tx = 0; tx < block.x; ++tx) {
							Fiber &f = fibers[n++];
							f.idx = uint3{tx, ty, tz};
							f.done = false;
							f.collectives = 0;
							f.cp_open.clear();
							f.cp_groups.clear();
							start_fiber(f);
						}
				for (bool running = true; running;) {
					running = false;
					for (Fiber &f : fibers) {
						if (f.done)
							continue;
						running = true;
						current = &f;
						thread_idx = f.idx;
						resume(f);
					}
				}
			}
	current = nullptr;
}

// linear_tid is the running thread's linear index in its block.
inline unsigned int linear_tid() {
	return thread_idx.x + block_dim.x * (thread_idx.y + block_dim.y * thread_idx.z);
}

} // namespace posenc_host

#define threadIdx (posenc_host::thread_idx)
#define blockIdx (posenc_host::block_idx)
#define blockDim (posenc_host::block_dim)
#define gridDim (posenc_host::grid_dim)

inline void __syncthreads() { posenc_host::yield(); }
// __syncwarp is a block-wide barrier here, stronger than CUDA's (which
// orders one warp's lanes): posenc's kernels call it in block-uniform code.
inline void __syncwarp(unsigned int = 0xffffffffu) { __syncthreads(); }

namespace posenc_host {

// exchange is a warp collective's data path: it copies the n bytes at mine
// (none when null) to the calling thread's slot of buffer c mod 2, c being
// the block's collectives so far, of every kind, passes one barrier and
// returns the buffer (thread t's slot at kSlotBytes·t), from which the
// caller reads its warp's slots. A thread can write buffer c mod 2 again
// only at collective c + 2, after collective c + 1's barrier, which every
// thread reaches after its reads of collective c.
inline const unsigned char *exchange(const void *mine, size_t n) {
	unsigned char *buf = slots.data() + (current->collectives++ & 1u) * kSlotBytes * fibers.size();
	if (mine)
		std::memcpy(buf + kSlotBytes * linear_tid(), mine, n);
	__syncthreads();
	return buf;
}

// slot_get reads the T at byte off of thread t's slot in buf.
template <class T>
inline T slot_get(const unsigned char *buf, size_t t, size_t off) {
	T x;
	std::memcpy(&x, buf + kSlotBytes * t + off, sizeof x);
	return x;
}

} // namespace posenc_host

inline cudaError_t cudaGetLastError() {
	cudaError_t e = posenc_host::last_error;
	posenc_host::last_error = cudaSuccess;
	return e;
}

// Runtime API subset for host programs (the posenc cudahost driver), so
// that a program written for a real device (cudaMalloc, copies, events)
// runs unchanged on the emulator: "device" memory is host memory aligned
// like cudaMalloc's (256 bytes), copies are memmove, launches are
// synchronous, so cudaDeviceSynchronize has nothing to wait for and events
// read a steady clock when recorded.

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

inline cudaError_t cudaMalloc(void **p, size_t n) {
	if (p == nullptr)
		return cudaErrorInvalidValue;
	*p = nullptr;
	if (n == 0)
		return cudaSuccess;
	void *q = std::aligned_alloc(256, (n + 255) / 256 * 256);
	if (q == nullptr)
		return cudaErrorMemoryAllocation;
	*p = q;
	return cudaSuccess;
}

inline cudaError_t cudaFree(void *p) {
	std::free(p);
	return cudaSuccess;
}

// cudaMallocAsync and cudaFreeAsync (stream-ordered allocation): launches
// are synchronous, so they are cudaMalloc and cudaFree.
inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }

inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind) {
	if ((int)kind < 0 || (int)kind > 4)
		return cudaErrorInvalidMemcpyDirection;
	if (n == 0)
		return cudaSuccess;
	if (dst == nullptr || src == nullptr)
		return cudaErrorInvalidValue;
	std::memmove(dst, src, n);
	return cudaSuccess;
}

inline cudaError_t cudaMemset(void *p, int value, size_t n) {
	if (n == 0)
		return cudaSuccess;
	if (p == nullptr)
		return cudaErrorInvalidValue;
	std::memset(p, value, n);
	return cudaSuccess;
}

inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

inline const char *cudaGetErrorString(cudaError_t e) {
	switch (e) {
	case cudaSuccess:
		return "no error";
	case cudaErrorInvalidValue:
		return "invalid argument";
	case cudaErrorMemoryAllocation:
		return "out of memory";
	case cudaErrorInvalidConfiguration:
		return "invalid configuration argument";
	case cudaErrorInvalidMemcpyDirection:
		return "invalid copy direction for memcpy";
	case cudaErrorInvalidResourceHandle:
		return "invalid resource handle";
	case cudaErrorNotReady:
		return "device not ready";
	}
	return "unrecognized error code";
}

// cudaDeviceProp: only the device name.
struct cudaDeviceProp {
	char name[256];
};

inline cudaError_t cudaGetDeviceCount(int *n) {
	*n = 1;
	return cudaSuccess;
}

inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device) {
	if (p == nullptr || device != 0)
		return cudaErrorInvalidValue;
	std::memset(p, 0, sizeof *p);
	std::snprintf(p->name, sizeof p->name, "host emulation (posenc_cuda_host.h, CPU)");
	return cudaSuccess;
}

// cudaGetDevice, cudaDeviceGetAttribute and
// cudaOccupancyMaxActiveBlocksPerMultiprocessor: the device the launchers
// size their splits for, an H100's 132 SMs holding kEmuBlocksPerSM blocks
// of every kernel (the emulator has no occupancy; launches run one block
// at a time whatever these say).
constexpr int kEmuSMs = 132, kEmuBlocksPerSM = 4;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
inline cudaError_t cudaGetDevice(int *device) {
	*device = 0;
	return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
	if (value == nullptr || device != 0 || attr != cudaDevAttrMultiProcessorCount)
		return cudaErrorInvalidValue;
	*value = kEmuSMs;
	return cudaSuccess;
}
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *, int block_size, size_t) {
	if (blocks == nullptr || block_size <= 0 || block_size > 1024)
		return cudaErrorInvalidValue;
	*blocks = kEmuBlocksPerSM;
	return cudaSuccess;
}

struct posenc_host_event {
	std::chrono::steady_clock::time_point t;
	bool recorded;
};
typedef posenc_host_event *cudaEvent_t;

inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
	if (e == nullptr)
		return cudaErrorInvalidValue;
	*e = new posenc_host_event{std::chrono::steady_clock::time_point(), false};
	return cudaSuccess;
}

inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = 0) {
	if (e == nullptr)
		return cudaErrorInvalidResourceHandle;
	e->t = std::chrono::steady_clock::now();
	e->recorded = true;
	return cudaSuccess;
}

inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { return e == nullptr ? cudaErrorInvalidResourceHandle : cudaSuccess; }

// cudaEventElapsedTime: milliseconds from start to end, as CUDA's.
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
	if (ms == nullptr)
		return cudaErrorInvalidValue;
	if (start == nullptr || end == nullptr)
		return cudaErrorInvalidResourceHandle;
	if (!start->recorded || !end->recorded)
		return cudaErrorNotReady;
	*ms = std::chrono::duration<float, std::milli>(end->t - start->t).count();
	return cudaSuccess;
}

inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
	delete e;
	return cudaSuccess;
}

// __shfl_xor_sync: lane l receives the value of lane l ^ lane_mask of its
// warp (a block-uniform call, through posenc_host::exchange). The mask
// argument is not checked.
namespace posenc_host {
// shfl_idx gives lane l the value of lane src_lane (mod 32) of its warp;
// shfl_xor the value of lane l ^ lane_mask.
template <typename T>
inline T shfl_idx(T v, int src_lane) {
	const unsigned int me = linear_tid();
	const unsigned char *buf = exchange(&v, sizeof v);
	const unsigned int src = (me & ~31u) | ((unsigned int)src_lane & 31u);
	return src < fibers.size() ? slot_get<T>(buf, src, 0) : v;
}

template <typename T>
inline T shfl_xor(T v, int lane_mask) {
	return shfl_idx(v, (int)(linear_tid() ^ (unsigned int)lane_mask));
}
} // namespace posenc_host
inline float __shfl_xor_sync(unsigned int, float v, int lane_mask) { return posenc_host::shfl_xor(v, lane_mask); }
inline unsigned int __shfl_xor_sync(unsigned int, unsigned int v, int lane_mask) { return posenc_host::shfl_xor(v, lane_mask); }
// __shfl_sync: lane l receives the value of lane src_lane of its warp (as
// __shfl_xor_sync, block-uniform; the mask is not checked).
inline int __shfl_sync(unsigned int, int v, int src_lane) { return posenc_host::shfl_idx(v, src_lane); }

inline float __uint_as_float(unsigned int x) {
	float f;
	std::memcpy(&f, &x, 4);
	return f;
}
inline float __int_as_float(int x) {
	float f;
	std::memcpy(&f, &x, 4);
	return f;
}
inline unsigned int __float_as_uint(float f) {
	unsigned int x;
	std::memcpy(&x, &f, 4);
	return x;
}

// f16 (IEEE 754 binary16) and bf16 storage with round-to-nearest-even
// conversions in software, bit-exact with the PTX cvt.rn instructions.
struct __half {
	unsigned short __x;
};
struct __nv_bfloat16 {
	unsigned short __x;
};

namespace posenc_host {

inline unsigned short f32_to_f16_bits(float f) {
	const unsigned int x = __float_as_uint(f);
	const unsigned int sign = (x >> 16) & 0x8000u;
	const unsigned int ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u) // NaN: keep it quiet
		return (unsigned short)(sign | 0x7e00u);
	if (ax >= 0x477ff000u) // ≥ 65520 rounds to ±Inf
		return (unsigned short)(sign | 0x7c00u);
	if (ax < 0x38800000u) { // below 2^-14: subnormal or zero, unit 2^-24
		const float a = __uint_as_float(ax) * 16777216.0f; // exact
		return (unsigned short)(sign | (unsigned int)std::nearbyint(a));
	}
	unsigned int r = ((((ax >> 23) - 127u + 15u)) << 10) | ((ax >> 13) & 0x3ffu);
	const unsigned int rem = ax & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (r & 1u)))
		++r; // a carry into the exponent is the correct rounding
	return (unsigned short)(sign | r);
}

inline float f16_bits_to_f32(unsigned short h) {
	const unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
	const unsigned int e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0) {
		const float v = (float)m * (1.0f / 16777216.0f);
		return sign ? -v : v;
	}
	if (e == 31)
		return __uint_as_float(sign | 0x7f800000u | (m << 13));
	return __uint_as_float(sign | ((e - 15u + 127u) << 23) | (m << 13));
}

inline unsigned short f32_to_bf16_bits(float f) {
	const unsigned int x = __float_as_uint(f);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((x >> 16) | 0x40u);
	return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_f32(unsigned short h) { return __uint_as_float((unsigned int)h << 16); }

} // namespace posenc_host

inline float __half2float(__half h) { return posenc_host::f16_bits_to_f32(h.__x); }
inline __half __float2half_rn(float f) { return __half{posenc_host::f32_to_f16_bits(f)}; }
inline __half __ushort_as_half(unsigned short x) { return __half{x}; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline float __bfloat162float(__nv_bfloat16 h) { return posenc_host::bf16_bits_to_f32(h.__x); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16{posenc_host::f32_to_bf16_bits(f)}; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) { return __nv_bfloat16{x}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }

namespace posenc_host {

// to_f32 and from_f32 convert one storage element (float, __half or
// __nv_bfloat16), for drivers.
inline float to_f32(float v) { return v; }
inline float to_f32(__half v) { return __half2float(v); }
inline float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
inline T from_f32(float v);
template <>
inline float from_f32<float>(float v) { return v; }
template <>
inline __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <>
inline __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// mma_m16n8k16_bf16 is the warp's mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32
// with d as its C and D (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
// floating point type"): lane l holds a[0..3], A's elements (row l/4,
// columns 2·(l%4) + {0, 1}), (row + 8, same), (row, columns + 8), (row + 8,
// columns + 8), and b[0..1], B's (rows 2·(l%4) + {0, 1}, column l/4) and
// (rows + 8, same), two bf16 per register, the lower index in the low
// half; it gets D's (row l/4, columns 2·(l%4) + {0, 1}) in d[0..1] and row
// + 8 in d[2..3]. Each D element is C plus the 16 products (exact in f32)
// summed in k order with fmaf, one of the orders the hardware's f32
// accumulation may take. Like the shuffles, a block-uniform call (through
// exchange).
inline void mma_m16n8k16_bf16(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2]) {
	++mma_calls;
	const unsigned int me = linear_tid();
	const unsigned int ops[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
	static_assert(sizeof ops <= kSlotBytes, "mma's operands fill a slot");
	const unsigned char *buf = exchange(ops, sizeof ops);
	const unsigned int warp = me & ~31u, lane = me & 31u, gid = lane >> 2, tig = lane & 3u;
	// elem is element e (0 or 1) of register word w of lane ln.
	auto elem = [&](unsigned int ln, int w, int e) {
		const unsigned int x = slot_get<unsigned int>(buf, warp + ln, 4 * w);
		return bf16_bits_to_f32((unsigned short)(e ? x >> 16 : x & 0xffffu));
	};
	// A[row][col] and B[k][n] from the lanes that hold them.
	auto A = [&](unsigned int row, unsigned int col) {
		const int w = (row >= 8 ? 1 : 0) + (col >= 8 ? 2 : 0);
		return elem(4 * (row & 7u) + (col & 7u) / 2, w, (int)(col & 1u));
	};
	auto B = [&](unsigned int k, unsigned int n) { return elem(4 * n + (k & 7u) / 2, 4 + (k >= 8 ? 1 : 0), (int)(k & 1u)); };
	for (int i = 0; i < 4; ++i) {
		const unsigned int row = gid + (i >= 2 ? 8u : 0u), col = 2 * tig + (unsigned int)(i & 1);
		float x = d[i];
		for (unsigned int k = 0; k < 16; ++k)
			x = std::fma(A(row, k), B(k, col), x);
		d[i] = x;
	}
}

// ldmatrix_m8n8 is the warp's ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16
// for N = n (2 or 4) 8×8 matrices of 16-bit elements (PTX ISA, "Warp-level
// matrix load instruction: ldmatrix"): lane 8i + j gives row, the address
// of row j of matrix i (8 elements, 16-byte aligned; for n = 2 lanes 16 to
// 31 give none, as their addresses are ignored); lane l gets in r[i] the
// elements (row l/4, columns 2·(l%4) and + 1) of matrix i, or with trans
// (rows 2·(l%4) and + 1, column l/4), the first in the low half. The rows
// are copied when given, so the result is the shared memory of that
// moment. A block-uniform call, as the shuffles (through exchange).
template <int N>
inline void ldmatrix_m8n8(unsigned int (&r)[N], const unsigned short *row, bool trans) {
	static_assert(N == 2 || N == 4, "ldmatrix loads 2 or 4 matrices here");
	const unsigned int me = linear_tid();
	const unsigned char *buf = exchange((me & 31u) < 8u * N ? row : nullptr, 16);
	const unsigned int warp = me & ~31u, lane = me & 31u;
	// M(i, a, b) is element b of row a of matrix i.
	auto M = [&](int i, unsigned int a, unsigned int b) { return (unsigned int)slot_get<unsigned short>(buf, warp + 8 * i + a, 2 * b); };
	for (int i = 0; i < N; ++i) {
		const unsigned int lo = trans ? M(i, 2 * (lane & 3u), lane >> 2) : M(i, lane >> 2, 2 * (lane & 3u));
		const unsigned int hi = trans ? M(i, 2 * (lane & 3u) + 1, lane >> 2) : M(i, lane >> 2, 2 * (lane & 3u) + 1);
		r[i] = lo | hi << 16;
	}
}

// cp_async16 is the running thread's cp.async of 16 bytes from src to dst,
// zeros where on is false (src is not read; PTX ISA, "cp.async", a source
// size of 0). The copy lands when the thread waits for its group
// (cp_async_wait); until then dst holds 0xff bytes (a NaN in every float
// format), so that a kernel reading dst before its wait and barrier, or a
// copy started over data other threads still read, meets NaN.
inline void cp_async16(void *dst, const void *src, bool on) {
	std::array<unsigned char, 16> b{};
	if (on)
		std::memcpy(b.data(), src, 16);
	std::memset(dst, 0xff, 16);
	current->cp_open.emplace_back(dst, b);
}

// cp_async_commit closes the running thread's group of copies
// (cp.async.commit_group).
inline void cp_async_commit() {
	current->cp_groups.push_back(std::move(current->cp_open));
	current->cp_open.clear();
}

// cp_async_wait completes the running thread's committed groups until at
// most n, the newest, are pending (cp.async.wait_group n).
inline void cp_async_wait(size_t n) {
	while (current->cp_groups.size() > n) {
		for (const auto &c : current->cp_groups.front())
			std::memcpy(c.first, c.second.data(), 16);
		current->cp_groups.pop_front();
	}
}

} // namespace posenc_host

// __reduce_or_sync: every lane of the warp gets the bitwise or of the
// lanes' v (a block-uniform call, as __shfl_xor_sync; the mask is not
// checked).
inline unsigned int __reduce_or_sync(unsigned int, unsigned int v) {
	const unsigned int me = posenc_host::linear_tid();
	const unsigned char *buf = posenc_host::exchange(&v, sizeof v);
	unsigned int x = 0;
	for (size_t l = me & ~31u; l <= (me | 31u) && l < posenc_host::fibers.size(); ++l)
		x |= posenc_host::slot_get<unsigned int>(buf, l, 0);
	return x;
}

// cudaFuncAttributes and cudaFuncGetAttributes: the field the generated
// launchers read, ptxVersion (every kernel here counts as built for sm_90).
struct cudaFuncAttributes {
	int binaryVersion, ptxVersion;
};
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *) {
	attr->binaryVersion = attr->ptxVersion = 90;
	return cudaSuccess;
}

// cudaFuncSetAttribute: the attribute the generated launchers set, the
// largest dynamic shared memory of func's launches (up to an H100's 227
// KiB, cudaDevAttrMaxSharedMemoryPerBlockOptin; more fails, as there).
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
inline cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value) {
	if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > (227 << 10))
		return cudaErrorInvalidValue;
	for (auto &f : posenc_host::dyn_max)
		if (f.first == func) {
			f.second = (size_t)value;
			return cudaSuccess;
		}
	posenc_host::dyn_max.emplace_back(func, (size_t)value);
	return cudaSuccess;
}

#endif // POSENC_CUDA_HOST_H
