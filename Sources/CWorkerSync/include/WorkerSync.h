// Render side: how the render worker pool (Sources/Ensemble/Mixing/RenderWorkerPool.swift) waits and wakes.
// Swift cannot call the variadic syscall(2), so the futex calls live here, with the CPU's spin-wait hint.
// Everything is static inline: no state, nothing allocated, no locks taken in user space.
#ifndef ENSEMBLE_WORKER_SYNC_H
#define ENSEMBLE_WORKER_SYNC_H

#include <stdint.h>
#include <pthread.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/// Sleeps while `*word` still equals `expected` (the kernel checks that atomically with going to sleep, so a
/// wake between the caller's last look and this call is never lost). Returns on a wake, a signal, or at once
/// when the word has already changed; callers re-check the word either way.
static inline void ensemble_futex_wait(uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, (void *)0, (void *)0, 0);
}

/// Wakes every thread sleeping in `ensemble_futex_wait` on `word`. Does not block.
static inline void ensemble_futex_wake_all(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, (void *)0, (void *)0, 0);
}

/// The spin-wait hint (x86 `pause`, Arm `yield`): eases the core's pipeline and, on SMT cores, its sibling.
static inline void ensemble_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// Names a thread for debuggers and `top -H` (at most 15 characters). Control side.
void ensemble_name_thread(pthread_t thread, const char *name);

/// The CPU the calling thread runs on (sched_getcpu: a vDSO call, no system call on x86-64), or -1.
int ensemble_current_cpu(void);

/// Lets the calling thread run on every CPU of the process except `cpu` (a system call; nothing when no other
/// CPU is left).
void ensemble_avoid_cpu(int cpu);

#endif
