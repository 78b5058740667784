// Render thread: the floating-point mode the mixer renders in. Denormal (subnormal) floats, which a decaying
// filter or echo tail produces for seconds, are ~100x slower on many x86 cores; flush-to-zero (results) and
// denormals-are-zero (inputs) make them plain zeros. The mixer sets the mode around each render call and puts
// the caller's back afterwards, so offline and real-time renders use the same mode (same bits).
#ifndef ENSEMBLE_FLOAT_CONTROL_H
#define ENSEMBLE_FLOAT_CONTROL_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
// MXCSR bit 15: flush to zero; bit 6: denormals are zero.
#define ENSEMBLE_FLUSH_BITS 0x8040u
static inline uint64_t ensemble_float_mode(void) { return _mm_getcsr(); }
static inline void ensemble_set_float_mode(uint64_t mode) { _mm_setcsr((unsigned int)mode); }
#elif defined(__aarch64__)
// FPCR bit 24 (FZ): flush denormal inputs and results to zero.
#define ENSEMBLE_FLUSH_BITS (1ull << 24)
static inline uint64_t ensemble_float_mode(void) {
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
}
static inline void ensemble_set_float_mode(uint64_t mode) { __asm__ __volatile__("msr fpcr, %0" : : "r"(mode)); }
#else
#define ENSEMBLE_FLUSH_BITS 0u
static inline uint64_t ensemble_float_mode(void) { return 0; }
static inline void ensemble_set_float_mode(uint64_t mode) { (void)mode; }
#endif

/// Turns flush-to-zero (and denormals-are-zero where there is such a bit) on for the calling thread and returns
/// the mode it replaced, for `ensemble_set_float_mode`.
static inline uint64_t ensemble_enter_flush_to_zero(void) {
    uint64_t saved = ensemble_float_mode();
    if ((saved & ENSEMBLE_FLUSH_BITS) != ENSEMBLE_FLUSH_BITS) ensemble_set_float_mode(saved | ENSEMBLE_FLUSH_BITS);
    return saved;
}

/// Puts back a mode returned by `ensemble_enter_flush_to_zero`.
static inline void ensemble_leave_flush_to_zero(uint64_t saved) {
    if (ensemble_float_mode() != saved) ensemble_set_float_mode(saved);
}

#endif
