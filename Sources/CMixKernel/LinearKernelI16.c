// Render thread: linear interpolation over a 16-bit compact sound's integers, converted in registers: the
// arithmetic of `ensemble_linear` (LinearKernel.c) on x·2⁻¹⁵, which is exactly the decoded Float. With AVX2
// (AVX-512), eight (sixteen) frames' taps are picked from windows of converted samples as the Float kernel picks
// them (LinearLanes.h; a gather per group measured twice as slow on Zen 5). Contraction is off, so every build
// gives the same bits.
#include "Int16Kernels.h"
#include "PutFrame.h"
#include "LinearLanes.h"

#pragma clang fp contract(off)

#define X(p, i) ((float)(p)[i] * 0x1p-15f)
#define LERP(p, f) (X(p, (f) >> 32) + (X(p, ((f) >> 32) + 1) - X(p, (f) >> 32)) * ((float)((uint32_t)(f) >> 8) * 0x1p-24f))

static uint64_t linear_portable(const int16_t *l, const int16_t *r, int stereo, long n, long avail, uint64_t f,
                                uint64_t step, const ensemble_put *put) {
    (void)avail;
    PUT_LOCALS(put)
    for (long j = 0; j < n; j++, f += step) {
        float sl = LERP(l, f), sr = stereo ? LERP(r, f) : 0.0f;
        PUT_FRAME(j, sl, sr, stereo);
    }
    return f;
}

typedef uint64_t (*linear_fn)(const int16_t *, const int16_t *, int, long, long, uint64_t, uint64_t,
                              const ensemble_put *);
static linear_fn linear = linear_portable;

#if defined(__x86_64__)
// Eight or sixteen samples of `p` from p + at as Float integers (exact; not yet scaled by 2⁻¹⁵): one vpmovsxwd and
// one vcvtdq2ps a window.
#define LOADI_256(p, at) _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)((p) + (at)))))
#define LOADI_512(p, at)                                                                                      \
    _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)((p) + (at)))))

// A group's frames of `p`, the windows picked as LinearKernel.c picks them (the same cases, the same reads), on the
// integers: t0 + (t1 − t0)·t, then ·2⁻¹⁵. Scaling by a power of two commutes with every rounding here (no
// intermediate comes near the subnormal range: the smallest nonzero product is 1·2⁻²⁴), so this is exactly the
// Float formula on the decoded samples.
#define LERPI(W, p) VOP(W, mul_ps)(LERP_WITH_##W(LOADI_##W, p), k15)
#define I16_SETUP(W)                                                                                          \
    GAINS_SETUP(W)                                                                                            \
    const VEC(W) k15 = VOP(W, set1_ps)(0x1p-15f);

#define LINEAR_BUILD(W)                                                                                       \
    LINEAR_GROUPS(linear_store_mono, W, int16_t, I16_SETUP, LERPI, STOREV_MONO, 0)                            \
    LINEAR_GROUPS(linear_store_stereo, W, int16_t, I16_SETUP, LERPI, STOREV_STEREO, 1)                        \
    LINEAR_GROUPS(linear_gains_mono, W, int16_t, I16_SETUP, LERPI, GAINSV_MONO, 0)                            \
    LINEAR_GROUPS(linear_gains_stereo, W, int16_t, I16_SETUP, LERPI, GAINSV_STEREO, 1)                        \
    static const linear_groups linear_##W = {{linear_store_mono_##W, linear_store_stereo_##W},                \
                                             {linear_gains_mono_##W, linear_gains_stereo_##W}};

typedef void (*groups_fn)(const int16_t *, const int16_t *, long *, long, long, uint64_t *, uint64_t,
                          const ensemble_put *);
typedef struct {
    groups_fn store[2], gains[2];
} linear_groups;

LINEAR_BUILD(256)
LINEAR_BUILD(512)

// A run through one width's groups (each leaving to the narrower build what it cannot reach), then one frame at a
// time. Inlined into each width's entry, whose calls then go straight to its groups (an extra call level here cost
// ~60 cycles a call on Zen 5: copying the stack arguments stalled on store forwarding).
__attribute__((always_inline)) static inline uint64_t linear_vector(const linear_groups *k, const int16_t *l,
                                                                   const int16_t *r, int stereo, long n, long avail,
                                                                   uint64_t f, uint64_t step,
                                                                   const ensemble_put *put) {
    // A group of eight (sixteen) frames spans at most 7·step + 2 (15·step + 2) samples: its windows hold them
    // while step < 2.
    if (step >= (2ull << 32)) return linear_portable(l, r, stereo, n, avail, f, step, put);
    long j = 0;
    (put->mode == ENSEMBLE_PUT_GAINS ? k->gains : k->store)[stereo != 0](l, r, &j, n, avail, &f, step, put);
    if (j == n) return f;
    // The last frames one at a time.
    ensemble_put rest = *put;
    rest.outL += j;
    if (rest.outR) rest.outR += j;
    return linear_portable(l, r, stereo, n - j, avail, f, step, &rest);
}

#endif

// The builds by path number (LinearLanes.h) and the choice among them.
LINEAR_BUILDS(int16_t)

uint64_t ensemble_linear_i16(const int16_t *l, const int16_t *r, int stereo, long n, long avail, uint64_t start,
                             uint64_t step, const ensemble_put *put) {
    return linear(l, r, stereo, n, avail, start, step, put);
}

uint64_t ensemble_linear_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, long avail,
                                      uint64_t start, uint64_t step, const ensemble_put *put) {
    return linear_portable(l, r, stereo, n, avail, start, step, put);
}

int ensemble_linear_i16_path(int path, const int16_t *l, const int16_t *r, int stereo, long n, long avail,
                             uint64_t start, uint64_t step, const ensemble_put *put, uint64_t *end) {
    if (!linear_has_path(path)) return 0;
    *end = builds[path](l, r, stereo, n, avail, start, step, put);
    return 1;
}
