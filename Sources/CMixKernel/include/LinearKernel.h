// Render thread: linear interpolation of a run of frames whose two taps lie inside the sound (Resampler.convolve).
#ifndef ENSEMBLE_LINEAR_KERNEL_H
#define ENSEMBLE_LINEAR_KERNEL_H

#include <stdint.h>

/// Where the linear kernel puts frame j's samples sl (and sr), as `Resampler.Sink.put` does:
/// - `ENSEMBLE_PUT_STORE`: outL[j] = sl (and outR[j] = sr);
/// - `ENSEMBLE_PUT_GAINS`: outL[j] += a·sl + b·sr and outR[j] += c·sl + d·sr (mono: a·sl and c·sl);
/// - `ENSEMBLE_PUT_RAMP` (mono only): for j < rampFrames, with q = (float)(first + j)·inv,
///   outL[j] += ((left0 + dLeft·q)·g)·sl and outR[j] += ((right0 + dRight·q)·g)·sl (`Resampler.RampGains`);
///   after them, as `ENSEMBLE_PUT_GAINS` (the steady gains at the ramp's end).
enum { ENSEMBLE_PUT_STORE = 0, ENSEMBLE_PUT_GAINS = 1, ENSEMBLE_PUT_RAMP = 2 };

typedef struct {
    int mode;
    float a, b, c, d;
    int64_t first;
    long rampFrames;
    float inv, left0, dLeft, right0, dRight, g;
    float *outL, *outR;
} ensemble_put;

/// For j < n, with f = start + j·step (32.32 fixed point from `l`/`r`), i = f >> 32 and t = (float)((uint32)f >> 8)
/// · 2⁻²⁴: s = l[i] + (l[i + 1] − l[i])·t (and the same of `r` when `stereo`), each operation rounded on its own,
/// exactly `TapKernel.frame`'s linear case, put as `put` says. `avail` is how many floats of `l`/`r` may be
/// read: every tap used must lie below it, and the eight-lane loop reads whole windows only while they do.
/// Returns the offset after the last frame. The same bits on every CPU (sixteen frames at a time where AVX-512 is,
/// eight where AVX2 is, one at a time elsewhere; ENSEMBLE_NO_AVX512=1 in the environment keeps AVX2).
uint64_t ensemble_linear(const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                         uint64_t step, const ensemble_put *put);

/// The one-frame-at-a-time build whatever the CPU (for tests: the kernel chosen for this CPU must agree with it).
uint64_t ensemble_linear_portable(const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                                  uint64_t step, const ensemble_put *put);

/// `ensemble_linear` through one build whatever the CPU chose: `path` 0 portable, 1 AVX2, 2 AVX-512; the offset
/// after the last frame in `end`. Returns 0 (and computes nothing) when this CPU lacks the path. For tests.
int ensemble_linear_path(int path, const float *l, const float *r, int stereo, long n, long avail, uint64_t start,
                         uint64_t step, const ensemble_put *put, uint64_t *end);

#endif
