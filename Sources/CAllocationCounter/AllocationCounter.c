// Interposes the C allocator for the test executable. glibc exports its real allocator as __libc_*,
// so the wrappers need neither dlsym (which itself allocates) nor any state beyond two counters.
// Counting is per thread: only the thread that called allocation_counter_start is counted, so the
// event-delivery thread and XCTest's own threads do not pollute a render-thread measurement.
#include "AllocationCounter.h"
#include <malloc.h>
#include <stddef.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread uint64_t thread_count;
// Every allocation of the thread, counted always (read around a call without disturbing a running count).
static __thread uint64_t thread_total;
static _Atomic uint64_t process_total;
// Threads enrolled in the shared count (render worker threads): counted together while shared counting is on.
static __thread int enrolled;
static _Atomic int shared_counting;
static _Atomic uint64_t shared_count;

static inline void note(void) {
    atomic_fetch_add_explicit(&process_total, 1, memory_order_relaxed);
    thread_total++;
    if (counting) thread_count++;
    if (enrolled && atomic_load_explicit(&shared_counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&shared_count, 1, memory_order_relaxed);
}

// Under AddressSanitizer or ThreadSanitizer (`swift test --sanitize=address|thread`) the sanitizer's allocator must
// stay in place: nothing is counted then (AllocationTests.testCounterIsLiveAndCounts says so), but the rest of the
// suite runs checked.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ENSEMBLE_SANITIZER_ALLOCATOR 1
#endif
#endif
#ifndef ENSEMBLE_SANITIZER_ALLOCATOR
void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { note(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    void *p = __libc_memalign(alignment, size);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
#endif

void allocation_counter_start(void) { thread_count = 0; counting = 1; }
uint64_t allocation_counter_stop(void) { counting = 0; return thread_count; }
uint64_t allocation_counter_thread_total(void) { return thread_total; }
void allocation_counter_enroll(void) { enrolled = 1; }
void allocation_counter_shared_start(void) {
    atomic_store_explicit(&shared_count, 0, memory_order_relaxed);
    atomic_store_explicit(&shared_counting, 1, memory_order_seq_cst);
}
uint64_t allocation_counter_shared_stop(void) {
    atomic_store_explicit(&shared_counting, 0, memory_order_seq_cst);
    return atomic_load_explicit(&shared_count, memory_order_relaxed);
}
uint64_t allocation_counter_process_total(void) {
    return atomic_load_explicit(&process_total, memory_order_relaxed);
}

uint64_t allocation_counter_heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return (uint64_t)(m.uordblks + m.hblkhd);
}
