// Render thread: linear interpolation over a 16-bit compact sound's integers, converted in registers: the
// arithmetic of `ensemble_linear` (LinearKernel.c) on x·2⁻¹⁵, which is exactly the decoded Float. With AVX2, eight
// frames' taps are picked from windows of converted samples as the Float kernel picks them (a gather per group
// measured twice as slow on Zen 5). Contraction is off, so both builds give the same bits.
#include "Int16Kernels.h"

#pragma clang fp contract(off)

#define X(p, i) ((float)(p)[i] * 0x1p-15f)
#define LERP(p, f) (X(p, (f) >> 32) + (X(p, ((f) >> 32) + 1) - X(p, (f) >> 32)) * ((float)((uint32_t)(f) >> 8) * 0x1p-24f))

static uint64_t linear_portable(const int16_t *l, const int16_t *r, int stereo, long n, long avail, uint64_t f,
                                uint64_t step, const ensemble_put *put) {
    (void)avail;
    float *restrict outL = put->outL, *restrict outR = put->outR;
    const float a = put->a, b = put->b, c = put->c, d = put->d;
    const int gains = put->mode == ENSEMBLE_PUT_GAINS;
    for (long j = 0; j < n; j++, f += step) {
        float sl = LERP(l, f), sr = stereo ? LERP(r, f) : 0.0f;
        if (!gains) {
            outL[j] = sl;
            if (stereo) outR[j] = sr;
        } else if (stereo) {
            outL[j] += a * sl + b * sr;
            outR[j] += c * sl + d * sr;
        } else {
            outL[j] += a * sl;
            outR[j] += c * sl;
        }
    }
    return f;
}

typedef uint64_t (*linear_fn)(const int16_t *, const int16_t *, int, long, long, uint64_t, uint64_t,
                              const ensemble_put *);
static linear_fn linear = linear_portable;

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

// Eight samples of `p` from p + at as Float integers (exact; not yet scaled by 2⁻¹⁵).
#define LOAD8(p, at) _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)((p) + (at)))))

#include "LinearLanes.h"

// Eight frames of `p`, the windows picked as LinearKernel.c picks them (the same cases, the same reads), on the
// integers: t0 + (t1 − t0)·t, then ·2⁻¹⁵. Scaling by a power of two commutes with every rounding here (no
// intermediate comes near the subnormal range: the smallest nonzero product is 1·2⁻²⁴), so this is exactly the
// Float formula on the decoded samples.
#define LERP8(p) _mm256_mul_ps(LERP8_WITH(LOAD8, p), k15)

// Eight frames at a time while their window (17 samples) lies inside `avail`.
#define LINEAR_AVX2(name, STEREO, GAINS)                                                                      \
    AVX2 static uint64_t name(const int16_t *l, const int16_t *r, long n, long avail, long *jp, uint64_t f,   \
                              uint64_t step, const ensemble_put *put) {                                       \
        float *restrict outL = put->outL, *restrict outR = put->outR;                                         \
        const __m256 va = _mm256_set1_ps(put->a), vb = _mm256_set1_ps(put->b);                                \
        const __m256 vc = _mm256_set1_ps(put->c), vd = _mm256_set1_ps(put->d);                                \
        (void)vb, (void)vd, (void)r, (void)outR;                                                              \
        LINEAR_LANE_CONSTANTS                                                                                 \
        const __m256 k15 = _mm256_set1_ps(0x1p-15f);                                                          \
        long j = *jp;                                                                                         \
        for (; j + 8 <= n && (long)(f >> 32) + 17 <= avail; j += 8) {                                          \
            LINEAR_LANE_GROUP                                                                                 \
            __m256 sl = LERP8(l);                                                                             \
            __m256 sr = (STEREO) ? LERP8(r) : sl;                                                             \
            if (!(GAINS)) {                                                                                   \
                _mm256_storeu_ps(outL + j, sl);                                                               \
                if (STEREO) _mm256_storeu_ps(outR + j, sr);                                                   \
            } else if (STEREO) {                                                                              \
                ADD8(outL + j, _mm256_add_ps(_mm256_mul_ps(va, sl), _mm256_mul_ps(vb, sr)));                  \
                ADD8(outR + j, _mm256_add_ps(_mm256_mul_ps(vc, sl), _mm256_mul_ps(vd, sr)));                  \
            } else {                                                                                          \
                ADD8(outL + j, _mm256_mul_ps(va, sl));                                                        \
                ADD8(outR + j, _mm256_mul_ps(vc, sl));                                                        \
            }                                                                                                 \
            f += step8;                                                                                       \
        }                                                                                                     \
        *jp = j;                                                                                              \
        return f;                                                                                             \
    }

LINEAR_AVX2(linear_store_mono, 0, 0)
LINEAR_AVX2(linear_store_stereo, 1, 0)
LINEAR_AVX2(linear_gains_mono, 0, 1)
LINEAR_AVX2(linear_gains_stereo, 1, 1)

static uint64_t linear_avx2(const int16_t *l, const int16_t *r, int stereo, long n, long avail, uint64_t f,
                            uint64_t step, const ensemble_put *put) {
    // Eight frames span at most 7·step + 2 samples: the two windows hold them while step < 2.
    if (step >= (2ull << 32)) return linear_portable(l, r, stereo, n, avail, f, step, put);
    long j = 0;
    if (put->mode == ENSEMBLE_PUT_GAINS) {
        f = (stereo ? linear_gains_stereo : linear_gains_mono)(l, r, n, avail, &j, f, step, put);
    } else {
        f = (stereo ? linear_store_stereo : linear_store_mono)(l, r, n, avail, &j, f, step, put);
    }
    if (j == n) return f;
    // The last frames (fewer than eight) one at a time.
    ensemble_put rest = *put;
    rest.outL += j;
    rest.outR += j;
    return linear_portable(l, r, stereo, n - j, avail, f, step, &rest);
}

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_linear_i16_kernel(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) linear = linear_avx2;
}
#endif

uint64_t ensemble_linear_i16(const int16_t *l, const int16_t *r, int stereo, long n, long avail, uint64_t start,
                             uint64_t step, const ensemble_put *put) {
    return linear(l, r, stereo, n, avail, start, step, put);
}

uint64_t ensemble_linear_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, long avail,
                                      uint64_t start, uint64_t step, const ensemble_put *put) {
    return linear_portable(l, r, stereo, n, avail, start, step, put);
}
