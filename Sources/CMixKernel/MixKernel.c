// Render thread: the step-1 copy with gains, the loop every voice at its sound's rate runs, in C so that x86-64
// machines with AVX2 get eight lanes while the package still builds for baseline x86-64 (four). No operation is
// fused (contraction is off for the whole file), so both builds, and the Swift loops they stand for, give the
// same bits.
#include "MixKernel.h"

#pragma clang fp contract(off)

// Eight floats and four doubles as values (GCC vector extensions): the same lane-wise operations in either build,
// eight lanes in one register with AVX2, two registers of four without.
typedef float v8f __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));

// Unaligned loads and stores of eight floats (macros: a helper function returning a vector would have the ABI
// of the file's baseline target inside the AVX2 bodies).
typedef float v8f_unaligned __attribute__((vector_size(32), aligned(4)));
#define load8(p) (*(const v8f_unaligned *)(p))
#define store8(p, v) (*(v8f_unaligned *)(p) = (v))

// Four registers of accumulators per 32 frames, every source added into them before one store.
#define SUM_KERNEL(name, attributes)                                                                          \
    attributes static void name(float *dst, const float *const *src, int count, long n) {                     \
        long j = 0;                                                                                           \
        for (; j + 32 <= n; j += 32) {                                                                        \
            v8f a0 = load8(dst + j), a1 = load8(dst + j + 8), a2 = load8(dst + j + 16), a3 = load8(dst + j + 24); \
            for (int k = 0; k < count; k++) {                                                                 \
                const float *p = src[k] + j;                                                                  \
                a0 += load8(p);                                                                               \
                a1 += load8(p + 8);                                                                           \
                a2 += load8(p + 16);                                                                          \
                a3 += load8(p + 24);                                                                          \
            }                                                                                                 \
            store8(dst + j, a0);                                                                              \
            store8(dst + j + 8, a1);                                                                          \
            store8(dst + j + 16, a2);                                                                         \
            store8(dst + j + 24, a3);                                                                         \
        }                                                                                                     \
        for (; j < n; j++) {                                                                                  \
            float a = dst[j];                                                                                 \
            for (int k = 0; k < count; k++) a += src[k][j];                                                   \
            dst[j] = a;                                                                                       \
        }                                                                                                     \
    }

// Partial p of a channel holds frames j ≡ p (mod 8): p < 4 in the low register, the others in the high one.
#define METER_KERNEL(name, attributes)                                                                        \
    attributes static void name(const float *l, const float *r, long n, ensemble_meter_sums *m) {             \
        v8f pl = {0}, pr = {0};                                                                               \
        v4d sl0 = {0}, sl1 = {0}, sr0 = {0}, sr1 = {0};                                                       \
        long j = 0;                                                                                           \
        for (; j + 8 <= n; j += 8) {                                                                          \
            v8f x = load8(l + j), y = load8(r + j);                                                           \
            pl = __builtin_elementwise_max(pl, __builtin_elementwise_abs(x));                                 \
            pr = __builtin_elementwise_max(pr, __builtin_elementwise_abs(y));                                 \
            v8f xx = x * x, yy = y * y;                                                                       \
            sl0 += __builtin_convertvector(__builtin_shufflevector(xx, xx, 0, 1, 2, 3), v4d);                \
            sl1 += __builtin_convertvector(__builtin_shufflevector(xx, xx, 4, 5, 6, 7), v4d);                \
            sr0 += __builtin_convertvector(__builtin_shufflevector(yy, yy, 0, 1, 2, 3), v4d);                \
            sr1 += __builtin_convertvector(__builtin_shufflevector(yy, yy, 4, 5, 6, 7), v4d);                \
        }                                                                                                     \
        float ml = m->peakL, mr = m->peakR;                                                                   \
        for (int i = 0; i < 8; i++) {                                                                         \
            ml = ml > pl[i] ? ml : pl[i];                                                                     \
            mr = mr > pr[i] ? mr : pr[i];                                                                     \
        }                                                                                                     \
        v4d tl = sl0 + sl1, tr = sr0 + sr1;                                                                   \
        double a = (tl[0] + tl[1]) + (tl[2] + tl[3]), b = (tr[0] + tr[1]) + (tr[2] + tr[3]);                  \
        for (; j < n; j++) {                                                                                  \
            float x = l[j] < 0 ? -l[j] : l[j], y = r[j] < 0 ? -r[j] : r[j];                                   \
            ml = ml > x ? ml : x;                                                                             \
            mr = mr > y ? mr : y;                                                                             \
            a += (double)(l[j] * l[j]);                                                                       \
            b += (double)(r[j] * r[j]);                                                                       \
        }                                                                                                     \
        m->peakL = ml;                                                                                        \
        m->peakR = mr;                                                                                        \
        m->sumL += a;                                                                                         \
        m->sumR += b;                                                                                         \
    }

SUM_KERNEL(sum_portable, )
METER_KERNEL(meter_portable, )

// How a kernel puts its value x into the destination: added, or (the first writer of a lane's accumulator in a
// span, which skips clearing it) assigned as x + 0, which is 0 + x, the bits of adding into a cleared plane.
#define ADD_TO(dst, x) ((dst) += (x))
#define ASSIGN_TO(dst, x) ((dst) = (x) + 0.0f)

// One body per sample type and target; the compiler vectorizes each for its target.
#define MIX_KERNEL(name, type, attributes, PUT)                                                               \
    attributes static void name(const type *l, const type *r, int stereo, long n, float a, float b, float c, \
                                float d, float *restrict outL, float *restrict outR) {                        \
        if (stereo) {                                                                                         \
            for (long j = 0; j < n; j++) {                                                                    \
                float sl = (float)l[j], sr = (float)r[j];                                                     \
                PUT(outL[j], a * sl + b * sr);                                                                \
                PUT(outR[j], c * sl + d * sr);                                                                \
            }                                                                                                 \
        } else {                                                                                              \
            for (long j = 0; j < n; j++) {                                                                    \
                float sl = (float)l[j];                                                                       \
                PUT(outL[j], a * sl);                                                                         \
                PUT(outR[j], c * sl);                                                                         \
            }                                                                                                 \
        }                                                                                                     \
    }

MIX_KERNEL(mix_f32_portable, float, , ADD_TO)
MIX_KERNEL(mix_i16_portable, int16_t, , ADD_TO)
MIX_KERNEL(assign_f32_portable, float, , ASSIGN_TO)

// The gain-ramped copy of a moving mono voice: the frame's place in the ramp as (offset)·(1/length), converted from
// 32 bits where the offsets fit (exactly the value of the 64-bit conversion, and it vectorizes), else from 64.
#define RAMP_BODY(index_type, index, PUT)                                                                     \
    for (long j = 0; j < n; j++) {                                                                            \
        float q = (float)(index) * inv;                                                                       \
        PUT(outL[j], ((left0 + dLeft * q) * g) * s[j]);                                                       \
        PUT(outR[j], ((right0 + dRight * q) * g) * s[j]);                                                     \
    }
#define RAMP_KERNEL(name, attributes, PUT)                                                                    \
    attributes static void name(const float *s, long n, int64_t first, float inv, float left0, float dLeft,   \
                                float right0, float dRight, float g, float *restrict outL,                   \
                                float *restrict outR) {                                                       \
        if (first >= INT32_MIN && first + n <= INT32_MAX) {                                                   \
            int32_t f0 = (int32_t)first;                                                                      \
            RAMP_BODY(int32_t, f0 + (int32_t)j, PUT)                                                          \
        } else {                                                                                              \
            RAMP_BODY(int64_t, first + j, PUT)                                                                \
        }                                                                                                     \
    }

RAMP_KERNEL(ramp_portable, , ADD_TO)
RAMP_KERNEL(ramp_assign_portable, , ASSIGN_TO)

typedef void (*mix_f32_fn)(const float *, const float *, int, long, float, float, float, float, float *, float *);
typedef void (*mix_i16_fn)(const int16_t *, const int16_t *, int, long, float, float, float, float, float *, float *);
static mix_f32_fn mix_f32 = mix_f32_portable;
static mix_i16_fn mix_i16 = mix_i16_portable;
typedef void (*ramp_fn)(const float *, long, int64_t, float, float, float, float, float, float, float *, float *);
static ramp_fn ramp = ramp_portable;
static mix_f32_fn assign_f32 = assign_f32_portable;
static ramp_fn ramp_assign = ramp_assign_portable;
typedef void (*sum_fn)(float *, const float *const *, int, long);
static sum_fn sum_into = sum_portable;
typedef void (*meter_fn)(const float *, const float *, long, ensemble_meter_sums *);
static meter_fn meter_pair = meter_portable;

#if defined(__x86_64__)
MIX_KERNEL(mix_f32_avx2, float, __attribute__((target("avx2"))), ADD_TO)
MIX_KERNEL(mix_i16_avx2, int16_t, __attribute__((target("avx2"))), ADD_TO)
MIX_KERNEL(assign_f32_avx2, float, __attribute__((target("avx2"))), ASSIGN_TO)
RAMP_KERNEL(ramp_avx2, __attribute__((target("avx2"))), ADD_TO)
RAMP_KERNEL(ramp_assign_avx2, __attribute__((target("avx2"))), ASSIGN_TO)
SUM_KERNEL(sum_avx2, __attribute__((target("avx2"))))
METER_KERNEL(meter_avx2, __attribute__((target("avx2"))))

// Chosen once at load time, before any thread renders.
__attribute__((constructor)) static void choose_mix_kernels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        mix_f32 = mix_f32_avx2;
        mix_i16 = mix_i16_avx2;
        ramp = ramp_avx2;
        assign_f32 = assign_f32_avx2;
        ramp_assign = ramp_assign_avx2;
        sum_into = sum_avx2;
        meter_pair = meter_avx2;
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

void ensemble_assign_f32(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                         float *outL, float *outR) {
    assign_f32(l, r, stereo, n, a, b, c, d, outL, outR);
}

void ensemble_assign_f32_portable(const float *l, const float *r, int stereo, long n, float a, float b, float c,
                                  float d, float *outL, float *outR) {
    assign_f32_portable(l, r, stereo, n, a, b, c, d, outL, outR);
}

void ensemble_assign_ramped(const float *s, long n, int64_t first, float inv, float left0, float dLeft, float right0,
                            float dRight, float g, float *outL, float *outR) {
    ramp_assign(s, n, first, inv, left0, dLeft, right0, dRight, g, outL, outR);
}

void ensemble_assign_ramped_portable(const float *s, long n, int64_t first, float inv, float left0, float dLeft,
                                     float right0, float dRight, float g, float *outL, float *outR) {
    ramp_assign_portable(s, n, first, inv, left0, dLeft, right0, dRight, g, outL, outR);
}

void ensemble_sum_into(float *dst, const float *const *src, int count, long n) { sum_into(dst, src, count, n); }

void ensemble_sum_into_portable(float *dst, const float *const *src, int count, long n) {
    sum_portable(dst, src, count, n);
}

void ensemble_meter_pair(const float *l, const float *r, long n, ensemble_meter_sums *m) { meter_pair(l, r, n, m); }

void ensemble_meter_pair_portable(const float *l, const float *r, long n, ensemble_meter_sums *m) {
    meter_portable(l, r, n, m);
}
