// Render thread: the few libm functions the spatial mixer needs, as static inline C so that Swift's
// `@_noLocks` checker accepts them (Swift's own math overlays are opaque calls into another module). libm's
// float functions take no locks and allocate nothing; they are deterministic on one machine, so offline and
// real-time renders get the same bits.
#ifndef ENSEMBLE_RENDER_MATH_H
#define ENSEMBLE_RENDER_MATH_H

#include <math.h>
#include <stdint.h>

static inline float ensemble_sqrtf(float x) { return __builtin_sqrtf(x); }
static inline float ensemble_powf(float x, float y) { return powf(x, y); }
static inline float ensemble_expf(float x) { return expf(x); }
static inline float ensemble_atan2f(float y, float x) { return atan2f(y, x); }
static inline float ensemble_acosf(float x) { return acosf(x); }
static inline float ensemble_cosf(float x) { return cosf(x); }
static inline float ensemble_sinf(float x) { return sinf(x); }
static inline double ensemble_log10(double x) { return log10(x); }

/// The largest magnitude of `phases` inner products of `taps` coefficients (branch after branch in `h`) with
/// `window` (the newest input first): one input sample's outputs of a polyphase interpolator (true peak).
static inline double ensemble_polyphase_peak(const double *h, const double *window, int phases, int taps) {
    double peak = 0;
    for (int p = 0; p < phases; p++) {
        const double *c = h + p * taps;
        double y = 0;
        for (int k = 0; k < taps; k++) y += c[k] * window[k];
        double m = y < 0 ? -y : y;
        if (m > peak) peak = m;
    }
    return peak;
}

/// Heap allocations the calling thread has made so far, when the process links the allocation counter
/// (`CAllocationCounter`: the tests, the soak, or a debug build that links it); UINT64_MAX when it does not.
/// Used by the debug-build check around an application's `AudioEffect.process`.
uint64_t ensemble_thread_allocations(void);

#endif
