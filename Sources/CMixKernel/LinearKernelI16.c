// Render thread: linear interpolation over a 16-bit compact sound's integers, converted in registers: the
// arithmetic of `ensemble_linear` (LinearKernel.c) on x·2⁻¹⁵, which is exactly the decoded Float. With AVX2 one
// gather per channel fetches each frame's two taps as one 32-bit pair. Contraction is off, so both builds give
// the same bits.
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

// Eight frames of `p` from its offsets `idx` past p + base: each lane's pair p[i], p[i + 1] in one 32-bit gather,
// split into two sign-extended taps, converted, then t0 + (t1 − t0)·t.
AVX2 static inline __m256 lerp8(const int16_t *p, long base, __m256i idx, __m256 t) {
    const __m256 k = _mm256_set1_ps(0x1p-15f);
    __m256i pairs = _mm256_i32gather_epi32((const int *)(p + base), idx, 2);
    __m256 t0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(pairs, 16), 16)), k);
    __m256 t1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(pairs, 16)), k);
    return _mm256_add_ps(t0, _mm256_mul_ps(_mm256_sub_ps(t1, t0), t));
}

#define ADD8(dst, v) _mm256_storeu_ps(dst, _mm256_add_ps(_mm256_loadu_ps(dst), v))

// Offsets within a group are exact 64-bit sums: lanes of `ka`/`kb` hold k·step for k = 0, 1, 4, 5 and 2, 3, 6, 7,
// so picking the odd and even 32-bit halves of both gives frames 0…7 in order (as LinearKernel.c does).
#define LINEAR_AVX2(name, STEREO, GAINS)                                                                      \
    AVX2 static uint64_t name(const int16_t *l, const int16_t *r, long n, long *jp, uint64_t f, uint64_t step, \
                              const ensemble_put *put) {                                                      \
        float *restrict outL = put->outL, *restrict outR = put->outR;                                         \
        const __m256 va = _mm256_set1_ps(put->a), vb = _mm256_set1_ps(put->b);                                \
        const __m256 vc = _mm256_set1_ps(put->c), vd = _mm256_set1_ps(put->d);                                \
        (void)vb, (void)vd, (void)r, (void)outR;                                                              \
        const __m256i ka = _mm256_setr_epi64x(0, (long long)step, (long long)(4 * step), (long long)(5 * step)); \
        const __m256i kb = _mm256_setr_epi64x((long long)(2 * step), (long long)(3 * step), (long long)(6 * step), \
                                              (long long)(7 * step));                                         \
        const __m256 scale = _mm256_set1_ps(0x1p-24f);                                                        \
        const uint64_t step8 = 8 * step;                                                                      \
        long j = 0;                                                                                           \
        for (; j + 8 <= n; j += 8) {                                                                          \
            long base = (long)(f >> 32);                                                                      \
            __m256i frac = _mm256_set1_epi64x((long long)(uint32_t)f);                                        \
            __m256 xa = _mm256_castsi256_ps(_mm256_add_epi64(frac, ka));                                      \
            __m256 xb = _mm256_castsi256_ps(_mm256_add_epi64(frac, kb));                                      \
            __m256i idx = _mm256_castps_si256(_mm256_shuffle_ps(xa, xb, _MM_SHUFFLE(3, 1, 3, 1)));            \
            __m256i low = _mm256_castps_si256(_mm256_shuffle_ps(xa, xb, _MM_SHUFFLE(2, 0, 2, 0)));            \
            __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(low, 8)), scale);                   \
            __m256 sl = lerp8(l, base, idx, t);                                                               \
            __m256 sr = (STEREO) ? lerp8(r, base, idx, t) : sl;                                               \
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
    // A group's offsets (below 7·step + 1 frames) must fit the gather's signed 32-bit indices.
    if (step >= (1ull << 59)) return linear_portable(l, r, stereo, n, avail, f, step, put);
    long j = 0;
    if (put->mode == ENSEMBLE_PUT_GAINS) {
        f = (stereo ? linear_gains_stereo : linear_gains_mono)(l, r, n, &j, f, step, put);
    } else {
        f = (stereo ? linear_store_stereo : linear_store_mono)(l, r, n, &j, f, step, put);
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
