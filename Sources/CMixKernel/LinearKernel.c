// Render thread: linear interpolation at a constant step, the inner loop of a voice resampled with the linear
// kernel (a moving 3D voice's doppler, a 2D voice off its sound's rate). One frame at a time the loop is about
// twenty dependent scalar instructions; with AVX2 (AVX-512), eight (sixteen) frames share a window of source
// samples from which each frame's two taps are picked by lane permutes instead of scalar loads, and the gains
// (constant or ramping) are applied in the same pass (LinearLanes.h). No operation is fused (contraction is off),
// so every build gives the bits of the Swift formulas.
#include "LinearKernel.h"
#include "LinearLanes.h"

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

// Frames j… of a run one at a time, after the groups: the portable build on the put moved on by j frames (the
// ramp's place first + j is the same integer, so the same q).
static uint64_t linear_rest(const float *l, const float *r, int stereo, long j, long n, long avail, uint64_t f,
                            uint64_t step, const ensemble_put *put) {
    ensemble_put rest = *put;
    rest.outL += j;
    if (rest.outR) rest.outR += j;
    rest.first += j;
    rest.rampFrames -= j;
    return linear_portable(l, r, stereo, n - j, avail, f, step, &rest);
}

// Sixteen or eight samples of `p` from p + i.
#define LOADF_256(p, i) _mm256_loadu_ps((p) + (i))
#define LOADF_512(p, i) _mm512_loadu_ps((p) + (i))
#define LERPF(W, p) LERP_WITH_##W(LOADF_##W, p)

// The ramp's gains at frames j…: q = (float)(first + j + k)·inv, converted from 32-bit offsets, which a ramp's
// offsets always fit (it is a few hundred frames long); otherwise the portable build takes the call.
#define RAMPV_MONO(W, j, sl, sr)                                                                              \
    do {                                                                                                      \
        VEC(W) q_ = VOP(W, mul_ps)(                                                                           \
            VOP(W, cvtepi32_ps)(VOP(W, add_epi32)(VOP(W, set1_epi32)((int32_t)(first + (j))), lanes)), vinv); \
        ADDV(W, outL + (j), VOP(W, mul_ps)(VOP(W, mul_ps)(VOP(W, add_ps)(vl0, VOP(W, mul_ps)(vdl, q_)), vg), sl)); \
        ADDV(W, outR + (j), VOP(W, mul_ps)(VOP(W, mul_ps)(VOP(W, add_ps)(vr0, VOP(W, mul_ps)(vdr, q_)), vg), sl)); \
    } while (0)
#define RAMP_SETUP(W)                                                                                         \
    const VEC(W) vinv = VOP(W, set1_ps)(inv), vl0 = VOP(W, set1_ps)(left0), vdl = VOP(W, set1_ps)(dLeft);    \
    const VEC(W) vr0 = VOP(W, set1_ps)(right0), vdr = VOP(W, set1_ps)(dRight), vg = VOP(W, set1_ps)(g);      \
    const VECI(W) lanes = LANES_##W;

// One function per way of putting samples and width, so that each keeps only its own constants in registers.
#define LINEAR_BUILD(W)                                                                                       \
    LINEAR_GROUPS(linear_store_mono, W, float, NO_SETUP, LERPF, STOREV_MONO, 0)                               \
    LINEAR_GROUPS(linear_store_stereo, W, float, NO_SETUP, LERPF, STOREV_STEREO, 1)                           \
    LINEAR_GROUPS(linear_gains_mono, W, float, GAINS_SETUP, LERPF, GAINSV_MONO, 0)                            \
    LINEAR_GROUPS(linear_gains_stereo, W, float, GAINS_SETUP, LERPF, GAINSV_STEREO, 1)                        \
    LINEAR_GROUPS(linear_ramp_mono, W, float, RAMP_SETUP, LERPF, RAMPV_MONO, 0)                               \
    static const linear_groups linear_##W = {{linear_store_mono_##W, linear_store_stereo_##W},                \
                                             {linear_gains_mono_##W, linear_gains_stereo_##W},                \
                                             linear_ramp_mono_##W};

typedef void (*groups_fn)(const float *, const float *, long *, long, long, uint64_t *, uint64_t,
                          const ensemble_put *);
typedef struct {
    groups_fn store[2], gains[2], ramp;
} linear_groups;

LINEAR_BUILD(256)
LINEAR_BUILD(512)

// A run through one width's groups (each leaving to the narrower build what it cannot reach), then one frame at a
// time. Inlined into each width's entry, whose calls then go straight to its groups (an extra call level here cost
// ~60 cycles a call on Zen 5: copying the stack arguments stalled on store forwarding).
__attribute__((always_inline)) static inline uint64_t linear_vector(const linear_groups *k, const float *l,
                                                                   const float *r, int stereo, long n, long avail,
                                                                   uint64_t f, uint64_t step,
                                                                   const ensemble_put *put) {
    // A group of eight (sixteen) frames spans at most 7·step + 2 (15·step + 2) samples: its windows hold them
    // while step < 2.
    if (step >= (2ull << 32)) return linear_portable(l, r, stereo, n, avail, f, step, put);
    long j = 0;
    switch (put->mode) {
    case ENSEMBLE_PUT_GAINS:
        k->gains[stereo != 0](l, r, &j, n, avail, &f, step, put);
        break;
    case ENSEMBLE_PUT_RAMP: {
        // A put advanced past its ramp's end carries rampFrames < 0: no frame ramps.
        long ramped = put->rampFrames < 0 ? 0 : put->rampFrames < n ? put->rampFrames : n;
        if (put->first < INT32_MIN || put->first + ramped > INT32_MAX)
            return linear_portable(l, r, stereo, n, avail, f, step, put);
        k->ramp(l, r, &j, ramped, avail, &f, step, put);
        f = linear_rest(l, r, 0, j, ramped, avail, f, step, put); // the ramp's last few frames
        j = ramped;
        k->gains[0](l, r, &j, n, avail, &f, step, put);
        break;
    }
    default:
        k->store[stereo != 0](l, r, &j, n, avail, &f, step, put);
    }
    return j == n ? f : linear_rest(l, r, stereo, j, n, avail, f, step, put);
}

#endif

// The builds by path number (LinearLanes.h) and the choice among them.
LINEAR_BUILDS(float)

uint64_t ensemble_linear(const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                         uint64_t step, const ensemble_put *put) {
    return linear(l, r, stereo, n, avail, start, step, put);
}

uint64_t ensemble_linear_portable(const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                                  uint64_t step, const ensemble_put *put) {
    return linear_portable(l, r, stereo, n, avail, start, step, put);
}

int ensemble_linear_path(int path, const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                         uint64_t step, const ensemble_put *put, uint64_t *end) {
    if (!linear_has_path(path)) return 0;
    *end = builds[path](l, r, stereo, n, avail, start, step, put);
    return 1;
}
