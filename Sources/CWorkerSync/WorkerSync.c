// Control side: naming a worker thread (pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc import
// does not set). The wait and wake functions are static inline in include/WorkerSync.h.
#define _GNU_SOURCE
#include <pthread.h>
#include "WorkerSync.h"

void ensemble_name_thread(pthread_t thread, const char *name) { (void)pthread_setname_np(thread, name); }
