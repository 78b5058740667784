// Render thread: the step-1 copy with gains (see Resampler.copy and CompactWindow.copy).
#ifndef ENSEMBLE_MIX_KERNEL_H
#define ENSEMBLE_MIX_KERNEL_H

#include <stdint.h>

/// For j < n: outL[j] += a·l[j] + b·r[j] and outR[j] += c·l[j] + d·r[j] when `stereo`, else outL[j] += a·l[j] and
/// outR[j] += c·l[j]; each product rounded, then the sum, then the accumulation (no fused operations), which is
/// what the Swift loops it replaces compute: the same bits on every CPU (eight lanes with AVX2, four without).
void ensemble_mix_f32(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                      float *outL, float *outR);

/// `ensemble_mix_f32` over 16-bit samples, each converted to Float first (exact).
void ensemble_mix_i16(const int16_t *l, const int16_t *r, int stereo, long n, float a, float b, float c, float d,
                      float *outL, float *outR);

/// A moving mono voice's gain ramp: for j < n, with q = (float)(first + j) · inv,
/// outL[j] += ((left0 + dLeft·q)·g)·s[j] and outR[j] += ((right0 + dRight·q)·g)·s[j], unfused, as
/// `Resampler.mixRamped` writes it.
void ensemble_mix_ramped(const float *s, long n, int64_t first, float inv, float left0, float dLeft, float right0,
                         float dRight, float g, float *outL, float *outR);

/// `ensemble_mix_f32` and `ensemble_mix_ramped` assigning instead of adding: each value x is stored as x + 0,
/// the bits that adding it into a cleared plane gives (so the first voice a lane mixes into its accumulator in a
/// span need not clear it first).
void ensemble_assign_f32(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                         float *outL, float *outR);
void ensemble_assign_ramped(const float *s, long n, int64_t first, float inv, float left0, float dLeft, float right0,
                            float dRight, float g, float *outL, float *outR);

/// The lanes' accumulators into a destination, in one pass: for j < n,
/// dst[j] = (((dst[j] + src[0][j]) + src[1][j]) + …) + src[count − 1][j], each addition rounded in that order:
/// the bits of `count` passes `dst[j] += src[k][j]`, with one load and store of `dst` instead of `count`.
void ensemble_sum_into(float *dst, const float *const *src, int count, long n);

/// A meter's running peaks and sums of squares of a stereo pair.
typedef struct {
    float peakL, peakR;
    double sumL, sumR;
} ensemble_meter_sums;

/// A meter's pass over a stereo pair: for j < n, raises peakL to |l[j]| and peakR to |r[j]|, and adds
/// (double)(l[j]·l[j]) to sumL and (double)(r[j]·r[j]) to sumR. The squares are summed in eight partial
/// sums per channel (frame j into partial j mod 8, combined in a fixed order) rather than in one chain, so
/// the pass is not held up by the latency of each addition; the same bits on every CPU.
void ensemble_meter_pair(const float *l, const float *r, long n, ensemble_meter_sums *m);

void ensemble_sum_into_portable(float *dst, const float *const *src, int count, long n);
void ensemble_meter_pair_portable(const float *l, const float *r, long n, ensemble_meter_sums *m);

/// The portable builds whatever the CPU (for tests: the kernels chosen for this CPU must give the same bits).
void ensemble_mix_f32_portable(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                               float *outL, float *outR);
void ensemble_mix_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, float a, float b, float c,
                               float d, float *outL, float *outR);

void ensemble_mix_ramped_portable(const float *s, long n, int64_t first, float inv, float left0, float dLeft,
                                  float right0, float dRight, float g, float *outL, float *outR);
void ensemble_assign_f32_portable(const float *l, const float *r, int stereo, long n, float a, float b, float c,
                                  float d, float *outL, float *outR);
void ensemble_assign_ramped_portable(const float *s, long n, int64_t first, float inv, float left0, float dLeft,
                                     float right0, float dRight, float g, float *outL, float *outR);

#endif
