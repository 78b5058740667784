// The benchmark program's machine probes: vector-load throughput for the sinc kernel's roofline (§1b).
#include "BenchProbe.h"

#if defined(__x86_64__)
#define LOADS(ins, reg, w)                                                                                        \
    __asm__ volatile(ins " 0(%0), %%" reg "0\n\t" ins " " #w "(%0), %%" reg "1\n\t" ins " 2*" #w "(%0), %%" reg  \
                     "2\n\t" ins " 3*" #w "(%0), %%" reg "3\n\t" ins " 4*" #w "(%0), %%" reg "4\n\t" ins " 5*" #w \
                     "(%0), %%" reg "5\n\t" ins " 6*" #w "(%0), %%" reg "6\n\t" ins " 7*" #w "(%0), %%" reg "7"   \
                     :                                                                                            \
                     : "r"(q)                                                                                     \
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "memory")

__attribute__((noinline)) static void loads16(const char *p, long n) {
    for (long i = 0; i < n; i++) { const char *q = p + (i & 31) * 8 * 16; LOADS("vmovups", "xmm", 16); }
}
__attribute__((noinline, target("avx"))) static void loads32(const char *p, long n) {
    for (long i = 0; i < n; i++) { const char *q = p + (i & 31) * 8 * 32; LOADS("vmovups", "ymm", 32); }
    __asm__ volatile("vzeroupper");
}
__attribute__((noinline, target("avx512f"))) static void loads64(const char *p, long n) {
    for (long i = 0; i < n; i++) { const char *q = p + (i & 31) * 8 * 64; LOADS("vmovups", "zmm", 64); }
    __asm__ volatile("vzeroupper");
}
#endif

int ensemble_probe_loads(const void *base, long iterations, long offset, int width) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    const char *p = (const char *)base + offset;
    if (width == 16 && __builtin_cpu_supports("avx")) { loads16(p, iterations); return 1; }
    if (width == 32 && __builtin_cpu_supports("avx")) { loads32(p, iterations); return 1; }
    if (width == 64 && __builtin_cpu_supports("avx512f")) { loads64(p, iterations); return 1; }
#endif
    return 0;
}
