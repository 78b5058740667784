#include "BackendLogs.h"
#include <dlfcn.h>

/// alsa-lib's snd_lib_error_handler_t: printf-style, hence variadic (a Swift function cannot be one).
typedef void (*alsa_error_handler)(const char *file, int line, const char *function, int err, const char *fmt, ...);

static void ignore_alsa_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

int ensemble_silence_alsa_errors(void) {
    void *alsa = dlopen("libasound.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!alsa) return 0;
    int (*set_handler)(alsa_error_handler) = (int (*)(alsa_error_handler))dlsym(alsa, "snd_lib_error_set_handler");
    if (!set_handler) return 0;
    set_handler(ignore_alsa_error);
    return 1;
}
