// Render thread: the band-limited resampler's inner products (see SincBank.swift).
#ifndef ENSEMBLE_SINC_KERNEL_H
#define ENSEMBLE_SINC_KERNEL_H

#include <stdint.h>

/// Floats from one phase row of a table to the next: `taps` rounded up to 16, so that the rows of a table whose base
/// is 64-byte aligned start on cache lines (no 16-lane load of weights crosses one); the padding is never read.
static inline long ensemble_sinc_stride(long taps) { return (taps + 15) & ~15L; }

/// One output sample: sum over j < taps of (row[j] + t * (next[j] − row[j])) * x[j], next = row +
/// ensemble_sinc_stride(taps) (the following phase), each weight and each product's accumulation a fused
/// multiply-add, eight taps per lane group into two accumulators (blocks alternating, so the additions overlap), a
/// last four when taps = 8m + 4, summed in a fixed order. `taps` is a multiple of 4. The same bits on every CPU: the
/// AVX-512, AVX2/FMA and portable builds do the same operations.
float ensemble_sinc_mono(const float *x, const float *row, long taps, float t);

/// Both channels with the weights computed once; each channel has the same bits as `ensemble_sinc_mono`.
void ensemble_sinc_stereo(const float *l, const float *r, const float *row, long taps, float t, float *out);

/// `count` frames, frame k from the taps at l + (f >> 32) (and r when `stereo`), f = start + k·step (32.32), its
/// weights the row of `data` (phases 0…256, `taps` Floats each, ensemble_sinc_stride(taps) apart; base 64-byte
/// aligned for speed) picked by the fraction's top 8 bits and t its low 24 bits: each frame has the same bits as
/// `ensemble_sinc_mono` / `ensemble_sinc_stereo`.
void ensemble_sinc_run(const float *l, const float *r, int stereo, const float *data, long taps, uint64_t start,
                       uint64_t step, long count, float *outL, float *outR);

/// `ensemble_sinc_run` through one build whatever the CPU chose: `path` 0 portable, 1 AVX2/FMA, 2 AVX-512; returns 0
/// (and computes nothing) when this CPU lacks the path. For tests (the same bits on every path) and benchmarks.
int ensemble_sinc_run_path(int path, const float *l, const float *r, int stereo, const float *data, long taps,
                           uint64_t start, uint64_t step, long count, float *outL, float *outR);

/// `ensemble_sinc_run` over a 16-bit compact sound's integers: each tap read as (float)x (exact), each frame's sum
/// multiplied by 2⁻¹⁵ at the end, which gives the bits `ensemble_sinc_run` gives on the samples as Floats (x·2⁻¹⁵):
/// a power of two only moves the exponents (no value here comes near the subnormals). No window is converted.
void ensemble_sinc_run_i16(const int16_t *l, const int16_t *r, int stereo, const float *data, long taps, uint64_t start,
                           uint64_t step, long count, float *outL, float *outR);

/// `ensemble_sinc_run_i16` through one build (as `ensemble_sinc_run_path`): 0 when this CPU lacks the path.
int ensemble_sinc_run_i16_path(int path, const int16_t *l, const int16_t *r, int stereo, const float *data, long taps,
                               uint64_t start, uint64_t step, long count, float *outL, float *outR);

/// For benchmarks: 4·n dependent one-cycle integer additions (x86-64; nothing elsewhere), whose wall time gives the
/// core's clock at that moment, to turn a kernel's ns per frame into cycles. Returns 4·n.
long ensemble_sinc_clock_chain(long n);

/// `ensemble_sinc_mono` / `ensemble_sinc_stereo` through the portable build whatever the CPU (for tests: the
/// kernels chosen for this CPU must give the same bits).
float ensemble_sinc_mono_portable(const float *x, const float *row, long taps, float t);
void ensemble_sinc_stereo_portable(const float *l, const float *r, const float *row, long taps, float t, float *out);

#endif
