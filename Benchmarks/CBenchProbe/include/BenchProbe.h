// The benchmark program's machine probes (Benchmarks/README.md §1b): not part of the library.
#ifndef ENSEMBLE_BENCH_PROBE_H
#define ENSEMBLE_BENCH_PROBE_H

/// `iterations` × 8 independent vector loads of `width` bytes (16, 32 or 64; 64 needs AVX-512F) from `base` +
/// `offset` + k·width over a 16 KB ring (L1-resident): load-slot throughput, aligned (offset 0) or with loads that
/// cross a 64-byte line (offset 4: every 64-byte load, every other 32-byte one). x86-64 only; returns 0 (and loads
/// nothing) elsewhere or when the CPU lacks the width, else 1. `base` must hold 16 KB + 256 bytes.
int ensemble_probe_loads(const void *base, long iterations, long offset, int width);

#endif
