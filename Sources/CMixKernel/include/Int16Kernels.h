// Render thread: the cubic and linear resampling kernels reading a 16-bit compact sound's integers directly
// (CompactWindow), so no Float window is converted first.
#ifndef ENSEMBLE_INT16_KERNELS_H
#define ENSEMBLE_INT16_KERNELS_H

#include <stdint.h>
#include "LinearKernel.h"

/// The cubic over 16-bit samples: for j < n, with f = start + j·step (32.32 from `l`/`r`), i = f >> 32, w the
/// weight row `weights + 4·((uint32)f >> 22)` (`Resampler.makeWeightTable`) and x_m = (float)p[i − 1 + m] · 2⁻¹⁵
/// (exact): s = (x0·w0 + x2·w2) + (x1·w1 + x3·w3), each operation rounded on its own (the bits of the Float
/// kernel, `TapKernel.catmullRom`, on the decoded sound), of `l` (and `r` when `stereo`), put as `put` says
/// (`ENSEMBLE_PUT_STORE` or `ENSEMBLE_PUT_GAINS`). Every tap p[i − 1] … p[i + 2] must lie inside the sound.
/// Returns the offset after the last frame. The same bits on every CPU (eight frames at a time where AVX2 is).
uint64_t ensemble_cubic_i16(const int16_t *l, const int16_t *r, int stereo, long n, uint64_t start, uint64_t step,
                            const float *weights, const ensemble_put *put);

/// The one-frame-at-a-time build whatever the CPU (for tests).
uint64_t ensemble_cubic_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, uint64_t start,
                                     uint64_t step, const float *weights, const ensemble_put *put);

/// `ensemble_linear` over 16-bit samples, each converted to Float (x·2⁻¹⁵, exact) before the same arithmetic:
/// s = x[i] + (x[i + 1] − x[i])·t. `ENSEMBLE_PUT_STORE` or `ENSEMBLE_PUT_GAINS`; taps p[i], p[i + 1] inside the
/// sound (below `avail`). The same bits on every CPU.
uint64_t ensemble_linear_i16(const int16_t *l, const int16_t *r, int stereo, long n, long avail, uint64_t start,
                             uint64_t step, const ensemble_put *put);

/// `ensemble_linear_i16` through one build (as `ensemble_linear_path`): 0 when this CPU lacks the path.
int ensemble_linear_i16_path(int path, const int16_t *l, const int16_t *r, int stereo, long n, long avail,
                             uint64_t start, uint64_t step, const ensemble_put *put, uint64_t *end);

/// The one-frame-at-a-time build whatever the CPU (for tests).
uint64_t ensemble_linear_i16_portable(const int16_t *l, const int16_t *r, int stereo, long n, long avail,
                                      uint64_t start, uint64_t step, const ensemble_put *put);

#endif
