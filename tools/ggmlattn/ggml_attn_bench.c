// ggml_attn_bench times ggml's CPU flash_attn_ext on posenc's attention
// benchmark shapes, one thread: 32 query heads × 128, ALiBi through the mask
// and max_bias = 8 (the slopes 2^(-(h+1)/4) of 32 heads, as bloom_7b1's),
// q float32, K/V float16 or float32.
//
//   decode:  one query at the last of nk positions (nk = 4096, 32768) over 32
//            or 8 KV heads. Each round: memcpy of the K+V bytes twice (the
//            second timed), then the graph twice (the second timed); the
//            figure is memcpy time ÷ kernel time (x-copy, the kernel's K+V
//            read rate as a multiple of memcpy's), median [quartiles] over
//            the rounds, plus the kernel's K+V GB/s and memcpy's.
//   prefill: causal, lq = lk = 512 and 2048, 32/32 heads; GFLOP/s counted as
//            4·heads·head_dim·lq·lk/2, median [quartiles] over the rounds
//            after one untimed run.
//
// Layout: ggml's contiguous tensors, K and V [head_dim, n_kv, n_head_kv]
// (head-major: each KV head's keys are consecutive), as test-backend-ops
// builds them; -tokmajor instead views one [n_kv][n_head_kv][head_dim]
// buffer (token-major, llama.cpp's KV cache and posenc's layout) through
// strides.
//
// The mask is f16 [n_kv, lq], contiguous, without padding (ggml at d99724f2
// has no GGML_KQ_MASK_PAD any more): -(distance) for a visible key, which
// ggml multiplies by each head's slope, -inf for a key after the query.
//
// Every configuration is checked once against a float64 reference on a few
// (query, head) rows; the largest absolute error is printed.
//
// Build (see run.sh): gcc -O3 -march=native, linked with ggml-base + ggml-cpu.
//
//   ggml_attn_bench [-r rounds] [-rp prefill rounds] [-decode] [-prefill]
//                   [-tokmajor] [-keys N] [-kv N] [-L N]
//
// (-keys, -kv and -L replace the default lists 4096 and 32768, 32 and 8,
// 512 and 2048 by one value; neither -decode nor -prefill: both.)

#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { QH = 32, HD = 128 };
static const float MAX_BIAS = 8.0f;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmpd(const void * a, const void * b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

// quart sorts v and returns its median and quartiles (indices n/2, n/4, 3n/4,
// as tools/attnratio).
static void quart(double * v, int n, double * med, double * q1, double * q3) {
    qsort(v, n, sizeof *v, cmpd);
    *med = v[n / 2];
    *q1  = v[n / 4];
    *q3  = v[3 * n / 4];
}

static float slope_of(int h) {
    // ggml's: n_head_log2 = 32, m0 = 2^(-max_bias/32), slope = m0^(h+1)
    return powf(powf(2.0f, -MAX_BIAS / QH), (float) (h + 1));
}

// setup is one flash_attn_ext graph and its buffers.
struct setup {
    struct ggml_context * ctx;
    struct ggml_tensor  * q, * k, * v, * mask, * out;
    struct ggml_cgraph  * gf;
    struct ggml_cplan     plan;
    void                * kbase, * vbase; // the K and V bytes (their owning tensors' data)
    size_t                kvbytes;        // K+V bytes
};

static void fill_f(struct ggml_tensor * t, int mod, int off, float div) {
    const int64_t n = ggml_nelements(t);
    if (t->type == GGML_TYPE_F32) {
        float * p = (float *) t->data;
        for (int64_t i = 0; i < n; i++) p[i] = (float) (i % mod - off) / div;
    } else {
        ggml_fp16_t * p = (ggml_fp16_t *) t->data;
        for (int64_t i = 0; i < n; i++) p[i] = ggml_fp32_to_fp16((float) (i % mod - off) / div);
    }
}

// build makes q [HD, lq, QH], K/V [HD, nk, kvh] of type kt (a view of a
// token-major buffer when tokmajor), the f16 mask [nk, lq] (query i at
// position nk-lq+i: -(distance) for visible keys, -inf after the query) and
// the graph.
static void build(struct setup * s, int lq, int nk, int kvh, enum ggml_type kt, int tokmajor,
                  struct ggml_threadpool * tp) {
    const size_t esz = ggml_type_size(kt);
    const size_t kv1 = (size_t) nk * kvh * HD * esz;
    const size_t mem = 2 * kv1 + (size_t) lq * QH * HD * 4 * 2 + (size_t) nk * lq * 2 + 16 * ggml_tensor_overhead() + ggml_graph_overhead() + (1 << 20);
    struct ggml_init_params ip = { mem, NULL, false };
    s->ctx = ggml_init(ip);
    if (!s->ctx) { fprintf(stderr, "ggml_init(%zu bytes) failed\n", mem); exit(1); }

    s->q = ggml_new_tensor_3d(s->ctx, GGML_TYPE_F32, HD, lq, QH);
    fill_f(s->q, 7, 3, 8.0f);
    struct ggml_tensor * kb, * vb;
    if (tokmajor) {
        kb = ggml_new_tensor_3d(s->ctx, kt, HD, kvh, nk);
        vb = ggml_new_tensor_3d(s->ctx, kt, HD, kvh, nk);
        s->k = ggml_permute(s->ctx, kb, 0, 2, 1, 3); // -> [HD, nk, kvh], nb1 = kvh·HD·esz
        s->v = ggml_permute(s->ctx, vb, 0, 2, 1, 3);
    } else {
        kb = s->k = ggml_new_tensor_3d(s->ctx, kt, HD, nk, kvh);
        vb = s->v = ggml_new_tensor_3d(s->ctx, kt, HD, nk, kvh);
    }
    fill_f(kb, 5, 2, 4.0f);
    fill_f(vb, 3, 1, 2.0f);
    s->kbase = kb->data;
    s->vbase = vb->data;
    s->kvbytes = 2 * kv1;

    s->mask = ggml_new_tensor_2d(s->ctx, GGML_TYPE_F16, nk, lq);
    ggml_fp16_t * m = (ggml_fp16_t *) s->mask->data;
    for (int i = 0; i < lq; i++) {
        const int qp = nk - lq + i;
        for (int j = 0; j < nk; j++) {
            m[(size_t) i * nk + j] = ggml_fp32_to_fp16(j <= qp ? -(float) (qp - j) : -INFINITY);
        }
    }

    s->out = ggml_flash_attn_ext(s->ctx, s->q, s->k, s->v, s->mask, 1.0f / sqrtf((float) HD), MAX_BIAS, 0.0f);
    ggml_flash_attn_ext_set_prec(s->out, GGML_PREC_F32);
    s->gf = ggml_new_graph(s->ctx);
    ggml_build_forward_expand(s->gf, s->out);
    s->plan = ggml_graph_plan(s->gf, 1, tp);
    s->plan.work_data = s->plan.work_size ? malloc(s->plan.work_size) : NULL;
}

static void run(struct setup * s) {
    if (ggml_graph_compute(s->gf, &s->plan) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "ggml_graph_compute failed\n");
        exit(1);
    }
}

static void teardown(struct setup * s) {
    free(s->plan.work_data);
    ggml_free(s->ctx);
}

static double elem(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2) {
    const char * p = (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2];
    return t->type == GGML_TYPE_F32 ? *(const float *) p : ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
}

// check compares out (res [HD, QH, lq]) with a float64 reference for queries
// qs[] and heads hs[] and returns the largest absolute error.
static double check(const struct setup * s, int lq, int nk, int kvh, const int * qs, int nq, const int * hs, int nh) {
    double worst = 0, sc[HD], acc[HD];
    double * p = malloc(sizeof(double) * nk);
    for (int a = 0; a < nq; a++) {
        const int i = qs[a], qp = nk - lq + i;
        for (int b = 0; b < nh; b++) {
            const int h = hs[b], hk = h / (QH / kvh);
            for (int d = 0; d < HD; d++) sc[d] = elem(s->q, d, i, h);
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j <= qp; j++) {
                double dot = 0;
                for (int d = 0; d < HD; d++) dot += sc[d] * elem(s->k, d, j, hk);
                p[j] = dot / sqrt((double) HD) - (double) slope_of(h) * (qp - j);
                if (p[j] > mx) mx = p[j];
            }
            for (int d = 0; d < HD; d++) acc[d] = 0;
            for (int j = 0; j <= qp; j++) {
                const double e = exp(p[j] - mx);
                sum += e;
                for (int d = 0; d < HD; d++) acc[d] += e * elem(s->v, d, j, hk);
            }
            for (int d = 0; d < HD; d++) {
                const double got = elem(s->out, d, h, i), err = fabs(got - acc[d] / sum);
                if (err > worst || got != got) worst = got != got ? INFINITY : err;
            }
        }
    }
    free(p);
    return worst;
}

static const char * tname(enum ggml_type t) { return t == GGML_TYPE_F16 ? "f16" : "f32"; }

static void decode(int nk, int kvh, enum ggml_type kt, int tokmajor, int rounds, struct ggml_threadpool * tp) {
    struct setup s;
    build(&s, 1, nk, kvh, kt, tokmajor, tp);
    const size_t kb = s.kvbytes / 2;
    char * dst = aligned_alloc(64, s.kvbytes);
    memset(dst, 1, s.kvbytes);
    double * tc = malloc(sizeof(double) * rounds), * tk = malloc(sizeof(double) * rounds), * rr = malloc(sizeof(double) * rounds);
    for (int r = 0; r < rounds; r++) {
        memcpy(dst, s.kbase, kb); memcpy(dst + kb, s.vbase, kb);
        double t0 = now();
        memcpy(dst, s.kbase, kb); memcpy(dst + kb, s.vbase, kb);
        tc[r] = now() - t0;
        run(&s);
        t0 = now();
        run(&s);
        tk[r] = now() - t0;
        rr[r] = tc[r] / tk[r];
    }
    const int hs[] = { 0, 7, 31 }, qs[] = { 0 };
    const double err = check(&s, 1, nk, kvh, qs, 1, hs, 3);
    double km, k1, k3, cm, c1, c3, xm, x1, x3;
    quart(tk, rounds, &km, &k1, &k3);
    quart(tc, rounds, &cm, &c1, &c3);
    quart(rr, rounds, &xm, &x1, &x3);
    printf("decode  keys=%-6d kv=%-2d %s %-9s K+V=%4zu MiB  kernel %8.3f ms  %6.2f GB/s  memcpy %6.2f GB/s  x-copy %.2f [%.2f, %.2f]  maxerr %.1e\n",
           nk, kvh, tname(kt), tokmajor ? "tokmajor" : "headmajor", s.kvbytes >> 20, km * 1e3, s.kvbytes / km / 1e9, s.kvbytes / cm / 1e9,
           xm, x1, x3, err);
    fflush(stdout);
    free(tc); free(tk); free(rr); free(dst);
    teardown(&s);
}

static void prefill(int L, enum ggml_type kt, int tokmajor, int rounds, struct ggml_threadpool * tp) {
    struct setup s;
    build(&s, L, L, QH, kt, tokmajor, tp);
    double * t = malloc(sizeof(double) * rounds);
    run(&s);
    for (int r = 0; r < rounds; r++) {
        const double t0 = now();
        run(&s);
        t[r] = now() - t0;
    }
    const int hs[] = { 0, 31 }, qs[] = { 0, L / 2 + 1, L - 1 };
    const double err = check(&s, L, L, QH, qs, 3, hs, 2);
    const double flops = 4.0 * QH * HD * (double) L * L / 2;
    double tm, t1, t3;
    quart(t, rounds, &tm, &t1, &t3);
    // the slower quartile time gives the lower GFLOP/s
    printf("prefill L=%-5d       kv=%-2d %s %-9s               %8.2f ms  %6.2f GFLOP/s [%.2f, %.2f]  maxerr %.1e\n",
           L, QH, tname(kt), tokmajor ? "tokmajor" : "headmajor", tm * 1e3, flops / tm / 1e9, flops / t3 / 1e9, flops / t1 / 1e9, err);
    fflush(stdout);
    free(t);
    teardown(&s);
}

int main(int argc, char ** argv) {
    int rounds = 7, prounds = 5, dodec = 0, dopre = 0, tokmajor = 0, onekeys = 0, onekv = 0, oneL = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-rp") && i + 1 < argc) prounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-decode")) dodec = 1;
        else if (!strcmp(argv[i], "-prefill")) dopre = 1;
        else if (!strcmp(argv[i], "-tokmajor")) tokmajor = 1;
        else if (!strcmp(argv[i], "-keys") && i + 1 < argc) onekeys = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-kv") && i + 1 < argc) onekv = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-L") && i + 1 < argc) oneL = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-r rounds] [-rp prefill rounds] [-decode] [-prefill] [-tokmajor] [-keys N] [-kv N] [-L N]\n", argv[0]);
            return 2;
        }
    }
    if (!dodec && !dopre) dodec = dopre = 1;
    if (rounds < 1 || prounds < 1 || onekeys < 0 || oneL < 0 || onekv < 0 || (onekv && QH % onekv)) {
        fprintf(stderr, "bad -r, -rp, -keys, -L or -kv (which must divide %d)\n", QH);
        return 2;
    }

    ggml_cpu_init();
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(1);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);

    printf("ggml %s (commit %s), flash_attn_ext, 1 thread, %d q heads x %d, ALiBi max_bias %.0f, q f32; AVX512 %d AVX2 %d F16C %d FMA %d\n",
           ggml_version(), ggml_commit(), QH, HD, MAX_BIAS, ggml_cpu_has_avx512(), ggml_cpu_has_avx2(), ggml_cpu_has_f16c(), ggml_cpu_has_fma());
    const enum ggml_type types[] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    if (dodec) {
        const int keys[] = { onekeys ? onekeys : 4096, 32768 }, kvs[] = { onekv ? onekv : 32, 8 };
        for (int a = 0; a < (onekeys ? 1 : 2); a++)
            for (int b = 0; b < (onekv ? 1 : 2); b++)
                for (int c = 0; c < 2; c++) decode(keys[a], kvs[b], types[c], tokmajor, rounds, tp);
    }
    if (dopre) {
        const int Ls[] = { oneL ? oneL : 512, 2048 };
        for (int a = 0; a < (oneL ? 1 : 2); a++)
            for (int c = 0; c < 2; c++) prefill(Ls[a], types[c], tokmajor, prounds, tp);
    }
    ggml_threadpool_free(tp);
    return 0;
}
