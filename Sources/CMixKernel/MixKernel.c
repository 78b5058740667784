// Render thread: the step-1 copy with gains, the loop every voice at its sound's rate runs, in C so that x86-64
// machines with AVX2 get eight lanes while the package still builds for baseline x86-64 (four). No operation is
// fused (contraction is off for the whole file), so both builds, and the Swift loops they stand for, give the
// same bits.
#include "MixKernel.h"

#pragma clang fp contract(off)

// One body per sample type and target; the compiler vectorizes each for its target.
#define MIX_KERNEL(name, type, attributes)                                                                    \
    attributes static void name(const type *l, const type *r, int stereo, long n, float a, float b, float c, \
                                float d, float *restrict outL, float *restrict outR) {                        \
        if (stereo) {                                                                                         \
            for (long j = 0; j < n; j++) {                                                                    \
                float sl = (float)l[j], sr = (float)r[j];                                                     \
                outL[j] += a * sl + b * sr;                                                                   \
                outR[j] += c * sl + d * sr;                                                                   \
            }                                                                                                 \
        } else {                                                                                              \
            for (long j = 0; j < n; j++) {                                                                    \
                float sl = (float)l[j];                                                                       \
                outL[j] += a * sl;                                                                            \
                outR[j] += c * sl;                                                                            \
            }                                                                                                 \
        }                                                                                                     \
    }

MIX_KERNEL(mix_f32_portable, float, )
MIX_KERNEL(mix_i16_portable, int16_t, )

// The gain-ramped copy of a moving mono voice: the frame's place in the ramp as (offset)·(1/length), converted from
// 32 bits where the offsets fit (exactly the value of the 64-bit conversion, and it vectorizes), else from 64.
#define RAMP_BODY(index_type, index)                                                                          \
    for (long j = 0; j < n; j++) {                                                                            \
        float q = (float)(index) * inv;                                                                       \
        outL[j] += ((left0 + dLeft * q) * g) * s[j];                                                          \
        outR[j] += ((right0 + dRight * q) * g) * s[j];                                                        \
    }
#define RAMP_KERNEL(name, attributes)                                                                         \
    attributes static void name(const float *s, long n, int64_t first, float inv, float left0, float dLeft,   \
                                float right0, float dRight, float g, float *restrict outL,                   \
                                float *restrict outR) {                                                       \
        if (first >= INT32_MIN && first + n <= INT32_MAX) {                                                   \
            int32_t f0 = (int32_t)first;                                                                      \
            RAMP_BODY(int32_t, f0 + (int32_t)j)                                                               \
        } else {                                                                                              \
            RAMP_BODY(int64_t, first + j)                                                                     \
        }                                                                                                     \
    }

RAMP_KERNEL(ramp_portable, )

typedef void (*mix_f32_fn)(const float *, const float *, int, long, float, float, float, float, float *, float *);
typedef void (*mix_i16_fn)(const int16_t *, const int16_t *, int, long, float, float, float, float, float *, float *);
static mix_f32_fn mix_f32 = mix_f32_portable;
static mix_i16_fn mix_i16 = mix_i16_portable;
typedef void (*ramp_fn)(const float *, long, int64_t, float, float, float, float, float, float, float *, float *);
static ramp_fn ramp = ramp_portable;

#if defined(__x86_64__)
MIX_KERNEL(mix_f32_avx2, float, __attribute__((target("avx2"))))
MIX_KERNEL(mix_i16_avx2, int16_t, __attribute__((target("avx2"))))
RAMP_KERNEL(ramp_avx2, __attribute__((target("avx2"))))

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_mix_kernels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        mix_f32 = mix_f32_avx2;
        mix_i16 = mix_i16_avx2;
        ramp = ramp_avx2;
    }
}
#endif

void ensemble_mix_f32(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                      float *outL, float *outR) {
    mix_f32(l, r, stereo, n, a, b, c, d, outL, outR);
}

void ensemble_mix_i16(const int16_t *l, const int16_t *r, int stereo, long n, float a, float b, float c, float d,
                      float *outL, float *outR) {
    mix_i16(l, r, stereo, n, a, b, c, d, outL, outR);
}

void ensemble_mix_f32_portable(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                               float *outL, float *outR) {
    mix_f32_portable(l, r, stereo, n, a, b, c, d, outL, outR);
}

void ensemble_mix_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, float a, float b, float c,
                               float d, float *outL, float *outR) {
    mix_i16_portable(l, r, stereo, n, a, b, c, d, outL, outR);
}

void ensemble_mix_ramped(const float *s, long n, int64_t first, float inv, float left0, float dLeft, float right0,
                         float dRight, float g, float *outL, float *outR) {
    ramp(s, n, first, inv, left0, dLeft, right0, dRight, g, outL, outR);
}

void ensemble_mix_ramped_portable(const float *s, long n, int64_t first, float inv, float left0, float dLeft,
                                  float right0, float dRight, float g, float *outL, float *outR) {
    ramp_portable(s, n, first, inv, left0, dLeft, right0, dRight, g, outL, outR);
}
