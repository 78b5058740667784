// Render thread: the band-limited resampler's inner products, in C so that x86-64 machines with AVX2 and FMA
// (nearly all since 2013) get eight-lane fused multiply-adds, and those with AVX-512 sixteen-lane ones, while the
// package still builds for baseline x86-64. Every build runs the same lane-wise fused operations in the same order
// (the portable one through correctly rounded fmaf), so a sample has the same bits on every machine. The kernels
// are chosen once at load time by CPUID; ENSEMBLE_NO_AVX512=1 in the environment keeps the AVX2 ones (to compare).
#include "SincKernel.h"
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));
typedef float v16 __attribute__((vector_size(64)));

// Unaligned loads as macros, so each kernel inlines them in its own target.
#define load8(p) ({ v8 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define load4(p) ({ v4 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define load16(p) ({ v16 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define reduce(h) (((h)[0] + (h)[2]) + ((h)[1] + (h)[3]))

// The source's sample type X, f32 (Float) or i16 (a 16-bit compact sound's integers): X_t the element, X_loadN(p)
// N samples as Floats (an int16 converts exactly), X_scale(s) what a sum is multiplied by to give the sum over the
// samples as Floats (x·2⁻¹⁵ for int16: a power of two only moves the exponents, so Σ w·(x·2⁻¹⁵) computed with the
// same fused operations is (Σ w·x)·2⁻¹⁵ bit for bit while no value is subnormal).
typedef float f32_t;
typedef int16_t i16_t;
typedef int16_t s4 __attribute__((vector_size(8)));
typedef int16_t s8 __attribute__((vector_size(16)));
typedef int16_t s16 __attribute__((vector_size(32)));
#define f32_load4(p) load4(p)
#define f32_load8(p) load8(p)
#define f32_load16(p) load16(p)
#define f32_scale(s) (s)
#define i16_load4(p) ({ s4 v_; memcpy(&v_, (p), sizeof v_); __builtin_convertvector(v_, v4); })
#define i16_load8(p) ({ s8 v_; memcpy(&v_, (p), sizeof v_); __builtin_convertvector(v_, v8); })
#define i16_load16(p) ({ s16 v_; memcpy(&v_, (p), sizeof v_); __builtin_convertvector(v_, v16); })
#define i16_scale(s) ((s) * 0x1p-15f)
#define XLOAD(X, n, p) X##_load##n(p)

// The blocks of sixteen taps, eight lanes wide: block 2m's products into a0, block 2m + 1's into a1.
#define MAIN8(n, c, X)                                                                                       \
    for (; j + 16 <= whole; j += 16) {                                                                       \
        for (int f = 0; f < n; f++) {                                                                        \
            const float *rw = row[f], *nx = row[f] + ensemble_sinc_stride(taps);                             \
            v8 w0 = __builtin_elementwise_fma(t8[f], load8(nx + j) - load8(rw + j), load8(rw + j));          \
            v8 w1 = __builtin_elementwise_fma(t8[f], load8(nx + j + 8) - load8(rw + j + 8), load8(rw + j + 8)); \
            for (int k = 0; k < c; k++) {                                                                    \
                a0[f][k] = __builtin_elementwise_fma(w0, XLOAD(X, 8, x[f * c + k] + j), a0[f][k]);           \
                a1[f][k] = __builtin_elementwise_fma(w1, XLOAD(X, 8, x[f * c + k] + j + 8), a1[f][k]);       \
            }                                                                                                \
        }                                                                                                    \
    }

// The same blocks sixteen lanes wide (AVX-512): lanes 0…7 of one accumulator are a0's, lanes 8…15 a1's, every
// lane the same fused operations in the same order as MAIN8, so the same bits.
#define MAIN16(n, c, X)                                                                                      \
    if (whole >= 16) {                                                                                       \
        v16 a[n][c];                                                                                         \
        for (int f = 0; f < n; f++)                                                                          \
            for (int k = 0; k < c; k++) a[f][k] = (v16){0};                                                  \
        for (; j + 16 <= whole; j += 16) {                                                                   \
            for (int f = 0; f < n; f++) {                                                                    \
                const float *rw = row[f], *nx = row[f] + ensemble_sinc_stride(taps);                         \
                v16 t16 = __builtin_shufflevector(t8[f], t8[f], 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7); \
                v16 w = __builtin_elementwise_fma(t16, load16(nx + j) - load16(rw + j), load16(rw + j));     \
                for (int k = 0; k < c; k++)                                                                  \
                    a[f][k] = __builtin_elementwise_fma(w, XLOAD(X, 16, x[f * c + k] + j), a[f][k]);         \
            }                                                                                                \
        }                                                                                                    \
        for (int f = 0; f < n; f++)                                                                          \
            for (int k = 0; k < c; k++) {                                                                    \
                a0[f][k] = __builtin_shufflevector(a[f][k], a[f][k], 0, 1, 2, 3, 4, 5, 6, 7);                \
                a1[f][k] = __builtin_shufflevector(a[f][k], a[f][k], 8, 9, 10, 11, 12, 13, 14, 15);          \
            }                                                                                                \
    }

// GROUP(n, c): `n` frames of `c` channels at once, frame f's channel k read from x[f·c + k] and written to
// out[k][f]. Per frame: the weights of eight taps are row + t·(next − row) (one fused multiply-add, shared by
// the channels); each channel's products accumulate (fused) into two accumulators, blocks of eight alternating,
// a last four taps (taps = 8m + 4) into the sum of both halves, then a fixed pairwise sum. With n > 1 the
// frames' independent chains overlap; every n computes each frame with the same operations in the same order.
// `odd` / `four`: whether taps has an odd block of eight past the sixteens / a last four, 1 or 0 as constants (the
// caller's copy for that case, without the tests), −1 to test at run time.
#define GROUP(suffix, attributes, MAIN, n, c, X)                                                             \
    attributes static inline __attribute__((always_inline)) void group##n##x##c##_##suffix(                  \
        const X##_t *const *x, const float *const *row, const float *t, long taps, const int odd,            \
        const int four, float *const *out) {                                                                 \
        v8 t8[n], a0[n][c], a1[n][c];                                                                        \
        for (int f = 0; f < n; f++) {                                                                        \
            t8[f] = (v8){t[f], t[f], t[f], t[f], t[f], t[f], t[f], t[f]};                                    \
            for (int k = 0; k < c; k++) a0[f][k] = a1[f][k] = (v8){0};                                       \
        }                                                                                                    \
        long whole = taps & ~7L, j = 0;                                                                      \
        MAIN(n, c, X)                                                                                        \
        int eight = odd < 0 ? j < whole : odd;                                                               \
        v4 sums[n][c];                                                                                       \
        for (int f = 0; f < n; f++) {                                                                        \
            const float *rw = row[f], *nx = row[f] + ensemble_sinc_stride(taps);                             \
            long i = j;                                                                                      \
            if (eight) {                                                                                     \
                v8 w0 = __builtin_elementwise_fma(t8[f], load8(nx + i) - load8(rw + i), load8(rw + i));      \
                for (int k = 0; k < c; k++)                                                                  \
                    a0[f][k] = __builtin_elementwise_fma(w0, XLOAD(X, 8, x[f * c + k] + i), a0[f][k]);       \
                i += 8;                                                                                      \
            }                                                                                                \
            v4 t4 = {t[f], t[f], t[f], t[f]};                                                                \
            int last4 = four < 0 ? i < taps : four;                                                          \
            v4 w = last4 ? __builtin_elementwise_fma(t4, load4(nx + i) - load4(rw + i), load4(rw + i))       \
                            : (v4){0};                                                                       \
            for (int k = 0; k < c; k++) {                                                                    \
                v8 acc = a0[f][k] + a1[f][k];                                                                \
                v4 sum = __builtin_shufflevector(acc, acc, 0, 1, 2, 3) + __builtin_shufflevector(acc, acc, 4, 5, 6, 7); \
                if (last4) sum = __builtin_elementwise_fma(w, XLOAD(X, 4, x[f * c + k] + i), sum);           \
                sums[f][k] = sum;                                                                            \
            }                                                                                                \
        }                                                                                                    \
        if (n * c == 4) {                                                                                    \
            /* Four sums at once, transposed: lane q of the result is (s_q[0] + s_q[2]) + (s_q[1] + s_q[3]), \
               `reduce` of sum q, the same additions in the same order. */                                   \
            v4 *q = &sums[0][0];                                                                             \
            v4 u = __builtin_shufflevector(q[0], q[1], 0, 4, 1, 5) + __builtin_shufflevector(q[0], q[1], 2, 6, 3, 7); \
            v4 v = __builtin_shufflevector(q[2], q[3], 0, 4, 1, 5) + __builtin_shufflevector(q[2], q[3], 2, 6, 3, 7); \
            v4 r = __builtin_shufflevector(u, v, 0, 1, 4, 5) + __builtin_shufflevector(u, v, 2, 3, 6, 7);    \
            for (int f = 0; f < n; f++)                                                                      \
                for (int k = 0; k < c; k++) out[k][f] = X##_scale(r[f * c + k]);                             \
        } else {                                                                                             \
            for (int f = 0; f < n; f++)                                                                      \
                for (int k = 0; k < c; k++) out[k][f] = X##_scale(reduce(sums[f][k]));                       \
        }                                                                                                    \
    }

// The single-frame kernels and RUN: `count` frames from fixed-point `start`, mono four at a time, stereo two.
#define SINC_KERNELS(suffix, attributes, MAIN, COPIES, X)                                                    \
    GROUP(suffix, attributes, MAIN, 1, 1, X)                                                                 \
    GROUP(suffix, attributes, MAIN, 4, 1, X)                                                                 \
    GROUP(suffix, attributes, MAIN, 1, 2, X)                                                                 \
    GROUP(suffix, attributes, MAIN, 2, 2, X)                                                                 \
    attributes static inline float mono_##suffix(const X##_t *x, const float *row, long taps, float t) {     \
        float value;                                                                                         \
        float *out[1] = {&value};                                                                            \
        group1x1_##suffix(&x, &row, &t, taps, -1, -1, out);                                                  \
        return value;                                                                                        \
    }                                                                                                        \
    attributes static inline void stereo_##suffix(const X##_t *l, const X##_t *r, const float *row,          \
                                                  long taps, float t, float *pair) {                         \
        const X##_t *x[2] = {l, r};                                                                          \
        float *out[2] = {pair, pair + 1};                                                                    \
        group1x2_##suffix(x, &row, &t, taps, -1, -1, out);                                                   \
    }                                                                                                        \
    /* The groups of frames (from *position, which it advances); returns the frames done. `odd`, `four`: GROUP's. */ \
    attributes static inline __attribute__((always_inline)) long groups_##suffix(                            \
        const X##_t *l, const X##_t *r, int stereo, const float *data, long taps, uint64_t *position, uint64_t step, \
        long count, float *outL, float *outR, const int odd, const int four) {                               \
        uint64_t f = *position;                                                                              \
        long k = 0;                                                                                          \
        if (stereo) {                                                                                        \
            for (; k + 2 <= count; k += 2) {                                                                 \
                const X##_t *x[4];                                                                           \
                const float *row[2];                                                                         \
                float t[2];                                                                                  \
                for (int g = 0; g < 2; g++, f += step) {                                                     \
                    uint32_t fraction = (uint32_t)f;                                                         \
                    x[2 * g] = l + (long)(f >> 32);                                                          \
                    x[2 * g + 1] = r + (long)(f >> 32);                                                      \
                    row[g] = data + ensemble_sinc_stride(taps) * (long)(fraction >> 24);                     \
                    t[g] = (float)(fraction & 0xFFFFFFu) * 0x1p-24f;                                         \
                }                                                                                            \
                float *out[2] = {outL + k, outR + k};                                                        \
                group2x2_##suffix(x, row, t, taps, odd, four, out);                                          \
            }                                                                                                \
        } else {                                                                                             \
            for (; k + 4 <= count; k += 4) {                                                                 \
                const X##_t *x[4];                                                                           \
                const float *row[4];                                                                         \
                float t[4];                                                                                  \
                for (int g = 0; g < 4; g++, f += step) {                                                     \
                    uint32_t fraction = (uint32_t)f;                                                         \
                    x[g] = l + (long)(f >> 32);                                                              \
                    row[g] = data + ensemble_sinc_stride(taps) * (long)(fraction >> 24);                     \
                    t[g] = (float)(fraction & 0xFFFFFFu) * 0x1p-24f;                                         \
                }                                                                                            \
                float *out[1] = {outL + k};                                                                  \
                group4x1_##suffix(x, row, t, taps, odd, four, out);                                          \
            }                                                                                                \
        }                                                                                                    \
        *position = f;                                                                                       \
        return k;                                                                                            \
    }                                                                                                        \
    attributes static void run_##suffix(const X##_t *l, const X##_t *r, int stereo, const float *data,       \
                                        long taps, uint64_t start, uint64_t step, long count,                \
                                        float *outL, float *outR) {                                          \
        uint64_t f = start;                                                                                  \
        long k;                                                                                              \
        /* COPIES: a copy of the groups for each case of the tails (none, a last 4, an odd 8, both), whose   \
           frames test none: on Zen 5, AVX-512 1…27 % less time a frame; AVX2's copies with tails came out   \
           2…17 % slower (register allocation), so it has one copy that tests them (COPIES 0). */            \
        if (COPIES && (taps & 8))                                                                            \
            k = taps & 4 ? groups_##suffix(l, r, stereo, data, taps, &f, step, count, outL, outR, 1, 1)      \
                         : groups_##suffix(l, r, stereo, data, taps, &f, step, count, outL, outR, 1, 0);     \
        else if (COPIES && (taps & 4))                                                                       \
            k = groups_##suffix(l, r, stereo, data, taps, &f, step, count, outL, outR, 0, 1);                \
        else if (COPIES && !(taps & 12))                                                                     \
            k = groups_##suffix(l, r, stereo, data, taps, &f, step, count, outL, outR, 0, 0);                \
        else                                                                                                 \
            k = groups_##suffix(l, r, stereo, data, taps, &f, step, count, outL, outR, -1, -1);              \
        for (; k < count; k++, f += step) {                                                                  \
            long i = (long)(f >> 32);                                                                        \
            uint32_t fraction = (uint32_t)f;                                                                 \
            const float *row = data + ensemble_sinc_stride(taps) * (long)(fraction >> 24);                   \
            float t = (float)(fraction & 0xFFFFFFu) * 0x1p-24f;                                              \
            if (stereo) {                                                                                    \
                float pair[2];                                                                               \
                stereo_##suffix(l + i, r + i, row, taps, t, pair);                                           \
                outL[k] = pair[0];                                                                           \
                outR[k] = pair[1];                                                                           \
            } else {                                                                                         \
                outL[k] = mono_##suffix(l + i, row, taps, t);                                                \
            }                                                                                                \
        }                                                                                                    \
    }

SINC_KERNELS(portable, , MAIN8, 0, f32)
SINC_KERNELS(portable_i16, , MAIN8, 0, i16)

// The portable kernels whatever the CPU, so a test can compare them with the ones chosen.
float ensemble_sinc_mono_portable(const float *x, const float *row, long taps, float t) {
    return mono_portable(x, row, taps, t);
}

void ensemble_sinc_stereo_portable(const float *l, const float *r, const float *row, long taps, float t, float *out) {
    stereo_portable(l, r, row, taps, t, out);
}

static float (*mono_kernel)(const float *, const float *, long, float) = mono_portable;
static void (*stereo_kernel)(const float *, const float *, const float *, long, float, float *) = stereo_portable;
static void (*run_kernel)(const float *, const float *, int, const float *, long, uint64_t, uint64_t, long, float *,
                          float *) = run_portable;
static void (*run_i16_kernel)(const int16_t *, const int16_t *, int, const float *, long, uint64_t, uint64_t, long,
                              float *, float *) = run_portable_i16;

#if defined(__x86_64__)
SINC_KERNELS(avx2, __attribute__((target("avx2,fma"))), MAIN8, 0, f32)
SINC_KERNELS(avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))), MAIN16, 1, f32)
SINC_KERNELS(avx2_i16, __attribute__((target("avx2,fma"))), MAIN8, 0, i16)
SINC_KERNELS(avx512_i16, __attribute__((target("avx512f,avx512vl,avx2,fma"))), MAIN16, 1, i16)

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_kernels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        mono_kernel = mono_avx2;
        stereo_kernel = stereo_avx2;
        run_kernel = run_avx2;
        run_i16_kernel = run_avx2_i16;
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && !getenv("ENSEMBLE_NO_AVX512")) {
        mono_kernel = mono_avx512;
        stereo_kernel = stereo_avx512;
        run_kernel = run_avx512;
        run_i16_kernel = run_avx512_i16;
    }
}
#endif

float ensemble_sinc_mono(const float *x, const float *row, long taps, float t) {
    return mono_kernel(x, row, taps, t);
}

// Whether this CPU has build `path` (0 portable, 1 AVX2/FMA, 2 AVX-512).
static int has_path(int path) {
    if (path == 0) return 1;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (path == 1) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (path == 2) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#endif
    return 0;
}

typedef void (*run_f32)(const float *, const float *, int, const float *, long, uint64_t, uint64_t, long, float *,
                        float *);
typedef void (*run_i16)(const int16_t *, const int16_t *, int, const float *, long, uint64_t, uint64_t, long, float *,
                        float *);

// The builds by path number (0 portable, 1 AVX2/FMA, 2 AVX-512), those this file has for the target.
static const struct {
    run_f32 f32;
    run_i16 i16;
} builds[] = {
    {run_portable, run_portable_i16},
#if defined(__x86_64__)
    {run_avx2, run_avx2_i16},
    {run_avx512, run_avx512_i16},
#endif
};

int ensemble_sinc_run_path(int path, const float *l, const float *r, int stereo, const float *data, long taps,
                           uint64_t start, uint64_t step, long count, float *outL, float *outR) {
    if (!has_path(path)) return 0;
    builds[path].f32(l, r, stereo, data, taps, start, step, count, outL, outR);
    return 1;
}

int ensemble_sinc_run_i16_path(int path, const int16_t *l, const int16_t *r, int stereo, const float *data, long taps,
                               uint64_t start, uint64_t step, long count, float *outL, float *outR) {
    if (!has_path(path)) return 0;
    builds[path].i16(l, r, stereo, data, taps, start, step, count, outL, outR);
    return 1;
}

void ensemble_sinc_stereo(const float *l, const float *r, const float *row, long taps, float t, float *out) {
    stereo_kernel(l, r, row, taps, t, out);
}

void ensemble_sinc_run(const float *l, const float *r, int stereo, const float *data, long taps, uint64_t start,
                       uint64_t step, long count, float *outL, float *outR) {
    run_kernel(l, r, stereo, data, taps, start, step, count, outL, outR);
}

void ensemble_sinc_run_i16(const int16_t *l, const int16_t *r, int stereo, const float *data, long taps, uint64_t start,
                           uint64_t step, long count, float *outL, float *outR) {
    run_i16_kernel(l, r, stereo, data, taps, start, step, count, outL, outR);
}

long ensemble_sinc_clock_chain(long n) {
    long x = 0;
#if defined(__x86_64__)
    // Four dependent one-cycle adds per iteration (and the loop's own, independent), so the chain sets the pace.
    for (long i = 0; i < n; i++) __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
#endif
    return x;
}
