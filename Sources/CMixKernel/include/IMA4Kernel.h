// Render thread (the lanes): Apple IMA4 blocks of a compact sound decoded as voices read them (IMA4Packets).
#ifndef ENSEMBLE_IMA4_KERNEL_H
#define ENSEMBLE_IMA4_KERNEL_H

#include <stdint.h>

/// The decoder's tables, made once by `IMA4Packets` from `IMA4`'s step and index tables:
/// - `expand[index · 16 + code]`: the signed difference the code adds at that step index, shifted left by 8, ORed
///   with the next step index (the scalar decoder's one lookup a code);
/// - `stepLow[i]` / `stepHigh[i]`: the low and high bytes of step size i for i < 89, of 32767 above (the SSE4.1
///   decoder looks them up sixteen entries at a time, the AVX-512 one all 128 at once);
/// - `indexStep[code]`: what a code adds to the step index (before the clamp to 0…88).
typedef struct {
    const int32_t *expand;
    uint8_t stepLow[128], stepHigh[128];
    int8_t indexStep[16];
} ensemble_ima4_tables;

/// Decodes `count` consecutive 34-byte IMA4 blocks from `blocks` (a 2-byte header, then 64 four-bit codes, low
/// nibble first) into 64 floats each at `out` + 64·i: block i starts from its header's predictor (the top 9 bits of
/// the header, as a signed 16-bit value) plus `deltas[i]`, which must give a value within −32768…32767, and its
/// step index (the low 7 bits; above 88, 88); each code's difference is added and the predictor clamped to
/// −32768…32767, and the sample is predictor · 2⁻¹⁵. Integer arithmetic throughout, so every path gives the same
/// bits: 32 blocks at once with AVX-512 VBMI (a block per 16-bit lane), else sixteen with SSE4.1 (a block per byte
/// lane), else one at a time; short remainders one at a time. The path is chosen once from CPUID.
void ensemble_ima4_decode(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                          const ensemble_ima4_tables *tables);

/// `ensemble_ima4_decode` of two planes (a stereo sound's channels), `count` blocks each, in one call: the same
/// samples as two calls; faster with AVX-512 VBMI, whose passes take blocks of both planes.
void ensemble_ima4_decode2(const uint8_t *blocks0, const int8_t *deltas0, float *out0, const uint8_t *blocks1,
                           const int8_t *deltas1, float *out1, long count, const ensemble_ima4_tables *tables);

/// `ensemble_ima4_decode` one block at a time on any CPU (what the vector path is tested against).
void ensemble_ima4_decode_portable(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                                   const ensemble_ima4_tables *tables);

/// The decoder paths (`ensemble_ima4_path`, `ensemble_ima4_decode_path`).
enum {
    ENSEMBLE_IMA4_SCALAR = 0,
    ENSEMBLE_IMA4_SSE41 = 1,
    ENSEMBLE_IMA4_AVX512VBMI = 2,
};

/// The path `ensemble_ima4_decode` takes on this CPU.
int ensemble_ima4_path(void);

/// `ensemble_ima4_decode` through path `path` (for tests and benchmarks: every path must give the same bits).
/// Returns 0, decoding nothing, when this CPU lacks the path.
int ensemble_ima4_decode_path(int path, const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                              const ensemble_ima4_tables *tables);

/// `ensemble_ima4_decode2` through path `path`; 0 when this CPU lacks it.
int ensemble_ima4_decode2_path(int path, const uint8_t *blocks0, const int8_t *deltas0, float *out0,
                               const uint8_t *blocks1, const int8_t *deltas1, float *out1, long count,
                               const ensemble_ima4_tables *tables);

/// Benchmarks only: makes `ensemble_ima4_decode` take `path` from now on (0 if this CPU lacks it; nothing changes).
/// Not for use while any thread renders.
int ensemble_ima4_force_path(int path);

#endif
