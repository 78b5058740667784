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

/// The portable builds whatever the CPU (for tests: the kernels chosen for this CPU must give the same bits).
void ensemble_mix_f32_portable(const float *l, const float *r, int stereo, long n, float a, float b, float c, float d,
                               float *outL, float *outR);
void ensemble_mix_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, float a, float b, float c,
                               float d, float *outL, float *outR);

void ensemble_mix_ramped_portable(const float *s, long n, int64_t first, float inv, float left0, float dLeft,
                                  float right0, float dRight, float g, float *outL, float *outR);

#endif
