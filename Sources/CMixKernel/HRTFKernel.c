// Render thread: the FIR at the heart of binaural rendering (one call per ear and filter per run of a voice), in
// C so that x86-64 machines with AVX2 get eight lanes while the package still builds for baseline x86-64. No
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

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_fir_kernel(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) fir = fir_avx2;
}
#endif

void ensemble_fir(const float *x, const float *h, int taps, float *y, long n) { fir(x, h, taps, y, n); }
