// Render thread: how the one-frame-at-a-time kernels over 16-bit samples (CubicKernelI16.c, LinearKernelI16.c) put
// a frame: stored, or added with the put's gains a…d (`ENSEMBLE_PUT_GAINS`), each product and sum rounded on its
// own (the including files turn contraction off). One definition, so both put the bits `Sink.put` puts.
#ifndef ENSEMBLE_PUT_FRAME_H
#define ENSEMBLE_PUT_FRAME_H

// The put's outputs, gains and mode as locals, for PUT_FRAME.
#define PUT_LOCALS(put)                                                                                       \
    float *restrict outL = (put)->outL, *restrict outR = (put)->outR;                                         \
    const float a = (put)->a, b = (put)->b, c = (put)->c, d = (put)->d;                                       \
    const int gains = (put)->mode == ENSEMBLE_PUT_GAINS;

// Frame j's samples sl (and sr when `stereo`).
#define PUT_FRAME(j, sl, sr, stereo)                                                                          \
    do {                                                                                                      \
        if (!gains) {                                                                                         \
            outL[j] = (sl);                                                                                   \
            if (stereo) outR[j] = (sr);                                                                       \
        } else if (stereo) {                                                                                  \
            outL[j] += a * (sl) + b * (sr);                                                                   \
            outR[j] += c * (sl) + d * (sr);                                                                   \
        } else {                                                                                              \
            outL[j] += a * (sl);                                                                              \
            outR[j] += c * (sl);                                                                              \
        }                                                                                                     \
    } while (0)

#endif
