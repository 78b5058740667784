// Render thread: the FIR at the heart of binaural rendering (one call per ear and filter per run of a voice), in
// C so that x86-64 machines with AVX2 get eight lanes (AVX-512: sixteen) while the package still builds for baseline x86-64. No
// operation is fused (contraction is off for the whole file): both builds give the same bits.
#include "HRTFKernel.h"

#pragma clang fp contract(off)

typedef float v8f __attribute__((vector_size(32)));
typedef float v8f_unaligned __attribute__((vector_size(32), aligned(4)));
#define load8(p) (*(const v8f_unaligned *)(p))
#define store8(p, v) (*(v8f_unaligned *)(p) = (v))

// 32 outputs at a time in four registers, each tap broadcast once and multiplied into all of them; then 8 at a
// time; then one by one, every output summing its products in tap order.
#define FIR_KERNEL(name, attributes)                                                                          \
    attributes static void name(const float *x, const float *h, int taps, float *y, long n) {                 \
        long j = 0;                                                                                           \
        for (; j + 32 <= n; j += 32) {                                                                        \
            v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                                       \
            for (int k = 0; k < taps; k++) {                                                                  \
                const float *p = x + j - k;                                                                   \
                v8f c = {h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k]};                                     \
                a0 += c * load8(p);                                                                           \
                a1 += c * load8(p + 8);                                                                       \
                a2 += c * load8(p + 16);                                                                      \
                a3 += c * load8(p + 24);                                                                      \
            }                                                                                                 \
            store8(y + j, a0);                                                                                \
            store8(y + j + 8, a1);                                                                            \
            store8(y + j + 16, a2);                                                                           \
            store8(y + j + 24, a3);                                                                           \
        }                                                                                                     \
        for (; j + 8 <= n; j += 8) {                                                                          \
            v8f a = {0};                                                                                      \
            for (int k = 0; k < taps; k++) {                                                                  \
                v8f c = {h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k]};                                     \
                a += c * load8(x + j - k);                                                                    \
            }                                                                                                 \
            store8(y + j, a);                                                                                 \
        }                                                                                                     \
        for (; j < n; j++) {                                                                                  \
            float a = 0.0f;                                                                                   \
            for (int k = 0; k < taps; k++) a += h[k] * x[j - k];                                              \
            y[j] = a;                                                                                         \
        }                                                                                                     \
    }

FIR_KERNEL(fir_portable, )
typedef void (*fir_fn)(const float *, const float *, int, float *, long);
static fir_fn fir = fir_portable;

#if defined(__x86_64__)
FIR_KERNEL(fir_avx2, __attribute__((target("avx2"))))

// Sixteen lanes where the CPU has AVX-512 (64 outputs at a time, then 16, then 8-lane and single outputs as above):
// the same products and sums per output, so the same bits.
typedef float v16f __attribute__((vector_size(64)));
typedef float v16f_unaligned __attribute__((vector_size(64), aligned(4)));
#define load16(p) (*(const v16f_unaligned *)(p))
#define store16(p, v) (*(v16f_unaligned *)(p) = (v))

__attribute__((target("avx512f"))) static void fir_avx512(const float *x, const float *h, int taps, float *y, long n) {
    long j = 0;
    for (; j + 64 <= n; j += 64) {
        v16f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int k = 0; k < taps; k++) {
            const float *p = x + j - k;
            v16f c = {h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k]};
            a0 += c * load16(p);
            a1 += c * load16(p + 16);
            a2 += c * load16(p + 32);
            a3 += c * load16(p + 48);
        }
        store16(y + j, a0);
        store16(y + j + 16, a1);
        store16(y + j + 32, a2);
        store16(y + j + 48, a3);
    }
    for (; j + 16 <= n; j += 16) {
        v16f a = {0};
        for (int k = 0; k < taps; k++) {
            v16f c = {h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k], h[k]};
            a += c * load16(x + j - k);
        }
        store16(y + j, a);
    }
    if (j < n) fir_avx2(x + j, h, taps, y + j, n - j);
}

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_fir_kernel(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) fir = fir_avx512;
    else if (__builtin_cpu_supports("avx2")) fir = fir_avx2;
}
#endif

void ensemble_fir(const float *x, const float *h, int taps, float *y, long n) { fir(x, h, taps, y, n); }

void ensemble_fir_portable(const float *x, const float *h, int taps, float *y, long n) { fir_portable(x, h, taps, y, n); }
