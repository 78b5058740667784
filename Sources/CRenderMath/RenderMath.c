// The functions are static inline in include/RenderMath.h; SwiftPM needs one source file per C target.
#include "RenderMath.h"

// A weak reference: resolved when CAllocationCounter's interposer is linked into the process, null otherwise, so
// the library never interposes malloc itself.
extern uint64_t allocation_counter_thread_total(void) __attribute__((weak));

uint64_t ensemble_thread_allocations(void) {
    return allocation_counter_thread_total ? allocation_counter_thread_total() : UINT64_MAX;
}
