// Render thread: the band-limited resampler's inner products, in C so that x86-64 machines with AVX2 and FMA
// (nearly all since 2013) get eight-lane fused multiply-adds while the package still builds for baseline
// x86-64. Both builds run the same lane-wise fused operations in the same order (the portable one through
// correctly rounded fmaf), so a sample has the same bits on every machine.
#include "SincKernel.h"
#include <string.h>

typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));

// Unaligned loads as macros, so each kernel inlines them in its own target.
#define load8(p) ({ v8 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define load4(p) ({ v4 v_; memcpy(&v_, (p), sizeof v_); v_; })
// The weights of taps j … j + 7 (row + t·delta, fused); `t8` and `delta` come from the kernel using it.
#define WEIGHTS8(j) __builtin_elementwise_fma(t8, load8(delta + (j)), load8(row + (j)))
#define reduce(h) (((h)[0] + (h)[2]) + ((h)[1] + (h)[3]))

#define SINC_KERNELS(suffix, attributes)                                                                     \
    attributes static float mono_##suffix(const float *x, const float *row, long taps, float t) {            \
        const float *delta = row + taps;                                                                     \
        const v8 t8 = {t, t, t, t, t, t, t, t};                                                              \
        const v4 t4 = {t, t, t, t};                                                                          \
        v8 acc0 = {0}, acc1 = {0};                                                                           \
        long whole = taps & ~7L, j = 0;                                                                      \
        for (; j + 16 <= whole; j += 16) {                                                                   \
            acc0 = __builtin_elementwise_fma(WEIGHTS8(j), load8(x + j), acc0);                               \
            acc1 = __builtin_elementwise_fma(WEIGHTS8(j + 8), load8(x + j + 8), acc1);                       \
        }                                                                                                    \
        if (j < whole) {                                                                                     \
            acc0 = __builtin_elementwise_fma(WEIGHTS8(j), load8(x + j), acc0);                               \
            j += 8;                                                                                          \
        }                                                                                                    \
        v8 acc = acc0 + acc1;                                                                                \
        v4 sum = __builtin_shufflevector(acc, acc, 0, 1, 2, 3) + __builtin_shufflevector(acc, acc, 4, 5, 6, 7); \
        if (j < taps) {                                                                                      \
            v4 w = __builtin_elementwise_fma(t4, load4(delta + j), load4(row + j));                          \
            sum = __builtin_elementwise_fma(w, load4(x + j), sum);                                           \
        }                                                                                                    \
        return reduce(sum);                                                                                  \
    }                                                                                                        \
    attributes static void stereo_##suffix(const float *l, const float *r, const float *row, long taps,      \
                                           float t, float *out) {                                            \
        const float *delta = row + taps;                                                                     \
        const v8 t8 = {t, t, t, t, t, t, t, t};                                                              \
        const v4 t4 = {t, t, t, t};                                                                          \
        v8 accL0 = {0}, accL1 = {0}, accR0 = {0}, accR1 = {0};                                               \
        long whole = taps & ~7L, j = 0;                                                                      \
        for (; j + 16 <= whole; j += 16) {                                                                   \
            v8 w0 = WEIGHTS8(j), w1 = WEIGHTS8(j + 8);                                                       \
            accL0 = __builtin_elementwise_fma(w0, load8(l + j), accL0);                                      \
            accR0 = __builtin_elementwise_fma(w0, load8(r + j), accR0);                                      \
            accL1 = __builtin_elementwise_fma(w1, load8(l + j + 8), accL1);                                  \
            accR1 = __builtin_elementwise_fma(w1, load8(r + j + 8), accR1);                                  \
        }                                                                                                    \
        if (j < whole) {                                                                                     \
            v8 w0 = WEIGHTS8(j);                                                                             \
            accL0 = __builtin_elementwise_fma(w0, load8(l + j), accL0);                                      \
            accR0 = __builtin_elementwise_fma(w0, load8(r + j), accR0);                                      \
            j += 8;                                                                                          \
        }                                                                                                    \
        v8 accL = accL0 + accL1, accR = accR0 + accR1;                                                       \
        v4 sumL = __builtin_shufflevector(accL, accL, 0, 1, 2, 3) + __builtin_shufflevector(accL, accL, 4, 5, 6, 7); \
        v4 sumR = __builtin_shufflevector(accR, accR, 0, 1, 2, 3) + __builtin_shufflevector(accR, accR, 4, 5, 6, 7); \
        if (j < taps) {                                                                                      \
            v4 w = __builtin_elementwise_fma(t4, load4(delta + j), load4(row + j));                          \
            sumL = __builtin_elementwise_fma(w, load4(l + j), sumL);                                         \
            sumR = __builtin_elementwise_fma(w, load4(r + j), sumR);                                         \
        }                                                                                                    \
        out[0] = reduce(sumL);                                                                               \
        out[1] = reduce(sumR);                                                                               \
    }

SINC_KERNELS(portable, )

#if defined(__x86_64__)
SINC_KERNELS(avx2, __attribute__((target("avx2,fma"))))

static float (*mono_kernel)(const float *, const float *, long, float) = mono_portable;
static void (*stereo_kernel)(const float *, const float *, const float *, long, float, float *) = stereo_portable;

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_kernels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        mono_kernel = mono_avx2;
        stereo_kernel = stereo_avx2;
    }
}

float ensemble_sinc_mono(const float *x, const float *row, long taps, float t) {
    return mono_kernel(x, row, taps, t);
}

void ensemble_sinc_stereo(const float *l, const float *r, const float *row, long taps, float t, float *out) {
    stereo_kernel(l, r, row, taps, t, out);
}
#else
float ensemble_sinc_mono(const float *x, const float *row, long taps, float t) {
    return mono_portable(x, row, taps, t);
}

void ensemble_sinc_stereo(const float *l, const float *r, const float *row, long taps, float t, float *out) {
    stereo_portable(l, r, row, taps, t, out);
}
#endif
