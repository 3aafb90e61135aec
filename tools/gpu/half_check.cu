// half_check.cu: checks a generated f16/bf16 spec's CUDA kernels against the
// f32 kernels of the same spec on the device (posenc verify -gpu skips
// 16-bit specs: its bounds are float32 ones). Both get the same inputs,
// already rounded to the 16-bit type; the 16-bit kernel computes in f32 and
// rounds once on store, so each output should be within one unit in the last
// place (of the 16-bit type, at the f32 result's magnitude) of the f32
// kernel's output. It prints the largest error in such ulps and how many
// elements exceed 1 ulp, over whole launches of bench size.
//
// Built with nvcc from three translation units (gpu_check.sh, stage half):
//   nvcc -O3 -std=c++17 -arch=sm_90 -DF=<f32 spec> -DH=<16-bit spec> -DKIND=<1 rope|2 alibi>
//        -DHT=<__half|__nv_bfloat16> -DDIM=<head_dim (rope) or heads (alibi)>
//        -I<gen>/F -I<gen>/H half_check.cu <gen>/F/F.cu <gen>/H/H.cu
// or, without a GPU, with g++ -x c++ -std=c++20 -O1 -fno-strict-aliasing
// -include posenc_cuda_host.h -I verify/cudahost (host emulation; tiny shapes).
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
static const bool kEmulated = false;
#else
static const bool kEmulated = true;
#endif
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)
#define HDR(s) STR(s.cuh)
#include HDR(F)
#include HDR(H)
#define FF(s) CAT(CAT(CAT(posenc_, F), _), s)
#define HF(s) CAT(CAT(CAT(posenc_, H), _), s)

static void check(cudaError_t e, const char *what) {
	if (e != cudaSuccess) {
		std::printf("ERROR %s: %s (cudaError_t %d)\n", what, cudaGetErrorString(e), (int)e);
		std::exit(1);
	}
}

// 16-bit <-> float on the host (round to nearest even), through the
// storage type's own conversions (host-callable in cuda_fp16.h and
// cuda_bf16.h, and in the emulation header).
static bool is_bf16() { return std::strcmp(STR(HT), "__nv_bfloat16") == 0; }
static float back(__half h) { return __half2float(h); }
static float back(__nv_bfloat16 h) { return __bfloat162float(h); }
static void cvt(float f, __half &o) { o = __float2half_rn(f); }
static void cvt(float f, __nv_bfloat16 &o) { o = __float2bfloat16_rn(f); }
static float h2f(uint16_t b) {
	HT h;
	std::memcpy(&h, &b, 2);
	return back(h);
}
static uint16_t f2h(float f) {
	HT h;
	cvt(f, h);
	uint16_t b;
	std::memcpy(&b, &h, 2);
	return b;
}
// ulp of the 16-bit type at magnitude |v| (normal range).
static double ulp(double v) {
	const double a = std::fabs(v);
	const int mant = is_bf16() ? 7 : 10;
	const int emin = is_bf16() ? -126 : -14;
	int e = a > 0 ? (int)std::floor(std::log2(a)) : emin;
	if (e < emin)
		e = emin;
	return std::ldexp(1.0, e - mant);
}

static unsigned g_state = 12345u;
static float rnd() { // uniform in [-1, 1)
	g_state = g_state * 1664525u + 1013904223u;
	return (float)((g_state >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

struct Result {
	double worst = 0;
	size_t over = 0, n = 0, unchanged = 0;
};

static void compare(const std::vector<float> &outF, const std::vector<uint16_t> &outH, const std::vector<uint16_t> &inH, Result &r) {
	for (size_t i = 0; i < outF.size(); ++i) {
		const double e = std::fabs((double)h2f(outH[i]) - outF[i]) / ulp(outF[i]);
		if (!(e <= r.worst))
			r.worst = e; // NaN sticks
		r.over += !(e <= 1.0);
		r.unchanged += outH[i] == inH[i] && std::fabs(outF[i] - h2f(inH[i])) > ulp(outF[i]);
	}
	r.n += outF.size();
}

static void report(const char *what, const Result &r) {
	std::printf("%-14s %-16s %-44s %12zu elements: max err %.3f ulp, %zu over 1 ulp, %zu left unchanged where f32 changed: %s\n",
	            STR(H), STR(HT), what, r.n, r.worst, r.over, r.unchanged, (r.worst <= 1.0 && r.unchanged == 0) ? "ok" : "FAIL");
}

template <typename T>
static T *dev(size_t n) {
	T *p = nullptr;
	check(cudaMalloc((void **)&p, n * sizeof(T)), "cudaMalloc");
	return p;
}

#if KIND == 1
static int rope(int tokens, int heads, int pos0) {
	const size_t n = (size_t)tokens * heads * DIM;
	std::vector<uint16_t> inH(n), outH(n);
	std::vector<float> xf(n), outF(n);
	for (size_t i = 0; i < n; ++i) {
		inH[i] = f2h(2.0f * rnd());
		xf[i] = h2f(inH[i]);
	}
	std::vector<int> pos(tokens);
	for (int t = 0; t < tokens; ++t)
		pos[t] = pos0 + t;
	float *df = dev<float>(n);
	HT *dh = dev<HT>(n);
	int *dp = dev<int>(tokens);
	check(cudaMemcpy(df, xf.data(), n * 4, cudaMemcpyHostToDevice), "H2D");
	check(cudaMemcpy(dh, inH.data(), n * 2, cudaMemcpyHostToDevice), "H2D");
	check(cudaMemcpy(dp, pos.data(), tokens * 4, cudaMemcpyHostToDevice), "H2D");
	check(FF(apply)(df, dp, tokens, heads, 0), "f32 apply");
	check(HF(apply)((HF(t) *)dh, dp, tokens, heads, 0), "16-bit apply");
	check(cudaDeviceSynchronize(), "apply (execution)");
	check(cudaMemcpy(outF.data(), df, n * 4, cudaMemcpyDeviceToHost), "D2H");
	check(cudaMemcpy(outH.data(), dh, n * 2, cudaMemcpyDeviceToHost), "D2H");
	Result r;
	compare(outF, outH, inH, r);
	char what[128];
	std::snprintf(what, sizeof what, "apply tokens=%d heads=%d pos0=%d", tokens, heads, pos0);
	report(what, r);
	cudaFree(df);
	cudaFree(dh);
	cudaFree(dp);
	return !(r.worst <= 1.0 && r.unchanged == 0);
}

static int run() {
	int bad = 0;
	if (kEmulated)
		return rope(3, 2, 0) + rope(2, 3, 8000);
	bad += rope(4096, 32, 0);
	bad += rope(64, 32, 8000);
	bad += rope(4096, 32, 1); // odd positions
	return bad;
}
#else
static int softmax(int heads, int lq, int lk, int q_offset) {
	const size_t n = (size_t)heads * lq * lk;
	std::vector<uint16_t> inH(n), outH(n);
	std::vector<float> xf(n), outF(n);
	for (size_t i = 0; i < n; ++i) {
		inH[i] = f2h(8.0f * rnd());
		xf[i] = h2f(inH[i]);
	}
	float *df = dev<float>(n);
	HT *dh = dev<HT>(n);
	check(cudaMemcpy(df, xf.data(), n * 4, cudaMemcpyHostToDevice), "H2D");
	check(cudaMemcpy(dh, inH.data(), n * 2, cudaMemcpyHostToDevice), "H2D");
	const float scale = 0.08838834764831845f;
	check(FF(softmax)(df, lq, lk, q_offset, scale, 0), "f32 softmax");
	check(HF(softmax)((HF(t) *)dh, lq, lk, q_offset, scale, 0), "16-bit softmax");
	check(cudaDeviceSynchronize(), "softmax (execution)");
	check(cudaMemcpy(outF.data(), df, n * 4, cudaMemcpyDeviceToHost), "D2H");
	check(cudaMemcpy(outH.data(), dh, n * 2, cudaMemcpyDeviceToHost), "D2H");
	Result r;
	compare(outF, outH, inH, r);
	char what[128];
	std::snprintf(what, sizeof what, "softmax heads=%d lq=%d lk=%d q_offset=%d", heads, lq, lk, q_offset);
	report(what, r);
	cudaFree(df);
	cudaFree(dh);
	return !(r.worst <= 1.0 && r.unchanged == 0);
}

static int run() {
	const int h = DIM;
	if (kEmulated)
		return softmax(h, 3, 9, 6) + softmax(h, 1, 300, 299);
	int bad = 0;
	bad += softmax(h, 512, 512, 0);
	bad += softmax(h, 1, 8192, 8191);
	bad += softmax(h, 1, 131072, 131071);
	return bad;
}
#endif

int main() {
	const int bad = run();
	std::printf("half_check %s vs %s: %s\n", STR(H), STR(F), bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
