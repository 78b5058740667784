#ifndef ENSEMBLE_BACKEND_LOGS_H
#define ENSEMBLE_BACKEND_LOGS_H

/// Replaces alsa-lib's error handler, which prints every failed lookup of a device ("ALSA lib confmisc.c:855:
/// (parse_card) cannot find card '0'" …) to stderr, with one that prints nothing. alsa-lib is the instance
/// OpenAL Soft uses (loaded by name, RTLD_GLOBAL). Returns 1 when the handler was replaced, 0 when there is no
/// alsa-lib. The command line calls it before OpenAL opens a device, unless --verbose.
int ensemble_silence_alsa_errors(void);

#endif
