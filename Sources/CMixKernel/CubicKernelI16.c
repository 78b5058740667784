// Render thread: the cubic (Catmull-Rom) over a 16-bit compact sound's integers, converted in registers. Each
// frame computes exactly what the Float kernel (Resampler.fastLoop, TapKernel.catmullRom) computes on the decoded
// sound: the conversion x·2⁻¹⁵ is exact, then the same products and the same order of sums. No operation is fused
// (contraction is off), so the eight-lane build and the scalar one give the same bits.
#include "Int16Kernels.h"
#include "PutFrame.h"

#pragma clang fp contract(off)

// Tap m of the frame at integer offset i, as the decoder's Float.
#define TAP(p, i, m) ((float)(p)[(i) - 1 + (m)] * 0x1p-15f)
// One frame: (x0·w0 + x2·w2) + (x1·w1 + x3·w3).
#define CUBIC(p, i, w) ((TAP(p, i, 0) * (w)[0] + TAP(p, i, 2) * (w)[2]) + (TAP(p, i, 1) * (w)[1] + TAP(p, i, 3) * (w)[3]))
#define ROW(f) (weights + 4 * (long)((uint32_t)(f) >> 22))

static uint64_t cubic_portable(const int16_t *l, const int16_t *r, int stereo, long n, uint64_t f, uint64_t step,
                               const float *weights, const ensemble_put *put) {
    PUT_LOCALS(put)
    for (long j = 0; j < n; j++, f += step) {
        long i = (long)(f >> 32);
        const float *w = ROW(f);
        float sl = CUBIC(l, i, w), sr = stereo ? CUBIC(r, i, w) : 0.0f;
        PUT_FRAME(j, sl, sr, stereo);
    }
    return f;
}

typedef uint64_t (*cubic_fn)(const int16_t *, const int16_t *, int, long, uint64_t, uint64_t, const float *,
                             const ensemble_put *);
static cubic_fn cubic = cubic_portable;

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

// Frames k and k + 4 of a group in one vector: their four taps as Float integers (lanes 0…3 and 4…7) times their
// weight rows, then summed within each half as (p0 + p2) + (p1 + p3), which every lane of the half ends up holding.
// The taps are not yet scaled by 2⁻¹⁵: scaling by a power of two commutes with each rounding while no value nears
// the subnormal range (the smallest nonzero product is about 1·4.7·10⁻⁷), so scaling the sum (`eight`) gives the
// bits of the formula on the decoded samples, with one product for eight frames instead of one per tap.
AVX2 static inline __m256 pair(const int16_t *p, long i0, long i4, const float *w0, const float *w4) {
    __m128i taps = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(p + i0 - 1)),
                                      _mm_loadl_epi64((const __m128i *)(p + i4 - 1)));
    __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(taps));
    __m256 prod = _mm256_mul_ps(x, _mm256_set_m128(_mm_loadu_ps(w4), _mm_loadu_ps(w0)));
    __m256 q = _mm256_add_ps(prod, _mm256_permute_ps(prod, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_add_ps(q, _mm256_permute_ps(q, _MM_SHUFFLE(2, 3, 0, 1)));
}

// Eight frames of `p` in order, from the group's offsets and rows.
AVX2 static inline __m256 eight(const int16_t *p, const long *i, const float *const *w) {
    __m256 r0 = pair(p, i[0], i[4], w[0], w[4]), r1 = pair(p, i[1], i[5], w[1], w[5]);
    __m256 r2 = pair(p, i[2], i[6], w[2], w[6]), r3 = pair(p, i[3], i[7], w[3], w[7]);
    __m256 lo = _mm256_shuffle_ps(r0, r1, _MM_SHUFFLE(0, 0, 0, 0));   // f0 f0 f1 f1 | f4 f4 f5 f5
    __m256 hi = _mm256_shuffle_ps(r2, r3, _MM_SHUFFLE(0, 0, 0, 0));   // f2 f2 f3 f3 | f6 f6 f7 f7
    return _mm256_mul_ps(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_set1_ps(0x1p-15f)); // f0 … f7
}

#define ADD8(dst, v) _mm256_storeu_ps(dst, _mm256_add_ps(_mm256_loadu_ps(dst), v))

// One function per kind of voice and put, so no flag is tested inside the loop.
#define CUBIC_AVX2(name, STEREO, GAINS)                                                                       \
    AVX2 static uint64_t name(const int16_t *l, const int16_t *r, long n, long *jp, uint64_t f, uint64_t step, \
                              const float *weights, const ensemble_put *put) {                                \
        float *restrict outL = put->outL, *restrict outR = put->outR;                                         \
        const __m256 va = _mm256_set1_ps(put->a), vb = _mm256_set1_ps(put->b);                                \
        const __m256 vc = _mm256_set1_ps(put->c), vd = _mm256_set1_ps(put->d);                                \
        (void)vb, (void)vd, (void)r, (void)outR;                                                              \
        long j = 0;                                                                                           \
        for (; j + 8 <= n; j += 8) {                                                                          \
            long i[8];                                                                                        \
            const float *w[8];                                                                                \
            for (int k = 0; k < 8; k++, f += step) {                                                          \
                i[k] = (long)(f >> 32);                                                                       \
                w[k] = ROW(f);                                                                                \
            }                                                                                                 \
            __m256 sl = eight(l, i, w);                                                                       \
            __m256 sr = (STEREO) ? eight(r, i, w) : sl;                                                       \
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
        }                                                                                                     \
        *jp = j;                                                                                              \
        return f;                                                                                             \
    }

CUBIC_AVX2(cubic_store_mono, 0, 0)
CUBIC_AVX2(cubic_store_stereo, 1, 0)
CUBIC_AVX2(cubic_gains_mono, 0, 1)
CUBIC_AVX2(cubic_gains_stereo, 1, 1)

static uint64_t cubic_avx2(const int16_t *l, const int16_t *r, int stereo, long n, uint64_t f, uint64_t step,
                           const float *weights, const ensemble_put *put) {
    long j = 0;
    if (put->mode == ENSEMBLE_PUT_GAINS) {
        f = (stereo ? cubic_gains_stereo : cubic_gains_mono)(l, r, n, &j, f, step, weights, put);
    } else {
        f = (stereo ? cubic_store_stereo : cubic_store_mono)(l, r, n, &j, f, step, weights, put);
    }
    if (j == n) return f;
    // The last frames (fewer than eight) one at a time.
    ensemble_put rest = *put;
    rest.outL += j;
    rest.outR += j;
    return cubic_portable(l, r, stereo, n - j, f, step, weights, &rest);
}

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_cubic_i16_kernel(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) cubic = cubic_avx2;
}
#endif

uint64_t ensemble_cubic_i16(const int16_t *l, const int16_t *r, int stereo, long n, uint64_t start, uint64_t step,
                            const float *weights, const ensemble_put *put) {
    return cubic(l, r, stereo, n, start, step, weights, put);
}

uint64_t ensemble_cubic_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, uint64_t start,
                                     uint64_t step, const float *weights, const ensemble_put *put) {
    return cubic_portable(l, r, stereo, n, start, step, weights, put);
}
