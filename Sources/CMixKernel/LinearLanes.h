// Render thread: what the AVX2 linear kernels over Float (LinearKernel.c) and over 16-bit integers
// (LinearKernelI16.c) share: the group constants, each group's positions and fractions, and how a group's taps are
// picked from windows of source samples. One definition, so the two read the same samples in the same cases and
// give the same bits. Include it inside `#if defined(__x86_64__)` after <immintrin.h>.
#ifndef ENSEMBLE_LINEAR_LANES_H
#define ENSEMBLE_LINEAR_LANES_H

// Eight frames' taps from the sixteen samples at lo and hi: lane k takes tap idx[k] (0…15) from the low window
// (idx < 8) or the high one, a permute reading only an index's low three bits.
#define PICK(lo, hi, idx, high)                                                                               \
    _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, idx), _mm256_permutevar8x32_ps(hi, idx), high)

// The constants of a run at `step` (32.32): offsets within a group are exact 64-bit sums, lanes of `ka`/`kb`
// holding k·step for k = 0, 1, 4, 5 and 2, 3, 6, 7, so picking the odd and even 32-bit halves of both (a
// per-128-bit-lane shuffle) gives frames 0…7 in order; `up`/`down`: within an eighth of step one.
#define LINEAR_LANE_CONSTANTS                                                                                 \
    const __m256i ka = _mm256_setr_epi64x(0, (long long)step, (long long)(4 * step), (long long)(5 * step));  \
    const __m256i kb = _mm256_setr_epi64x((long long)(2 * step), (long long)(3 * step), (long long)(6 * step), \
                                          (long long)(7 * step));                                             \
    const __m256i seven = _mm256_set1_epi32(7);                                                               \
    const __m256 scale = _mm256_set1_ps(0x1p-24f);                                                            \
    const uint64_t step7 = 7 * step, step8 = 8 * step;                                                        \
    const uint64_t one = 1ull << 32, eighth = one >> 3;                                                       \
    const int up = step >= one && step < one + eighth, down = step < one && step > one - eighth;             \
    const __m256i lanes8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                                         \
    (void)step7;

// One group of eight frames from position f: its first sample `base`, each frame's tap index within the window
// (`idx`) and fraction (`t`), and which way of picking the taps applies (`unity`, `neighbour`, `near`).
#define LINEAR_LANE_GROUP                                                                                     \
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
#define LERP8_WITH(LOAD, p) ({                                                                                \
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

#define ADD8(dst, v) _mm256_storeu_ps(dst, _mm256_add_ps(_mm256_loadu_ps(dst), v))

#endif
