// Render thread: what the linear kernels over Float (LinearKernel.c) and over 16-bit integers (LinearKernelI16.c)
// share: which build runs, and for each vector width its group constants, each group's positions and fractions,
// how a group's taps are picked from windows of source samples, how frames are put and the loop over groups. One
// definition, so the two read the same samples in the same cases and give the same bits. Two widths, named by W:
// AVX2 (W = 256, eight frames a group) and AVX-512 (W = 512, sixteen); the macros paste W into the intrinsics'
// names (VOP(256, add_ps) is _mm256_add_ps).
#ifndef ENSEMBLE_LINEAR_LANES_H
#define ENSEMBLE_LINEAR_LANES_H

#include <stdlib.h>

// The builds: 0 portable, 1 AVX2, 2 AVX-512 (F is enough: every instruction here is AVX512F).
static inline int linear_has_path(int path) {
    if (path == 0) return 1;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (path == 1) return __builtin_cpu_supports("avx2");
    if (path == 2) return __builtin_cpu_supports("avx512f");
#endif
    return 0;
}

// The build a kernel runs, chosen once at load time: the widest this CPU has, but AVX2 when ENSEMBLE_NO_AVX512 is
// set (to compare, as the sinc kernel honours it).
static inline int linear_chosen_path(void) {
    if (linear_has_path(2) && !getenv("ENSEMBLE_NO_AVX512")) return 2;
    return linear_has_path(1);
}

#if defined(__x86_64__)
#include <immintrin.h>

#define VEC(W) __m##W
#define VECI(W) __m##W##i
#define VOP(W, op) _mm##W##_##op
#define TARGET_256 __attribute__((target("avx2")))
#define TARGET_512 __attribute__((target("avx2,avx512f")))
#define LANES_256 _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define LANES_512 _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

// Frames a group, and how many samples from its first (`base`) its windows may read: a group runs only while
// base + WINDOW_W ≤ avail. Both widths need step < 2 (their windows then hold every tap).
#define FRAMES_256 8
#define WINDOW_256 17
#define FRAMES_512 16
#define WINDOW_512 32

// ---- AVX2: eight frames a group ----

// Eight frames' taps from the sixteen samples at lo and hi: lane k takes tap idx[k] (0…15) from the low window
// (idx < 8) or the high one, a permute reading only an index's low three bits.
#define PICK(lo, hi, idx, high)                                                                               \
    _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, idx), _mm256_permutevar8x32_ps(hi, idx), high)

// The constants of a run at `step` (32.32): offsets within a group are exact 64-bit sums, lanes of `ka`/`kb`
// holding k·step for k = 0, 1, 4, 5 and 2, 3, 6, 7, so picking the odd and even 32-bit halves of both (a
// per-128-bit-lane shuffle) gives frames 0…7 in order; `up`/`down`: within an eighth of step one.
#define LANE_CONSTANTS_256                                                                                    \
    const __m256i ka = _mm256_setr_epi64x(0, (long long)step, (long long)(4 * step), (long long)(5 * step));  \
    const __m256i kb = _mm256_setr_epi64x((long long)(2 * step), (long long)(3 * step), (long long)(6 * step), \
                                          (long long)(7 * step));                                             \
    const __m256i seven = _mm256_set1_epi32(7);                                                               \
    const __m256 scale = _mm256_set1_ps(0x1p-24f);                                                            \
    const uint64_t step7 = 7 * step, group_step = 8 * step;                                                   \
    const uint64_t one = 1ull << 32, eighth = one >> 3;                                                       \
    const int up = step >= one && step < one + eighth, down = step < one && step > one - eighth;             \
    const __m256i lanes8 = LANES_256;

// One group of eight frames from position f: its first sample `base`, each frame's tap index within the window
// (`idx`) and fraction (`t`), and which way of picking the taps applies (`unity`, `neighbour`, `near`).
#define LANE_GROUP_256                                                                                        \
    long base = (long)(f >> 32);                                                                              \
    uint32_t frac0 = (uint32_t)f;                                                                             \
    int near = (((uint64_t)frac0 + step7) >> 32) < 8;                                                         \
    __m256i frac = _mm256_set1_epi64x((long long)frac0);                                                     \
    __m256 xa = _mm256_castsi256_ps(_mm256_add_epi64(frac, ka));                                              \
    __m256 xb = _mm256_castsi256_ps(_mm256_add_epi64(frac, kb));                                              \
    __m256i idx = _mm256_castps_si256(_mm256_shuffle_ps(xa, xb, _MM_SHUFFLE(3, 1, 3, 1)));                    \
    __m256i low = _mm256_castps_si256(_mm256_shuffle_ps(xa, xb, _MM_SHUFFLE(2, 0, 2, 0)));                    \
    __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(low, 8)), scale);                           \
    int unity = up ? 1 : down && base >= 1 ? -1 : 0;                                                          \
    __m256 neighbour = _mm256_castsi256_ps(                                                                   \
        up ? _mm256_cmpgt_epi32(idx, lanes8) : _mm256_cmpgt_epi32(lanes8, idx));

// Eight frames of `p` from its window at p + base (LOAD(p, i): eight samples from p + i as Float): s = t0 +
// (t1 − t0)·t, where t1 comes from the window one sample later at the same index. Within an eighth of step one
// (`unity`: a moving source's doppler, 44.1 → 48 kHz), frame k's first tap is sample k or its neighbour (k + 1
// above one, k − 1 below: `neighbour`), so each tap is a blend of two windows one sample apart, cheaper than a
// lane-crossing permute (three micro-ops on Zen 1); below one only from base 1 on, since the window one sample
// earlier must not start before `p`. Otherwise, when the eighth frame's first tap is within the first eight
// samples (`near`: every step ≤ 1, and most groups of a step a little above), each tap is one permute of one window.
#define LERP_WITH_256(LOAD, p) ({                                                                             \
        __m256 t0_, t1_;                                                                                      \
        if (unity > 0) {                                                                                      \
            __m256 w1_ = LOAD(p, base + 1);                                                                   \
            t0_ = _mm256_blendv_ps(LOAD(p, base), w1_, neighbour);                                            \
            t1_ = _mm256_blendv_ps(w1_, LOAD(p, base + 2), neighbour);                                        \
        } else if (unity < 0) {                                                                               \
            __m256 w0_ = LOAD(p, base);                                                                       \
            t0_ = _mm256_blendv_ps(w0_, LOAD(p, base - 1), neighbour);                                        \
            t1_ = _mm256_blendv_ps(LOAD(p, base + 1), w0_, neighbour);                                        \
        } else if (near) {                                                                                    \
            t0_ = _mm256_permutevar8x32_ps(LOAD(p, base), idx);                                               \
            t1_ = _mm256_permutevar8x32_ps(LOAD(p, base + 1), idx);                                           \
        } else {                                                                                              \
            __m256 high_ = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, seven));                               \
            t0_ = PICK(LOAD(p, base), LOAD(p, base + 8), idx, high_);                                         \
            t1_ = PICK(LOAD(p, base + 1), LOAD(p, base + 9), idx, high_);                                     \
        }                                                                                                     \
        _mm256_add_ps(t0_, _mm256_mul_ps(_mm256_sub_ps(t1_, t0_), t));                                        \
    })

// ---- AVX-512: sixteen frames a group ----

// The constants of a run at `step`: frame k's offset k·step split into its 32-bit halves, `klo` = k·lo mod 2³²
// (added to the group's fraction, 32-bit lanes) and `khi` = k·hi + the high half of k·lo (the window index before
// that sum's carry), lo and hi being step's halves; the high halves of the even and odd lanes' 64-bit products
// k·lo (vpmuludq) blended into place. In registers: a table stored and reloaded stalls on store forwarding.
#define LANE_CONSTANTS_512                                                                                    \
    const __m512i k16 = LANES_512, vlo = _mm512_set1_epi32((int)(uint32_t)step);                             \
    const __m512i klo = _mm512_mullo_epi32(k16, vlo);                                                         \
    const __m512i khi = _mm512_add_epi32(                                                                     \
        _mm512_mullo_epi32(k16, _mm512_set1_epi32((int)(uint32_t)(step >> 32))),                              \
        _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(_mm512_mul_epu32(k16, vlo), 32),                    \
                                _mm512_mul_epu32(_mm512_srli_epi64(k16, 32), vlo)));                          \
    const __m512i one32 = _mm512_set1_epi32(1);                                                               \
    const __m512 scale = _mm512_set1_ps(0x1p-24f);                                                            \
    const uint64_t step15 = 15 * step, group_step = 16 * step;

// One group of sixteen frames from position f: `base`, each frame's fraction (`low`, then `t`) and tap index in
// the window, `idx` = khi + the carry out of frac0 + klo (the sum wrapped below klo), 0…30 while step < 2; `next`
// is the second tap's index. `near`: the last frame's second tap is within the first sixteen samples.
#define LANE_GROUP_512                                                                                        \
    long base = (long)(f >> 32);                                                                              \
    uint32_t frac0 = (uint32_t)f;                                                                             \
    int near = (((uint64_t)frac0 + step15) >> 32) < 15;                                                       \
    __m512i low = _mm512_add_epi32(_mm512_set1_epi32((int)frac0), klo);                                      \
    __m512i idx = _mm512_mask_add_epi32(khi, _mm512_cmplt_epu32_mask(low, klo), khi, one32);                 \
    __m512i next = _mm512_add_epi32(idx, one32);                                                              \
    __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(low, 8)), scale);

// Sixteen frames of `p` from its window at p + base (LOAD(p, i): sixteen samples from p + i as Float), s = t0 +
// (t1 − t0)·t as the AVX2 build computes it, both taps picked from the same window by index: from its first
// sixteen samples with one permute each when they hold every tap (`near`: most groups of a step up to about
// 15/16), else from all 32 with a two-source permute each (vpermt2ps: one micro-op on Zen 5, so no blends here).
#define LERP_WITH_512(LOAD, p) ({                                                                             \
        __m512 t0_, t1_;                                                                                      \
        if (near) {                                                                                           \
            __m512 w_ = LOAD(p, base);                                                                        \
            t0_ = _mm512_permutexvar_ps(idx, w_);                                                             \
            t1_ = _mm512_permutexvar_ps(next, w_);                                                            \
        } else {                                                                                              \
            __m512 lo_ = LOAD(p, base), hi_ = LOAD(p, base + 16);                                             \
            t0_ = _mm512_permutex2var_ps(lo_, idx, hi_);                                                      \
            t1_ = _mm512_permutex2var_ps(lo_, next, hi_);                                                     \
        }                                                                                                     \
        _mm512_add_ps(t0_, _mm512_mul_ps(_mm512_sub_ps(t1_, t0_), t));                                        \
    })

// ---- Either width: putting a group's frames, and the loop over groups ----

// Frames j… of outL/outR as `ensemble_put` says (locals outL, outR and the gains' vectors va…vd of GAINS_SETUP).
#define ADDV(W, dst, v) VOP(W, storeu_ps)(dst, VOP(W, add_ps)(VOP(W, loadu_ps)(dst), v))
#define STOREV_MONO(W, j, sl, sr) VOP(W, storeu_ps)(outL + (j), sl)
#define STOREV_STEREO(W, j, sl, sr) (VOP(W, storeu_ps)(outL + (j), sl), VOP(W, storeu_ps)(outR + (j), sr))
#define GAINSV_MONO(W, j, sl, sr)                                                                             \
    (ADDV(W, outL + (j), VOP(W, mul_ps)(va, sl)), ADDV(W, outR + (j), VOP(W, mul_ps)(vc, sl)))
#define GAINSV_STEREO(W, j, sl, sr)                                                                           \
    (ADDV(W, outL + (j), VOP(W, add_ps)(VOP(W, mul_ps)(va, sl), VOP(W, mul_ps)(vb, sr))),                    \
     ADDV(W, outR + (j), VOP(W, add_ps)(VOP(W, mul_ps)(vc, sl), VOP(W, mul_ps)(vd, sr))))
#define NO_SETUP(W)
#define GAINS_SETUP(W)                                                                                        \
    const VEC(W) va = VOP(W, set1_ps)(a), vb = VOP(W, set1_ps)(b), vc = VOP(W, set1_ps)(c);                  \
    const VEC(W) vd = VOP(W, set1_ps)(d);                                                                     \
    (void)va, (void)vb, (void)vc, (void)vd;

// The first of two builds of one kernel calls the second for what its groups leave: AVX-512 leaves to AVX2 the
// frames its wider window cannot reach (near `avail`, or fewer than sixteen left).
#define NARROWER_512(name) name##_256(l, r, jp, end, avail, fp, step, put)
#define NARROWER_256(name) (void)0

// A kernel of width W over samples of type T: frames from *jp to `end` in groups while their window lies inside
// `avail`, s = LERP(W, p), put by PUTV (SETUP(W) declares what it uses), then the narrower build's groups; *jp and
// *fp advance to the first frame not computed (the caller's scalar loop takes the last few).
#define LINEAR_GROUPS(name, W, T, SETUP, LERP, PUTV, STEREO)                                                  \
    TARGET_##W static void name##_##W(const T *l, const T *r, long *jp, long end, long avail, uint64_t *fp,  \
                                      uint64_t step, const ensemble_put *put) {                               \
        UNPACK_PUT(put)                                                                                       \
        long j = *jp;                                                                                         \
        uint64_t f = *fp;                                                                                     \
        LANE_CONSTANTS_##W                                                                                    \
        SETUP(W)                                                                                              \
        for (; j + FRAMES_##W <= end && (long)(f >> 32) + WINDOW_##W <= avail; j += FRAMES_##W) {            \
            LANE_GROUP_##W                                                                                    \
            VEC(W) sl = LERP(W, l);                                                                           \
            VEC(W) sr = (STEREO) ? LERP(W, r) : sl;                                                           \
            PUTV(W, j, sl, sr);                                                                               \
            (void)sr;                                                                                         \
            f += group_step;                                                                                  \
        }                                                                                                     \
        *jp = j;                                                                                              \
        *fp = f;                                                                                              \
        NARROWER_##W(name);                                                                                   \
    }

#endif

// A kernel file's builds by path number and the choice among them, from its `linear_portable`, `linear_fn` and
// `linear` and, on x86-64, its `linear_vector` over each width's groups (`linear_256`, `linear_512`), whose
// entries are compiled for their width so that the groups' functions may be inlined into them.
#if defined(__x86_64__)
#define LINEAR_VECTOR_BUILDS(T)                                                                               \
    TARGET_256 static uint64_t linear_avx2(const T *l, const T *r, int stereo, long n, long avail, uint64_t f, \
                                           uint64_t step, const ensemble_put *put) {                          \
        return linear_vector(&linear_256, l, r, stereo, n, avail, f, step, put);                              \
    }                                                                                                         \
    TARGET_512 static uint64_t linear_avx512(const T *l, const T *r, int stereo, long n, long avail,          \
                                             uint64_t f, uint64_t step, const ensemble_put *put) {            \
        return linear_vector(&linear_512, l, r, stereo, n, avail, f, step, put);                              \
    }
#define LINEAR_VECTOR_PATHS linear_avx2, linear_avx512,
#else
#define LINEAR_VECTOR_BUILDS(T)
#define LINEAR_VECTOR_PATHS
#endif
#define LINEAR_BUILDS(T)                                                                                      \
    LINEAR_VECTOR_BUILDS(T)                                                                                   \
    static const linear_fn builds[] = {linear_portable, LINEAR_VECTOR_PATHS};                                 \
    /* Chosen once at load time, before any thread renders. */                                                \
    __attribute__((constructor)) static void choose_linear_build(void) { linear = builds[linear_chosen_path()]; }

// The put's fields as locals, for the loops' macros.
#define UNPACK_PUT(p)                                                                                         \
    float *restrict outL = (p)->outL, *restrict outR = (p)->outR;                                             \
    const float a = (p)->a, b = (p)->b, c = (p)->c, d = (p)->d;                                               \
    const int64_t first = (p)->first;                                                                         \
    const float inv = (p)->inv, left0 = (p)->left0, dLeft = (p)->dLeft, right0 = (p)->right0;                 \
    const float dRight = (p)->dRight, g = (p)->g;                                                             \
    (void)a, (void)b, (void)c, (void)d, (void)first, (void)inv, (void)left0, (void)dLeft, (void)right0,       \
        (void)dRight, (void)g, (void)outR;

#endif
