// posenc CUDA prelude: the minimal CUDA environment a generated posenc .cu
// needs when it is compiled by clang without the CUDA SDK, for the PTX
// compile check:
//
//	clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc \
//	      -nocudalib -O3 -S -o out.ptx -include prelude.h file.cu
//
// It plays the role of clang's __clang_cuda_runtime_wrapper.h (which
// -nocudainc turns off): the execution-space attributes, dim3 and the
// built-in index variables, the launch-configuration hook clang lowers
// kernel<<<...>>> to, the libdevice math functions the kernels call
// (declared here, resolved by libdevice at link time, so they stay external
// calls in the PTX), and the f16/bf16 storage types with their conversion
// intrinsics. With real nvcc the generated files include cuda_runtime.h,
// cuda_fp16.h and cuda_bf16.h instead; POSENC_PRELUDE selects this file.
#ifndef POSENC_PRELUDE
#define POSENC_PRELUDE 1

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __constant__ __attribute__((constant))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

typedef __SIZE_TYPE__ size_t;
typedef __UINTPTR_TYPE__ uintptr_t;

struct uint3 {
	unsigned int x, y, z;
};
struct uint4 {
	unsigned int x, y, z, w;
} __attribute__((aligned(16)));
struct dim3 {
	unsigned int x, y, z;
	__host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
	__host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
#include <__clang_cuda_builtin_vars.h>

// Runtime API subset used by the generated launchers.
typedef struct CUstream_st *cudaStream_t;
typedef enum cudaError_enum_posenc { cudaSuccess = 0, cudaErrorInvalidValue = 1 } cudaError_t;
extern "C" cudaError_t cudaGetLastError(void);
extern "C" cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t stream);
extern "C" cudaError_t cudaFreeAsync(void *p, cudaStream_t stream);
// The fields of cudaFuncAttributes the launchers read (the SDK's struct has
// more; only the device code is compiled here).
struct cudaFuncAttributes {
	int binaryVersion, ptxVersion;
};
extern "C" cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func);
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
extern "C" cudaError_t cudaGetDevice(int *device);
extern "C" cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
extern "C" cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func, int block_size, size_t dynamic_smem);
extern "C" cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value);
static __device__ __forceinline__ void __trap() { asm volatile("trap;"); }
// clang lowers kernel<<<g, b, s, st>>>(...) to a call of this hook when it
// does not know the CUDA version (no SDK): declare it as the SDK does.
extern "C" cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shmem = 0, cudaStream_t stream = 0);

// libdevice (https://docs.nvidia.com/cuda/libdevice-users-guide/).
extern "C" __device__ void __nv_sincosf(float x, float *s, float *c);
extern "C" __device__ float __nv_expf(float x);
extern "C" __device__ double __nv_pow(double x, double y);
extern "C" __device__ double __nv_exp(double x);
extern "C" __device__ double __nv_log1p(double x);

// The CUDA math API names the kernels use, as in clang's __clang_cuda_math.h
// (fma, rint, fmaf, fmaxf, fabsf map to single PTX instructions).
#if defined(__USE_FAST_MATH__)
// What nvcc's math headers do under -use_fast_math (which defines
// __USE_FAST_MATH__): the single-precision functions become the
// approximate intrinsics __sincosf and __expf (sin.approx, cos.approx,
// ex2.approx). Compiling with -D__USE_FAST_MATH__ thus shows, in the PTX,
// every place a kernel would lose accuracy under -use_fast_math.
static __device__ __forceinline__ void sincosf(float x, float *s, float *c) {
	asm("sin.approx.ftz.f32 %0, %1;" : "=f"(*s) : "f"(x));
	asm("cos.approx.ftz.f32 %0, %1;" : "=f"(*c) : "f"(x));
}
static __device__ __forceinline__ float expf(float x) {
	float r;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x * 1.4426950408889634f));
	return r;
}
#else
static __device__ __forceinline__ void sincosf(float x, float *s, float *c) { __nv_sincosf(x, s, c); }
static __device__ __forceinline__ float expf(float x) { return __nv_expf(x); }
#endif
static __device__ __forceinline__ float fmaf(float x, float y, float z) { return __builtin_fmaf(x, y, z); }
static __device__ __forceinline__ float fmaxf(float x, float y) { return __builtin_fmaxf(x, y); }
static __device__ __forceinline__ float fabsf(float x) { return __builtin_fabsf(x); }
static __device__ __forceinline__ double fma(double x, double y, double z) { return __builtin_fma(x, y, z); }
static __device__ __forceinline__ double rint(double x) { return __builtin_rint(x); }
static __device__ __forceinline__ double pow(double x, double y) { return __nv_pow(x, y); }
static __device__ __forceinline__ double exp(double x) { return __nv_exp(x); }
static __device__ __forceinline__ double log1p(double x) { return __nv_log1p(x); }

// Intrinsics (CUDA C++ Programming Guide, "Intrinsic Functions" and "Warp
// Shuffle Functions").
// __syncthreads is a clang NVPTX builtin (bar.sync 0).
// Inline PTX rather than clang's __nvvm_shfl_sync_* builtins: without the
// SDK clang assumes a CUDA version whose PTX predates shfl.sync (the
// emitted PTX for sm_80 is version 7.0, which has it).
static __device__ __forceinline__ float __shfl_xor_sync(unsigned int mask, float v, int lane_mask) {
	float r;
	asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=f"(r) : "f"(v), "r"(lane_mask), "r"(mask));
	return r;
}
static __device__ __forceinline__ unsigned int __shfl_xor_sync(unsigned int mask, unsigned int v, int lane_mask) {
	unsigned int r;
	asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(lane_mask), "r"(mask));
	return r;
}
static __device__ __forceinline__ int __shfl_sync(unsigned int mask, int v, int src_lane) {
	int r;
	asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(src_lane), "r"(mask));
	return r;
}
// __reduce_or_sync: redux.sync.or (PTX 7.0, sm_80).
static __device__ __forceinline__ unsigned int __reduce_or_sync(unsigned int mask, unsigned int v) {
	unsigned int r;
	asm volatile("redux.sync.or.b32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(mask));
	return r;
}
// __cvta_generic_to_shared: the shared-window address of a generic pointer
// to shared memory (cvta.to.shared), as ldmatrix takes it.
static __device__ __forceinline__ unsigned long long __cvta_generic_to_shared(const void *p) {
	unsigned long long r;
	asm("cvta.to.shared.u64 %0, %1;" : "=l"(r) : "l"(p));
	return r;
}
// __syncwarp: bar.warp.sync (PTX 6.0).
static __device__ __forceinline__ void __syncwarp(unsigned int mask = 0xffffffffu) {
	asm volatile("bar.warp.sync %0;" ::"r"(mask) : "memory");
}
static __device__ __forceinline__ float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }

// f16 and bf16 storage (cuda_fp16.h / cuda_bf16.h subset), converted with
// the PTX cvt instructions (round to nearest even).
struct __half {
	unsigned short __x;
};
struct __nv_bfloat16 {
	unsigned short __x;
};
static __device__ __forceinline__ float __half2float(__half h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.__x));
	return f;
}
static __device__ __forceinline__ __half __float2half_rn(float f) {
	__half h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.__x) : "f"(f));
	return h;
}
static __device__ __forceinline__ __half __ushort_as_half(unsigned short x) { return __half{x}; }
static __device__ __forceinline__ unsigned short __half_as_ushort(__half h) { return h.__x; }
static __device__ __forceinline__ float __bfloat162float(__nv_bfloat16 h) {
	return __uint_as_float((unsigned int)h.__x << 16);
}
static __device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rn(float f) {
	__nv_bfloat16 h;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.__x) : "f"(f));
	return h;
}
static __device__ __forceinline__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) { return __nv_bfloat16{x}; }
static __device__ __forceinline__ unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }

#endif // POSENC_PRELUDE
