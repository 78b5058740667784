#ifndef ENSEMBLE_ALLOCATION_COUNTER_H
#define ENSEMBLE_ALLOCATION_COUNTER_H
#include <stdint.h>

/// Starts counting heap allocations made by the calling thread (and only that thread).
void allocation_counter_start(void);
/// Stops counting on the calling thread and returns how many allocations it made since the start.
uint64_t allocation_counter_stop(void);
/// Every allocation the calling thread has made since it started (never reset; nests inside a start/stop).
uint64_t allocation_counter_thread_total(void);
/// Enrols the calling thread in the shared count (a render worker thread calls it once when it starts).
void allocation_counter_enroll(void);
/// Starts counting the allocations of every enrolled thread, together (from zero).
void allocation_counter_shared_start(void);
/// Stops the shared count and returns the allocations enrolled threads made since the start.
uint64_t allocation_counter_shared_stop(void);
/// Total allocations seen by the interposer in this process (proves the interposer is live).
uint64_t allocation_counter_process_total(void);
/// Bytes allocated and not yet freed, over every malloc arena (glibc's mallinfo2): live heap bytes, unlike
/// the resident size, which keeps pages the allocator holds on to after a free.
uint64_t allocation_counter_heap_in_use(void);

#endif
