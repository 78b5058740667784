// Control side: naming a worker thread. Worker threads: which CPU a thread is on, and moving a worker off the
// render thread's CPU. (These need _GNU_SOURCE, which Swift's Glibc import does not set.) The wait and wake
// functions are static inline in include/WorkerSync.h.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include "WorkerSync.h"

int ensemble_current_cpu(void) { return sched_getcpu(); }

void ensemble_avoid_cpu(int cpu) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    // Start from every CPU the process may use, not the thread's current mask (which may exclude another CPU
    // from an earlier call).
    cpu_set_t all;
    CPU_ZERO(&all);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < online && c < CPU_SETSIZE; c++) CPU_SET((int)c, &all);
    if (sched_getaffinity(getpid(), sizeof allowed, &allowed) == 0) CPU_AND(&all, &all, &allowed);
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_CLR(cpu, &all);
    if (CPU_COUNT(&all) == 0) return; // one CPU: nowhere else to go
    (void)pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

void ensemble_name_thread(pthread_t thread, const char *name) { (void)pthread_setname_np(thread, name); }
