// Render thread: linear interpolation at a constant step, the inner loop of a voice resampled with the linear
// kernel (a moving 3D voice's doppler, a 2D voice off its sound's rate). One frame at a time the loop is about
// twenty dependent scalar instructions; with AVX2, eight frames share a window of source samples from which
// each frame's two taps are picked by lane permutes instead of sixteen scalar loads, and the gains (constant or
// ramping) are applied in the same pass. No operation is fused (contraction is off), so both builds give the bits
// of the Swift formulas.
#include "LinearKernel.h"

#pragma clang fp contract(off)

// One frame at offset f: the Swift formula, operation for operation.
#define LERP(p, f) ((p)[(f) >> 32] + ((p)[((f) >> 32) + 1] - (p)[(f) >> 32]) * ((float)((uint32_t)(f) >> 8) * 0x1p-24f))

#define STORE_MONO(j, sl, sr) (outL[j] = (sl))
#define STORE_STEREO(j, sl, sr) (outL[j] = (sl), outR[j] = (sr))
#define GAINS_MONO(j, sl, sr) (outL[j] += a * (sl), outR[j] += c * (sl))
#define GAINS_STEREO(j, sl, sr) (outL[j] += a * (sl) + b * (sr), outR[j] += c * (sl) + d * (sr))
#define RAMP_MONO(j, sl, sr)                                                                                  \
    do {                                                                                                      \
        float q_ = (float)(first + (j)) * inv;                                                                \
        outL[j] += ((left0 + dLeft * q_) * g) * (sl);                                                         \
        outR[j] += ((right0 + dRight * q_) * g) * (sl);                                                       \
    } while (0)

// The put's fields as locals, for the loops' macros.
#define UNPACK_PUT(p)                                                                                         \
    float *restrict outL = (p)->outL, *restrict outR = (p)->outR;                                             \
    const float a = (p)->a, b = (p)->b, c = (p)->c, d = (p)->d;                                               \
    const int64_t first = (p)->first;                                                                         \
    const float inv = (p)->inv, left0 = (p)->left0, dLeft = (p)->dLeft, right0 = (p)->right0;                 \
    const float dRight = (p)->dRight, g = (p)->g;                                                             \
    (void)a, (void)b, (void)c, (void)d, (void)first, (void)inv, (void)left0, (void)dLeft, (void)right0,       \
        (void)dRight, (void)g, (void)outR;

// Frames j from `j` to `end`, one at a time; `f` and `j` advance.
#define SCALAR_LOOP(PUT, STEREO)                                                                              \
    for (; j < end; j++) {                                                                                      \
        float sl = LERP(l, f), sr = (STEREO) ? LERP(r, f) : 0.0f;                                             \
        PUT(j, sl, sr);                                                                                       \
        f += step;                                                                                            \
    }

static uint64_t linear_portable(const float *l, const float *r, int stereo, long n, long avail, uint64_t f,
                                uint64_t step, const ensemble_put *put) {
    (void)avail;
    UNPACK_PUT(put)
    long j = 0, end = n;
    switch (put->mode) {
    case ENSEMBLE_PUT_GAINS:
        if (stereo) { SCALAR_LOOP(GAINS_STEREO, 1) } else { SCALAR_LOOP(GAINS_MONO, 0) }
        break;
    case ENSEMBLE_PUT_RAMP:
        end = put->rampFrames < n ? put->rampFrames : n;
        SCALAR_LOOP(RAMP_MONO, 0)
        end = n;
        SCALAR_LOOP(GAINS_MONO, 0)
        break;
    default:
        if (stereo) { SCALAR_LOOP(STORE_STEREO, 1) } else { SCALAR_LOOP(STORE_MONO, 0) }
    }
    return f;
}

typedef uint64_t (*linear_fn)(const float *, const float *, int, long, long, uint64_t, uint64_t, const ensemble_put *);
static linear_fn linear = linear_portable;

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

#include "LinearLanes.h"

// Eight samples of `p` from p + i.
#define LOAD8F(p, i) _mm256_loadu_ps((p) + (i))
#define LERP8(p) LERP8_WITH(LOAD8F, p)

// Eight frames at a time (`LinearLanes.h`) while their window (17 samples) lies inside `avail`, then the scalar loop.
#define VECTOR_LOOP(PUT8, PUT, STEREO)                                                                        \
    for (; j + 8 <= end && (long)(f >> 32) + 17 <= avail; j += 8) {                                            \
        LINEAR_LANE_GROUP                                                                                     \
        __m256 sl = LERP8(l);                                                                                 \
        __m256 sr = (STEREO) ? LERP8(r) : sl;                                                                 \
        PUT8(j, sl, sr);                                                                                      \
        f += step8;                                                                                           \
    }                                                                                                         \
    SCALAR_LOOP(PUT, STEREO)

#define STORE8_MONO(j, sl, sr) _mm256_storeu_ps(outL + (j), sl)
#define STORE8_STEREO(j, sl, sr) (_mm256_storeu_ps(outL + (j), sl), _mm256_storeu_ps(outR + (j), sr))
#define GAINS8_MONO(j, sl, sr) (ADD8(outL + (j), _mm256_mul_ps(va, sl)), ADD8(outR + (j), _mm256_mul_ps(vc, sl)))
#define GAINS8_STEREO(j, sl, sr)                                                                              \
    (ADD8(outL + (j), _mm256_add_ps(_mm256_mul_ps(va, sl), _mm256_mul_ps(vb, sr))),                          \
     ADD8(outR + (j), _mm256_add_ps(_mm256_mul_ps(vc, sl), _mm256_mul_ps(vd, sr))))
#define RAMP8_MONO(j, sl, sr)                                                                                 \
    do {                                                                                                      \
        __m256 q_ = _mm256_mul_ps(                                                                            \
            _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_set1_epi32((int32_t)(first + (j))), lanes)), vinv);   \
        ADD8(outL + (j), _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(vl0, _mm256_mul_ps(vdl, q_)), vg), sl));   \
        ADD8(outR + (j), _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(vr0, _mm256_mul_ps(vdr, q_)), vg), sl));   \
    } while (0)

// One function per way of putting samples, so that each keeps only its own constants in registers. The ramp's
// place (first + j + k)·inv is converted from 32-bit offsets, which a ramp's offsets always fit (it is a few
// hundred frames long); otherwise the portable build takes the call.
#define LINEAR_AVX2(name, SETUP, PUT8, PUT, STEREO)                                                           \
    AVX2 static void name(const float *l, const float *r, long *jp, long end, long avail, uint64_t *fp,      \
                          uint64_t step, const ensemble_put *put) {                                           \
        UNPACK_PUT(put)                                                                                       \
        long j = *jp;                                                                                         \
        uint64_t f = *fp;                                                                                     \
        LINEAR_LANE_CONSTANTS                                                                                 \
        SETUP                                                                                                 \
        VECTOR_LOOP(PUT8, PUT, STEREO)                                                                        \
        *jp = j;                                                                                              \
        *fp = f;                                                                                              \
    }

#define NO_SETUP
#define GAINS_SETUP                                                                                           \
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b), vc = _mm256_set1_ps(c), vd = _mm256_set1_ps(d); \
    (void)vb, (void)vd;
#define RAMP_SETUP                                                                                            \
    const __m256 vinv = _mm256_set1_ps(inv), vl0 = _mm256_set1_ps(left0), vdl = _mm256_set1_ps(dLeft);        \
    const __m256 vr0 = _mm256_set1_ps(right0), vdr = _mm256_set1_ps(dRight), vg = _mm256_set1_ps(g);          \
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);

LINEAR_AVX2(linear_store_mono, NO_SETUP, STORE8_MONO, STORE_MONO, 0)
LINEAR_AVX2(linear_store_stereo, NO_SETUP, STORE8_STEREO, STORE_STEREO, 1)
LINEAR_AVX2(linear_gains_mono, GAINS_SETUP, GAINS8_MONO, GAINS_MONO, 0)
LINEAR_AVX2(linear_gains_stereo, GAINS_SETUP, GAINS8_STEREO, GAINS_STEREO, 1)
LINEAR_AVX2(linear_ramp_mono, RAMP_SETUP, RAMP8_MONO, RAMP_MONO, 0)

AVX2 static uint64_t linear_avx2(const float *l, const float *r, int stereo, long n, long avail, uint64_t f,
                                 uint64_t step, const ensemble_put *put) {
    // Eight frames span at most 7·step + 2 samples: the two windows hold them while step < 2.
    if (step >= (2ull << 32)) return linear_portable(l, r, stereo, n, avail, f, step, put);
    long j = 0;
    switch (put->mode) {
    case ENSEMBLE_PUT_GAINS:
        (stereo ? linear_gains_stereo : linear_gains_mono)(l, r, &j, n, avail, &f, step, put);
        break;
    case ENSEMBLE_PUT_RAMP: {
        long ramped = put->rampFrames < n ? put->rampFrames : n;
        if (put->first < INT32_MIN || put->first + ramped > INT32_MAX)
            return linear_portable(l, r, stereo, n, avail, f, step, put);
        linear_ramp_mono(l, r, &j, ramped, avail, &f, step, put);
        linear_gains_mono(l, r, &j, n, avail, &f, step, put);
        break;
    }
    default:
        (stereo ? linear_store_stereo : linear_store_mono)(l, r, &j, n, avail, &f, step, put);
    }
    return f;
}

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_linear_kernel(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) linear = linear_avx2;
}
#endif

uint64_t ensemble_linear(const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                         uint64_t step, const ensemble_put *put) {
    return linear(l, r, stereo, n, avail, start, step, put);
}

uint64_t ensemble_linear_portable(const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                                  uint64_t step, const ensemble_put *put) {
    return linear_portable(l, r, stereo, n, avail, start, step, put);
}
