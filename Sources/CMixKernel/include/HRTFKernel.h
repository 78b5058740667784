// Render thread: the HRTF convolution of a positioned voice on headphones (see BinauralRender.swift).
#ifndef ENSEMBLE_HRTF_KERNEL_H
#define ENSEMBLE_HRTF_KERNEL_H

/// For j < n: y[j] = h[0]·x[j] + h[1]·x[j−1] + … + h[taps−1]·x[j−taps+1], summed from 0 in that order with each
/// product rounded before it is added (no fused operations): the same bits on every CPU (sixteen lanes with AVX-512, eight
/// with AVX2, four without) and for any split of the frames into calls. `x` is read from x[−(taps−1)] on.
void ensemble_fir(const float *x, const float *h, int taps, float *y, long n);

/// `ensemble_fir` in the baseline build's four lanes whatever the CPU (for the tests that compare the two).
void ensemble_fir_portable(const float *x, const float *h, int taps, float *y, long n);

#endif
