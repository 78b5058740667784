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
typedef int v4i __attribute__((vector_size(16)));
typedef int v16i __attribute__((vector_size(64)));

// Unaligned loads as macros, so each kernel inlines them in its own target.
#define load8(p) ({ v8 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define load4(p) ({ v4 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define load16(p) ({ v16 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define reduce(h) (((h)[0] + (h)[2]) + ((h)[1] + (h)[3]))

// The source's sample type X, f32 (Float) or i16 (a 16-bit compact sound's integers): X_t the element, X_loadN(p)
// N samples as Floats (an int16 converts exactly), X_scale(s) what a sum becomes: for int16 s·2⁻¹⁵, the sum over
// the samples as Floats (x·2⁻¹⁵) bit for bit, since a power of two only moves the exponents of every product and
// sum (none here comes near the subnormals).
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

// The single-frame kernels.
#define SINGLE_KERNELS(suffix, attributes, MAIN, X)                                                          \
    GROUP(suffix, attributes, MAIN, 1, 1, X)                                                                 \
    GROUP(suffix, attributes, MAIN, 1, 2, X)                                                                 \
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
    }

// The frames a run's groups left (fewer than a group), one at a time, from f and k.
#define LEFTOVER(suffix)                                                                                     \
    for (; k < count; k++, f += step) {                                                                      \
        long i = (long)(f >> 32);                                                                            \
        uint32_t fraction = (uint32_t)f;                                                                     \
        const float *row = data + ensemble_sinc_stride(taps) * (long)(fraction >> 24);                       \
        float t = (float)(fraction & 0xFFFFFFu) * 0x1p-24f;                                                  \
        if (stereo) {                                                                                        \
            float pair[2];                                                                                   \
            stereo_##suffix(l + i, r + i, row, taps, t, pair);                                               \
            outL[k] = pair[0];                                                                               \
            outR[k] = pair[1];                                                                               \
        } else {                                                                                             \
            outL[k] = mono_##suffix(l + i, row, taps, t);                                                    \
        }                                                                                                    \
    }

// The single-frame kernels and RUN: `count` frames from fixed-point `start`, mono four at a time, stereo two (the
// portable build; the x86-64 ones have their own groups below).
#define SINC_KERNELS(suffix, attributes, MAIN, X)                                                            \
    SINGLE_KERNELS(suffix, attributes, MAIN, X)                                                              \
    GROUP(suffix, attributes, MAIN, 4, 1, X)                                                                 \
    GROUP(suffix, attributes, MAIN, 2, 2, X)                                                                 \
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
        long k = groups_##suffix(l, r, stereo, data, taps, &f, step, count, outL, outR, -1, -1);             \
        LEFTOVER(suffix)                                                                                     \
    }

SINC_KERNELS(portable, , MAIN8, f32)
SINC_KERNELS(portable_i16, , MAIN8, i16)

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
// The x86-64 runs take four sums at a time (mono four frames, stereo two; AVX-512 stereo from 48 taps four frames,
// eight sums; sum q = f·c + k, frame f's channel k), each computed as GROUP computes it. Frame f's window starts at
// ix[f] in each channel and its row is off[f] bytes into the table, so a block's loads are one base per array
// (shared by the frames: the channels, the rows, the next rows) plus one index per frame: 8 + 3 or 4 registers,
// where a pointer per frame and array (12) spilled. The first block adds its products to zeros (no zeroing of
// accumulators), and each step after the blocks works on four sums in one register: an odd eight, a0 + a1, the
// halves' sum, the last four taps, (s0 + s2) + (s1 + s3).

// The sources as bytes (`i16`, a constant in each copy: 16-bit samples, else Float), element `es` bytes wide:
// XLOADn(p, i) n samples from element i as Floats.
#define XLOAD4(p, i) (i16 ? i16_load4((const int16_t *)(p) + (i)) : load4((const float *)(p) + (i)))
#define XLOAD8(p, i) (i16 ? i16_load8((const int16_t *)(p) + (i)) : load8((const float *)(p) + (i)))
#define XLOAD16(p, i) (i16 ? i16_load16((const int16_t *)(p) + (i)) : load16((const float *)(p) + (i)))

// Hides a value from the optimizer: a base, so that the loads stay base + index instead of one pointer per frame
// and array; a vector, so that it is computed as one (the compiler would convert four t one at a time).
#define OPAQUE(p) __asm__("" : "+r"(p))
#define OPAQUE_V(v) __asm__("" : "+v"(v))
#define BASES(c)                                                                                             \
    do {                                                                                                     \
        OPAQUE(xl);                                                                                          \
        if (c == 2) OPAQUE(xr);                                                                              \
        OPAQUE(rw);                                                                                          \
        OPAQUE(nx);                                                                                          \
    } while (0)
#define concat4(a, b, c, d)                                                                                  \
    __builtin_shufflevector(__builtin_shufflevector((a), (b), 0, 1, 2, 3, 4, 5, 6, 7),                       \
                            __builtin_shufflevector((c), (d), 0, 1, 2, 3, 4, 5, 6, 7), 0, 1, 2, 3, 4, 5, 6, 7, 8, \
                            9, 10, 11, 12, 13, 14, 15)

// What a run's groups start from: `n` frames a group (`frames`, at most four: four or eight sums of `c` channels),
// the rows' size, the blocks of sixteen, the frame count `k`, the position `f` and the fractions of four frames
// (32-bit lanes) with their step a group.
#define GROUPS_SETUP(frames)                                                                                 \
    const int n = (frames);                                                                                  \
    long rowBytes = 4 * ensemble_sinc_stride(taps), blocks = taps >> 4, k = 0;                               \
    uint64_t f = *position;                                                                                  \
    v4i fraction = {(int)(uint32_t)f, (int)(uint32_t)(f + step), (int)(uint32_t)(f + 2 * step),               \
                    (int)(uint32_t)(f + 3 * step)};                                                          \
    v4i groupStep = (v4i){0} + (int)(uint32_t)(n * step);

// A group's frames from *f: their windows, rows and (all at once, from `fraction`, the frames' fractions) t: the
// low 24 bits, exact in a float, · 2^−24.
#define POSITIONS(n)                                                                                         \
    long ix[4], off[4];                                                                                      \
    for (int g = 0; g < n; g++, f += step) {                                                                 \
        ix[g] = (long)(f >> 32);                                                                             \
        off[g] = rowBytes * (long)((uint32_t)f >> 24);                                                       \
    }                                                                                                        \
    v4 t = __builtin_convertvector(fraction & 0xFFFFFF, v4) * 0x1p-24f;                                      \
    OPAQUE_V(t);                                                                                             \
    fraction += groupStep;

// RUN: one copy of the groups for each case of the tails (an odd eight, a last four) and of the channels, whose
// frames test none; the groups start with a block of sixteen, so fewer taps go one frame at a time.
#define TAILS(suffix, c, i16)                                                                                \
    (taps & 8 ? (taps & 4 ? groups_##suffix(l, r, c, data, taps, &f, step, count, outL, outR, 1, 1, i16)     \
                          : groups_##suffix(l, r, c, data, taps, &f, step, count, outL, outR, 1, 0, i16))    \
              : (taps & 4 ? groups_##suffix(l, r, c, data, taps, &f, step, count, outL, outR, 0, 1, i16)     \
                          : groups_##suffix(l, r, c, data, taps, &f, step, count, outL, outR, 0, 0, i16)))
// run_NAME over samples of type X (`i16` 1 for i16), the groups of `suffix`, the single frames of NAME.
#define RUN(name, suffix, attributes, X, i16)                                                                \
    attributes static void run_##name(const X##_t *l, const X##_t *r, int stereo, const float *data,         \
                                      long taps, uint64_t start, uint64_t step, long count, float *outL,     \
                                      float *outR) {                                                         \
        uint64_t f = start;                                                                                  \
        long k = taps < 16 ? 0 : stereo ? TAILS(suffix, 2, i16) : TAILS(suffix, 1, i16);                     \
        LEFTOVER(name)                                                                                       \
    }

#define AVX2 __attribute__((target("avx2,fma")))
SINGLE_KERNELS(avx2, AVX2, MAIN8, f32)
SINGLE_KERNELS(avx2_i16, AVX2, MAIN8, i16)

// Eight taps at `o` floats into the block, for every frame, into `a` (MAIN8's a0 or a1): w = fma(t, next − row,
// row), a_q = fma(w, x, ADD_q).
#define EIGHT(a, ADD, o)                                                                                     \
    for (int f = 0; f < n; f++) {                                                                            \
        v8 w0 = load8(rw + off[f] + 4 * (o)), w = __builtin_elementwise_fma(tb[f], load8(nx + off[f] + 4 * (o)) - w0, w0); \
        a[f * c] = __builtin_elementwise_fma(w, XLOAD8(xl, ix[f] + (o)), ADD[f * c]);                        \
        if (c == 2) a[f * c + 1] = __builtin_elementwise_fma(w, XLOAD8(xr, ix[f] + (o)), ADD[f * c + 1]);    \
    }

AVX2 static inline __attribute__((always_inline)) void four_sums_avx2(
    const char *l, const char *r, const char *data, long rowBytes, long blocks, const long *ix, const long *off,
    v4 t, int n, int c, int odd, int four, int i16, float *outL, float *outR) {
    v8 a0[4], a1[4], tb[4], zero[4] = {{0}};
    for (int f = 0; f < n; f++) tb[f] = (v8){t[f], t[f], t[f], t[f], t[f], t[f], t[f], t[f]};
    const long es = i16 ? 2 : 4;
    const char *xl = l, *xr = r;
    const char *rw = data, *nx = data + rowBytes;
    EIGHT(a0, zero, 0)
    EIGHT(a1, zero, 8)
    for (long b = blocks - 1; b > 0; b--) {
        xl += 16 * es, xr += 16 * es, rw += 64, nx += 64;
        BASES(c);
        EIGHT(a0, a0, 0)
        EIGHT(a1, a1, 8)
    }
    xl += 16 * es, xr += 16 * es, rw += 64, nx += 64;
    BASES(c);
    if (odd) {
        EIGHT(a0, a0, 0)
        xl += 8 * es, xr += 8 * es, rw += 32, nx += 32;
    }
    // Lanes 0…3 of s01 sum 0's halves' sum, 4…7 sum 1's; s23 sums 2 and 3.
    v8 acc[4];
    for (int q = 0; q < 4; q++) acc[q] = a0[q] + a1[q];
    v8 s01 = __builtin_shufflevector(acc[0], acc[1], 0, 1, 2, 3, 8, 9, 10, 11) +
             __builtin_shufflevector(acc[0], acc[1], 4, 5, 6, 7, 12, 13, 14, 15);
    v8 s23 = __builtin_shufflevector(acc[2], acc[3], 0, 1, 2, 3, 8, 9, 10, 11) +
             __builtin_shufflevector(acc[2], acc[3], 4, 5, 6, 7, 12, 13, 14, 15);
    if (four) {
        v4 w0[4], w1[4], x[4];
        for (int q = 0; q < 4; q++) {
            w0[q] = load4(rw + off[q / c]);
            w1[q] = load4(nx + off[q / c]);
            x[q] = XLOAD4(q % c ? xr : xl, ix[q / c]);
        }
        v8 t01 = {t[0], t[0], t[0], t[0], t[1 / c], t[1 / c], t[1 / c], t[1 / c]};
        v8 t23 = {t[2 / c], t[2 / c], t[2 / c], t[2 / c], t[3 / c], t[3 / c], t[3 / c], t[3 / c]};
        v8 r01 = __builtin_shufflevector(w0[0], w0[1], 0, 1, 2, 3, 4, 5, 6, 7);
        v8 r23 = __builtin_shufflevector(w0[2], w0[3], 0, 1, 2, 3, 4, 5, 6, 7);
        v8 w01 = __builtin_elementwise_fma(t01, __builtin_shufflevector(w1[0], w1[1], 0, 1, 2, 3, 4, 5, 6, 7) - r01, r01);
        v8 w23 = __builtin_elementwise_fma(t23, __builtin_shufflevector(w1[2], w1[3], 0, 1, 2, 3, 4, 5, 6, 7) - r23, r23);
        s01 = __builtin_elementwise_fma(w01, __builtin_shufflevector(x[0], x[1], 0, 1, 2, 3, 4, 5, 6, 7), s01);
        s23 = __builtin_elementwise_fma(w23, __builtin_shufflevector(x[2], x[3], 0, 1, 2, 3, 4, 5, 6, 7), s23);
    }
    // Each 128-bit half: (s0 + s2, s1 + s3) of sums 0 and 2 (low half) or 1 and 3 (high), then their sums.
    v8 p = __builtin_shufflevector(s01, s23, 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(s01, s23, 2, 3, 10, 11, 6, 7, 14, 15);
    p = __builtin_shufflevector(p, p, 0, 2, 0, 2, 4, 6, 4, 6) + __builtin_shufflevector(p, p, 1, 3, 1, 3, 5, 7, 5, 7);
    v4 sums = __builtin_shufflevector(p, p, 0, 4, 1, 5);
    if (i16) sums = i16_scale(sums);
    for (int f = 0; f < n; f++) {
        outL[f] = sums[f * c];
        if (c == 2) outR[f] = sums[f * c + 1];
    }
}

// The frames from *position four sums at a time; returns the frames done.
AVX2 static inline __attribute__((always_inline)) long groups_avx2(
    const void *l, const void *r, int c, const float *data, long taps, uint64_t *position, uint64_t step,
    long count, float *outL, float *outR, int odd, int four, int i16) {
    GROUPS_SETUP(4 / c)
    for (; k + n <= count; k += n) {
        POSITIONS(n)
        four_sums_avx2(l, r, (const char *)data, rowBytes, blocks, ix, off, t, n, c, odd, four, i16, outL + k,
                       outR + k);
    }
    *position = f;
    return k;
}
RUN(avx2, avx2, AVX2, f32, 0)
RUN(avx2_i16, avx2, AVX2, i16, 1)

#define AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))
SINGLE_KERNELS(avx512, AVX512, MAIN16, f32)
SINGLE_KERNELS(avx512_i16, AVX512, MAIN16, i16)

// A group's products (AVX-512), four sums a vector set: lanes 0…7 of a[q] are GROUP's a0 of sum q, lanes 8…15 its
// a1; w[h] and x[h] the last four taps' weights and windows (taps = 8m + 4), lanes 4q…4q+3 sum 4h + q's.

// A block of sixteen taps (LOAD load16, XLOAD XLOAD16, WIDEN none) or eight (load8, XLOAD8, zero-extended: lanes
// 8…15 then add fma(0, 0, a) = a, exactly) for every frame: w = fma(t, next − row, row), a_q = fma(w, x, ADD_q).
#define BLOCK(LOAD, XLOAD, WIDEN, T, ADD)                                                                    \
    for (int f = 0; f < n; f++) {                                                                            \
        __typeof__(LOAD(rw)) w0 = LOAD(rw + off[f]), w = __builtin_elementwise_fma(T, LOAD(nx + off[f]) - w0, w0); \
        a[f * c] = __builtin_elementwise_fma(WIDEN(w), WIDEN(XLOAD(xl, ix[f])), ADD[f * c]);                 \
        if (c == 2) a[f * c + 1] = __builtin_elementwise_fma(WIDEN(w), WIDEN(XLOAD(xr, ix[f])), ADD[f * c + 1]); \
    }
#define same(v) (v)
#define widen8(v) __builtin_shufflevector((v), (v8){0}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define t16 tb[f]
#define t8 __builtin_shufflevector(tb[f], tb[f], 0, 1, 2, 3, 4, 5, 6, 7)

// `lane[f]`: f in every lane, to spread frame f's t with one permute.
AVX512 static inline __attribute__((always_inline)) void products_avx512(
    v16 *a, v16 *wt, v16 *xt, const char *l, const char *r, const char *data, long rowBytes, long blocks,
    const long *ix, const long *off, v4 t, const v16i *lane, int n, int c, int odd, int four, int i16) {
    v16 tb[4], zero[8] = {{0}};
    v16 t4x4 = __builtin_shufflevector(t, t, 0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    for (int f = 0; f < n; f++) tb[f] = __builtin_ia32_permvarsf512(t4x4, lane[f]);
    const long es = i16 ? 2 : 4;
    const char *xl = l, *xr = r;
    const char *rw = data, *nx = data + rowBytes;
    BLOCK(load16, XLOAD16, same, t16, zero)
    for (long b = blocks - 1; b > 0; b--) {
        xl += 16 * es, xr += 16 * es, rw += 64, nx += 64;
        BASES(c);
        BLOCK(load16, XLOAD16, same, t16, a)
    }
    xl += 16 * es, xr += 16 * es, rw += 64, nx += 64;
    BASES(c);
    if (odd) {
        BLOCK(load8, XLOAD8, widen8, t8, a)
        xl += 8 * es, xr += 8 * es, rw += 32, nx += 32;
    }
    if (four) {
        for (int h = 0; 4 * h < n * c; h++) { /* n·c is a multiple of four */
            v4 w0[4], w1[4], x[4], t4[4];
            for (int q = 0; q < 4; q++) {
                int s = 4 * h + q, g = s / c;
                w0[q] = load4(rw + off[g]);
                w1[q] = load4(nx + off[g]);
                x[q] = XLOAD4(s % c ? xr : xl, ix[g]);
                t4[q] = (v4){t[g], t[g], t[g], t[g]};
            }
            v16 row = concat4(w0[0], w0[1], w0[2], w0[3]);
            wt[h] = __builtin_elementwise_fma(concat4(t4[0], t4[1], t4[2], t4[3]),
                                              concat4(w1[0], w1[1], w1[2], w1[3]) - row, row);
            xt[h] = concat4(x[0], x[1], x[2], x[3]);
        }
    }
}
#undef t16
#undef t8

// Sums 0…3 of `a` (with the last four taps' `w` and `x`): lanes 4q of the result are sum q, scaled for 16-bit
// sources.
AVX512 static inline __attribute__((always_inline)) v16 four_sums_avx512(const v16 *a, v16 w, v16 x, int four,
                                                                         int i16) {
    // a0 + a1 of sums 0 and 1 (lanes 0…7, 8…15), 2 and 3; then their halves' sums: lanes 4q…4q+3 sum q's.
    v16 s01 = __builtin_shufflevector(a[0], a[1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
              __builtin_shufflevector(a[0], a[1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    v16 s23 = __builtin_shufflevector(a[2], a[3], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
              __builtin_shufflevector(a[2], a[3], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    v16 s = __builtin_shufflevector(s01, s23, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
            __builtin_shufflevector(s01, s23, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    if (four) s = __builtin_elementwise_fma(w, x, s);
    v16 p = s + __builtin_shufflevector(s, s, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    p = p + __builtin_shufflevector(p, p, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    if (i16) p = i16_scale(p);
    return p;
}

// A group's n frames into outL (and outR), four sums at a time: mono four frames, stereo two (left, right, left,
// right) a time.
AVX512 static inline __attribute__((always_inline)) void sums_avx512(const v16 *a, const v16 *w, const v16 *x, int n,
                                                                     int c, int four, int i16, float *outL,
                                                                     float *outR) {
    for (int h = 0; 4 * h < n * c; h++) {
        v16 p = four_sums_avx512(a + 4 * h, w[h], x[h], four, i16);
        if (c == 1) {
            v4 out = __builtin_shufflevector(p, p, 0, 4, 8, 12);
            memcpy(outL, &out, sizeof out);
        } else {
            v4 out = __builtin_shufflevector(p, p, 0, 8, 4, 12);
            memcpy(outL + 2 * h, &out, 8);
            memcpy(outR + 2 * h, (float *)&out + 2, 8);
        }
    }
}

// The frames from *position, S sums (S / c frames) a group; returns the frames done. A group's sums are finished
// after the next group's products, whose loads their shuffles and additions (inputs ready by then) overlap. Each
// sum adds one product a block to its own accumulator and an FMA takes four cycles, so two stereo frames (four
// accumulators) wait on the FMAs as long as on their loads; four frames (eight) do not, but crowd the registers at
// short filters and with both tails: stereo takes four frames from three blocks of sixteen without both tails
// (Benchmarks/README.md §1b).
#define GROUPS_AVX512(S)                                                                                     \
    AVX512 static inline __attribute__((always_inline)) long groups##S##_avx512(                             \
        const void *l, const void *r, int c, const float *data, long taps, uint64_t *position, uint64_t step, \
        long count, float *outL, float *outR, int odd, int four, int i16) {                                  \
        GROUPS_SETUP(S / c)                                                                                  \
        v16i lane[4] = {(v16i){0}, (v16i){0} + 1, (v16i){0} + 2, (v16i){0} + 3};                             \
        for (int g = 0; g < n; g++) OPAQUE_V(lane[g]); /* kept in registers: one permute per t */            \
        v16 a[2][S], w[2][S / 4], x[2][S / 4];                                                               \
        for (; k + n <= count; k += n) {                                                                     \
            POSITIONS(n)                                                                                     \
            products_avx512(a[1], w[1], x[1], l, r, (const char *)data, rowBytes, blocks, ix, off, t, lane, n, c, \
                            odd, four, i16);                                                                 \
            if (k > 0) sums_avx512(a[0], w[0], x[0], n, c, four, i16, outL + k - n, outR + k - n);           \
            memcpy(a[0], a[1], sizeof a[0]);                                                                 \
            if (four) memcpy(w[0], w[1], sizeof w[0]), memcpy(x[0], x[1], sizeof x[0]);                      \
        }                                                                                                    \
        if (k > 0) sums_avx512(a[0], w[0], x[0], n, c, four, i16, outL + k - n, outR + k - n);               \
        *position = f;                                                                                       \
        return k;                                                                                            \
    }
GROUPS_AVX512(4)
GROUPS_AVX512(8)

AVX512 static inline __attribute__((always_inline)) long groups_avx512(
    const void *l, const void *r, int c, const float *data, long taps, uint64_t *position, uint64_t step,
    long count, float *outL, float *outR, int odd, int four, int i16) {
    if (c == 2 && taps >= 48 && !(odd && four))
        return groups8_avx512(l, r, c, data, taps, position, step, count, outL, outR, odd, four, i16);
    return groups4_avx512(l, r, c, data, taps, position, step, count, outL, outR, odd, four, i16);
}
RUN(avx512, avx512, AVX512, f32, 0)
RUN(avx512_i16, avx512, AVX512, i16, 1)

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
