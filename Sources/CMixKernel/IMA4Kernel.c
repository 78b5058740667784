// Render thread (the lanes): Apple IMA4 blocks decoded for compact sounds (IMA4Packets.convert).
#include "IMA4Kernel.h"

enum { BLOCK_BYTES = 34, BLOCK_SAMPLES = 64 };

typedef void (*ima4_fn)(const uint8_t *, const int8_t *, long, float *, const ensemble_ima4_tables *);

// The state a block starts from: its header's predictor (top 9 bits) plus its recorded delta, and its step index
// (above 88 is not a loaded sound's state, their headers are checked: kept inside the table).
static inline int32_t start_predictor(const uint8_t *block, int8_t delta) {
    return (int32_t)(int16_t)((block[0] << 8 | block[1]) & 0xFF80) + delta;
}

static inline int32_t start_index(const uint8_t *block) {
    int32_t index = block[1] & 0x7F;
    return index > 88 ? 88 : index;
}

// Each code's lookup waits for the step index the code before it left, a chain of dependent loads: one block
// decodes at a few nanoseconds a sample however many there are, which is why the vector path below exists.
static void decode_one(const uint8_t *block, int8_t delta, float *out, const int32_t *expand) {
    int32_t p = start_predictor(block, delta), index = start_index(block);
    for (int k = 0; k < 32; k++) {
        uint8_t byte = block[2 + k];
        for (int half = 0; half < 2; half++) {
            int32_t e = expand[index << 4 | (half ? byte >> 4 : byte & 0x0F)];
            index = e & 0xFF;
            p += e >> 8;
            p = p < -32768 ? -32768 : p > 32767 ? 32767 : p;
            out[2 * k + half] = (float)p * 0x1p-15f;
        }
    }
}

static void decode_portable(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                            const ensemble_ima4_tables *tables) {
    for (long i = 0; i < count; i++)
        decode_one(blocks + BLOCK_BYTES * i, deltas[i], out + BLOCK_SAMPLES * i, tables->expand);
}

static ima4_fn ima4 = decode_portable;
static int ima4_path = ENSEMBLE_IMA4_SCALAR;

#if defined(__x86_64__)
#include <immintrin.h>

#define SSE41 __attribute__((target("sse4.1")))

// Rows of sixteen bytes transposed: afterwards row k holds byte k of every input row, in row order.
SSE41 static inline void transpose16(__m128i r[16]) {
    __m128i t[16];
    for (int i = 0; i < 8; i++) {
        t[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        t[i + 8] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm_unpacklo_epi16(t[2 * i], t[2 * i + 1]);
        r[i + 4] = _mm_unpackhi_epi16(t[2 * i], t[2 * i + 1]);
        r[i + 8] = _mm_unpacklo_epi16(t[8 + 2 * i], t[8 + 2 * i + 1]);
        r[i + 12] = _mm_unpackhi_epi16(t[8 + 2 * i], t[8 + 2 * i + 1]);
    }
    for (int g = 0; g < 4; g++) {
        for (int i = 0; i < 2; i++) {
            t[4 * g + i] = _mm_unpacklo_epi32(r[4 * g + 2 * i], r[4 * g + 2 * i + 1]);
            t[4 * g + i + 2] = _mm_unpackhi_epi32(r[4 * g + 2 * i], r[4 * g + 2 * i + 1]);
        }
    }
    for (int g = 0; g < 4; g++) {
        r[4 * g] = _mm_unpacklo_epi64(t[4 * g], t[4 * g + 1]);
        r[4 * g + 1] = _mm_unpackhi_epi64(t[4 * g], t[4 * g + 1]);
        r[4 * g + 2] = _mm_unpacklo_epi64(t[4 * g + 2], t[4 * g + 3]);
        r[4 * g + 3] = _mm_unpackhi_epi64(t[4 * g + 2], t[4 * g + 3]);
    }
}

// One code of eight blocks (16-bit lanes): the difference as A = step (code bit 2) and B = step/8 + step/2 (bit 1)
// + step/4 (bit 0), both within 16 bits, negated for bit 3, added with saturation one after the other. A and B
// have the same sign, so clamp(p + A + B) is what the two saturating additions give: the scalar decoder's value.
#define EIGHT_LANES(P, UNPACK, OUT)                                                                           \
    do {                                                                                                      \
        __m128i step_ = UNPACK(low, high), c_ = UNPACK(code, zero);                                          \
        __m128i m4_ = _mm_srai_epi16(_mm_slli_epi16(c_, 13), 15), m2_ = _mm_srai_epi16(_mm_slli_epi16(c_, 14), 15); \
        __m128i m1_ = _mm_srai_epi16(_mm_slli_epi16(c_, 15), 15), m8_ = _mm_srai_epi16(_mm_slli_epi16(c_, 12), 15); \
        __m128i a_ = _mm_and_si128(step_, m4_);                                                               \
        __m128i b_ = _mm_add_epi16(_mm_add_epi16(_mm_srli_epi16(step_, 3), _mm_and_si128(_mm_srli_epi16(step_, 1), m2_)), \
                                   _mm_and_si128(_mm_srli_epi16(step_, 2), m1_));                            \
        a_ = _mm_sub_epi16(_mm_xor_si128(a_, m8_), m8_);                                                      \
        b_ = _mm_sub_epi16(_mm_xor_si128(b_, m8_), m8_);                                                      \
        P = _mm_adds_epi16(_mm_adds_epi16(P, a_), b_);                                                        \
        OUT = P;                                                                                              \
    } while (0)

// Step sizes of sixteen step indices (0…88) as two byte planes: six tables of sixteen entries each, the right one
// picked by the index's bits 4, 5 and 6 (moved to each byte's top bit, which is what a byte blend reads).
#define STEP_PLANE(tab)                                                                                       \
    _mm_blendv_epi8(_mm_blendv_epi8(_mm_blendv_epi8(_mm_shuffle_epi8(tab[0], low4), _mm_shuffle_epi8(tab[1], low4), k4), \
                                    _mm_blendv_epi8(_mm_shuffle_epi8(tab[2], low4), _mm_shuffle_epi8(tab[3], low4), k4), k5), \
                    _mm_blendv_epi8(_mm_shuffle_epi8(tab[4], low4), _mm_shuffle_epi8(tab[5], low4), k4), k6)

// Up to sixteen blocks at once, block i in byte lane i (lanes past `count` decode zeros and are not stored).
SSE41 static void decode16(const uint8_t *blocks, const int8_t *deltas, int count, float *out,
                           const ensemble_ima4_tables *tables) {
    __m128i first[16], second[16];
    int16_t p0[16];
    uint8_t i0[16];
    for (int q = 0; q < 16; q++) {
        if (q < count) {
            const uint8_t *b = blocks + BLOCK_BYTES * q;
            p0[q] = (int16_t)start_predictor(b, deltas[q]);
            i0[q] = (uint8_t)start_index(b);
            first[q] = _mm_loadu_si128((const __m128i *)(b + 2));
            second[q] = _mm_loadu_si128((const __m128i *)(b + 18));
        } else {
            p0[q] = 0;
            i0[q] = 0;
            first[q] = second[q] = _mm_setzero_si128();
        }
    }
    transpose16(first);
    transpose16(second);
    __m128i lowTab[6], highTab[6];
    for (int c = 0; c < 6; c++) {
        lowTab[c] = _mm_loadu_si128((const __m128i *)(tables->stepLow + 16 * c));
        highTab[c] = _mm_loadu_si128((const __m128i *)(tables->stepHigh + 16 * c));
    }
    const __m128i indexStep = _mm_loadu_si128((const __m128i *)tables->indexStep);
    const __m128i nibble = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128(), top = _mm_set1_epi8(88);
    __m128i index = _mm_loadu_si128((const __m128i *)i0);
    __m128i pa = _mm_loadu_si128((const __m128i *)p0), pb = _mm_loadu_si128((const __m128i *)(p0 + 8));
    __m128i samples[BLOCK_SAMPLES][2]; // sample s of blocks 0…7 and 8…15
    for (int k = 0; k < 32; k++) {
        __m128i bytes = k < 16 ? first[k] : second[k - 16];
        for (int half = 0; half < 2; half++) {
            __m128i code = _mm_and_si128(half ? _mm_srli_epi16(bytes, 4) : bytes, nibble);
            __m128i low4 = _mm_and_si128(index, nibble);
            __m128i k4 = _mm_slli_epi16(index, 3), k5 = _mm_slli_epi16(index, 2), k6 = _mm_slli_epi16(index, 1);
            __m128i low = STEP_PLANE(lowTab), high = STEP_PLANE(highTab);
            index = _mm_min_epi8(_mm_max_epi8(_mm_add_epi8(index, _mm_shuffle_epi8(indexStep, code)), zero), top);
            EIGHT_LANES(pa, _mm_unpacklo_epi8, samples[2 * k + half][0]);
            EIGHT_LANES(pb, _mm_unpackhi_epi8, samples[2 * k + half][1]);
        }
    }
    // Back to block order, eight samples of eight blocks at a time (a transpose of 16-bit lanes), then to Float.
    const __m128 scale = _mm_set1_ps(0x1p-15f);
    for (int h = 0; h < 2; h++) {
        for (int s = 0; s < BLOCK_SAMPLES; s += 8) {
            __m128i a0 = _mm_unpacklo_epi16(samples[s][h], samples[s + 1][h]);
            __m128i a1 = _mm_unpackhi_epi16(samples[s][h], samples[s + 1][h]);
            __m128i a2 = _mm_unpacklo_epi16(samples[s + 2][h], samples[s + 3][h]);
            __m128i a3 = _mm_unpackhi_epi16(samples[s + 2][h], samples[s + 3][h]);
            __m128i a4 = _mm_unpacklo_epi16(samples[s + 4][h], samples[s + 5][h]);
            __m128i a5 = _mm_unpackhi_epi16(samples[s + 4][h], samples[s + 5][h]);
            __m128i a6 = _mm_unpacklo_epi16(samples[s + 6][h], samples[s + 7][h]);
            __m128i a7 = _mm_unpackhi_epi16(samples[s + 6][h], samples[s + 7][h]);
            __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
            __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
            __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
            __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
            __m128i rows[8] = {_mm_unpacklo_epi64(b0, b4), _mm_unpackhi_epi64(b0, b4), _mm_unpacklo_epi64(b1, b5),
                               _mm_unpackhi_epi64(b1, b5), _mm_unpacklo_epi64(b2, b6), _mm_unpackhi_epi64(b2, b6),
                               _mm_unpacklo_epi64(b3, b7), _mm_unpackhi_epi64(b3, b7)};
            for (int j = 0; j < 8 && 8 * h + j < count; j++) {
                float *o = out + BLOCK_SAMPLES * (8 * h + j) + s;
                _mm_storeu_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepi16_epi32(rows[j])), scale));
                _mm_storeu_ps(o + 4, _mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepi16_epi32(_mm_srli_si128(rows[j], 8))), scale));
            }
        }
    }
}

// Whether every block of the group starts within 16 bits, as the vector path's 16-bit predictors assume (a
// compact sound's recorded states always do; anything else takes the scalar path, whose predictor has 32 bits).
static int starts_in_range(const uint8_t *blocks, const int8_t *deltas, int count) {
    for (int q = 0; q < count; q++) {
        int32_t p = start_predictor(blocks + BLOCK_BYTES * q, deltas[q]);
        if (p < -32768 || p > 32767) return 0;
    }
    return 1;
}

// Groups of sixteen; a group of fewer than four blocks goes one at a time (the vector loop costs the same for
// one block as for sixteen).
static void decode_sse41(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                         const ensemble_ima4_tables *tables) {
    long i = 0;
    while (count - i >= 4) {
        int n = count - i < 16 ? (int)(count - i) : 16;
        if (starts_in_range(blocks + BLOCK_BYTES * i, deltas + i, n)) {
            decode16(blocks + BLOCK_BYTES * i, deltas + i, n, out + BLOCK_SAMPLES * i, tables);
        } else {
            decode_portable(blocks + BLOCK_BYTES * i, deltas + i, n, out + BLOCK_SAMPLES * i, tables);
        }
        i += n;
    }
    decode_portable(blocks + BLOCK_BYTES * i, deltas + i, count - i, out + BLOCK_SAMPLES * i, tables);
}

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))

// Byte i of a 32-byte row to bytes 2i and 2i + 1 (`vpermb` indices).
static const uint8_t byte_pairs[64] = {
    0,  0,  1,  1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,  8,  9,  9,  10, 10,
    11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18, 19, 19, 20, 20, 21, 21,
    22, 22, 23, 23, 24, 24, 25, 25, 26, 26, 27, 27, 28, 28, 29, 29, 30, 30, 31, 31,
};

// Up to 32 blocks at once (block q at blocks[q], its samples to outs[q]) in the 16-bit lanes of a zmm, with the SSE4.1
// path's integers (same bits). The step index is held twice in each lane (both bytes), so one `vpermi2b` over the
// 128-byte low-byte plane and one over the high-byte plane give each lane's step size whole after a byte blend; the
// code's bits become mask registers.
AVX512 static void decode32(const uint8_t *const *blocks, const int8_t *deltas, float *const *outs, int count,
                            const ensemble_ima4_tables *tables) {
    __m128i first[2][16], second[2][16];
    int16_t p0[32];
    uint16_t i0[32];
    for (int q = 0; q < 32; q++) {
        __m128i *f = &first[q >> 4][q & 15], *s = &second[q >> 4][q & 15];
        if (q < count) {
            const uint8_t *b = blocks[q];
            p0[q] = (int16_t)start_predictor(b, deltas[q]);
            i0[q] = (uint16_t)(start_index(b) * 0x0101);
            *f = _mm_loadu_si128((const __m128i *)(b + 2));
            *s = _mm_loadu_si128((const __m128i *)(b + 18));
        } else {
            p0[q] = 0;
            i0[q] = 0;
            *f = *s = _mm_setzero_si128();
        }
    }
    int halves = count > 16 ? 2 : 1;
    for (int h = 0; h < halves; h++) {
        transpose16(first[h]);
        transpose16(second[h]);
    }
    // The step table's planes, 128 entries each (indices above 88 never occur after the clamp).
    const __m512i lowA = _mm512_loadu_si512(tables->stepLow), lowB = _mm512_loadu_si512(tables->stepLow + 64);
    const __m512i highA = _mm512_loadu_si512(tables->stepHigh), highB = _mm512_loadu_si512(tables->stepHigh + 64);
    const __m512i indexStep = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)tables->indexStep));
    const __m512i duplicate = _mm512_loadu_si512(byte_pairs);
    const __m512i nibbles = _mm512_set1_epi16(0x0F0F), zero = _mm512_setzero_si512(), top = _mm512_set1_epi8(88);
    const __m512i bit1 = _mm512_set1_epi16(1), bit2 = _mm512_set1_epi16(2), bit4 = _mm512_set1_epi16(4),
                  bit8 = _mm512_set1_epi16(8);
    const __mmask64 odd = 0xAAAAAAAAAAAAAAAAull;
    __m512i index = _mm512_loadu_si512(i0), p = _mm512_loadu_si512(p0);
    __m512i samples[BLOCK_SAMPLES];
    for (int k = 0; k < 32; k++) {
        __m128i a = k < 16 ? first[0][k] : second[0][k - 16], b = k < 16 ? first[1][k] : second[1][k - 16];
        // Byte k of block q in both bytes of lane q.
        __m512i bytes = _mm512_permutexvar_epi8(duplicate, _mm512_castsi256_si512(_mm256_set_m128i(b, a)));
        for (int half = 0; half < 2; half++) {
            __m512i code = _mm512_and_si512(half ? _mm512_srli_epi16(bytes, 4) : bytes, nibbles);
            __m512i step = _mm512_mask_blend_epi8(odd, _mm512_permutex2var_epi8(lowA, index, lowB),
                                                  _mm512_permutex2var_epi8(highA, index, highB));
            index = _mm512_min_epi8(_mm512_max_epi8(_mm512_add_epi8(index, _mm512_shuffle_epi8(indexStep, code)), zero),
                                    top);
            __mmask32 k1 = _mm512_test_epi16_mask(code, bit1), k2 = _mm512_test_epi16_mask(code, bit2);
            __mmask32 k4 = _mm512_test_epi16_mask(code, bit4), k8 = _mm512_test_epi16_mask(code, bit8);
            __m512i da = _mm512_maskz_mov_epi16(k4, step);
            __m512i db = _mm512_srli_epi16(step, 3);
            db = _mm512_mask_add_epi16(db, k2, db, _mm512_srli_epi16(step, 1));
            db = _mm512_mask_add_epi16(db, k1, db, _mm512_srli_epi16(step, 2));
            da = _mm512_mask_sub_epi16(da, k8, zero, da);
            db = _mm512_mask_sub_epi16(db, k8, zero, db);
            p = _mm512_adds_epi16(_mm512_adds_epi16(p, da), db);
            samples[2 * k + half] = p;
        }
    }
    // Back to block order: an 8×8 transpose of 16-bit lanes within each 128-bit quarter (blocks 8c…8c+7) of eight
    // samples, all four quarters at once; row j then holds samples s…s+7 of blocks j, 8+j, 16+j and 24+j.
    const __m512 scale = _mm512_set1_ps(0x1p-15f);
    for (int s = 0; s < BLOCK_SAMPLES; s += 8) {
        const __m512i *r = samples + s;
        __m512i a0 = _mm512_unpacklo_epi16(r[0], r[1]), a1 = _mm512_unpackhi_epi16(r[0], r[1]);
        __m512i a2 = _mm512_unpacklo_epi16(r[2], r[3]), a3 = _mm512_unpackhi_epi16(r[2], r[3]);
        __m512i a4 = _mm512_unpacklo_epi16(r[4], r[5]), a5 = _mm512_unpackhi_epi16(r[4], r[5]);
        __m512i a6 = _mm512_unpacklo_epi16(r[6], r[7]), a7 = _mm512_unpackhi_epi16(r[6], r[7]);
        __m512i b0 = _mm512_unpacklo_epi32(a0, a2), b1 = _mm512_unpackhi_epi32(a0, a2);
        __m512i b2 = _mm512_unpacklo_epi32(a1, a3), b3 = _mm512_unpackhi_epi32(a1, a3);
        __m512i b4 = _mm512_unpacklo_epi32(a4, a6), b5 = _mm512_unpackhi_epi32(a4, a6);
        __m512i b6 = _mm512_unpacklo_epi32(a5, a7), b7 = _mm512_unpackhi_epi32(a5, a7);
        __m512i rows[8] = {_mm512_unpacklo_epi64(b0, b4), _mm512_unpackhi_epi64(b0, b4),
                           _mm512_unpacklo_epi64(b1, b5), _mm512_unpackhi_epi64(b1, b5),
                           _mm512_unpacklo_epi64(b2, b6), _mm512_unpackhi_epi64(b2, b6),
                           _mm512_unpacklo_epi64(b3, b7), _mm512_unpackhi_epi64(b3, b7)};
        for (int j = 0; j < 8 && j < count; j++) {
            for (int h = 0; h < 2 && 16 * h + j < count; h++) {
                __m256i half = h ? _mm512_extracti64x4_epi64(rows[j], 1) : _mm512_castsi512_si256(rows[j]);
                __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(half)), scale);
                _mm256_storeu_ps(outs[16 * h + j] + s, _mm512_castps512_ps256(f));
                if (16 * h + 8 + j < count)
                    _mm256_storeu_ps(outs[16 * h + 8 + j] + s,
                                     _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1)));
            }
        }
    }
}

// The blocks of one or two planes (channels) as one list, `count` of each, in groups of 32 (one pass costs the same
// however many lanes are live: a mono window's 17 packets take one, a stereo window's 2 × 9 too); a group of one or
// two blocks goes one at a time, which is cheaper than a pass.
static void decode_avx512_planes(const uint8_t *b0, const int8_t *d0, float *o0, const uint8_t *b1, const int8_t *d1,
                                 float *o1, long count, int planes, const ensemble_ima4_tables *tables) {
    long total = planes * count, i = 0;
    const uint8_t *blocks[32];
    int8_t deltas[32];
    float *outs[32];
    while (i < total) {
        int n = total - i < 32 ? (int)(total - i) : 32, inRange = n >= 3;
        for (int q = 0; q < n; q++) {
            long k = i + q;
            int second = k >= count;
            long j = second ? k - count : k;
            blocks[q] = (second ? b1 : b0) + BLOCK_BYTES * j;
            deltas[q] = (second ? d1 : d0)[j];
            outs[q] = (second ? o1 : o0) + BLOCK_SAMPLES * j;
            int32_t p = start_predictor(blocks[q], deltas[q]);
            if (p < -32768 || p > 32767) inRange = 0;
        }
        if (inRange) {
            decode32(blocks, deltas, outs, n, tables);
        } else {
            for (int q = 0; q < n; q++) decode_one(blocks[q], deltas[q], outs[q], tables->expand);
        }
        i += n;
    }
}

static void decode_avx512(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                          const ensemble_ima4_tables *tables) {
    decode_avx512_planes(blocks, deltas, out, blocks, deltas, out, count, 1, tables);
}

static int has_avx512vbmi(void) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
}

// Chosen once at load time, before any thread renders: AVX-512 VBMI, else SSE4.1, else one block at a time.
__attribute__((constructor)) static void choose_ima4_kernel(void) {
    __builtin_cpu_init();
    if (has_avx512vbmi()) {
        ima4 = decode_avx512;
        ima4_path = ENSEMBLE_IMA4_AVX512VBMI;
    } else if (__builtin_cpu_supports("sse4.1")) {
        ima4 = decode_sse41;
        ima4_path = ENSEMBLE_IMA4_SSE41;
    }
}
#endif

void ensemble_ima4_decode(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                          const ensemble_ima4_tables *tables) {
    ima4(blocks, deltas, count, out, tables);
}

void ensemble_ima4_decode_portable(const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                                   const ensemble_ima4_tables *tables) {
    decode_portable(blocks, deltas, count, out, tables);
}

int ensemble_ima4_path(void) { return ima4_path; }

// Two planes with one call: the AVX-512 path fills its lanes from both; the others take a plane at a time.
static void decode2_with(int path, ima4_fn fn, const uint8_t *blocks0, const int8_t *deltas0, float *out0,
                         const uint8_t *blocks1, const int8_t *deltas1, float *out1, long count,
                         const ensemble_ima4_tables *tables) {
#if defined(__x86_64__)
    if (path == ENSEMBLE_IMA4_AVX512VBMI) {
        decode_avx512_planes(blocks0, deltas0, out0, blocks1, deltas1, out1, count, 2, tables);
        return;
    }
#endif
    (void)path;
    fn(blocks0, deltas0, count, out0, tables);
    fn(blocks1, deltas1, count, out1, tables);
}

void ensemble_ima4_decode2(const uint8_t *blocks0, const int8_t *deltas0, float *out0, const uint8_t *blocks1,
                           const int8_t *deltas1, float *out1, long count, const ensemble_ima4_tables *tables) {
    decode2_with(ima4_path, ima4, blocks0, deltas0, out0, blocks1, deltas1, out1, count, tables);
}

int ensemble_ima4_force_path(int path) {
    switch (path) {
    case ENSEMBLE_IMA4_SCALAR: ima4 = decode_portable; break;
#if defined(__x86_64__)
    case ENSEMBLE_IMA4_SSE41:
        if (!__builtin_cpu_supports("sse4.1")) return 0;
        ima4 = decode_sse41;
        break;
    case ENSEMBLE_IMA4_AVX512VBMI:
        if (!has_avx512vbmi()) return 0;
        ima4 = decode_avx512;
        break;
#endif
    default: return 0;
    }
    ima4_path = path;
    return 1;
}

int ensemble_ima4_decode2_path(int path, const uint8_t *blocks0, const int8_t *deltas0, float *out0,
                               const uint8_t *blocks1, const int8_t *deltas1, float *out1, long count,
                               const ensemble_ima4_tables *tables) {
    ima4_fn fn = decode_portable;
    switch (path) {
    case ENSEMBLE_IMA4_SCALAR: break;
#if defined(__x86_64__)
    case ENSEMBLE_IMA4_SSE41:
        if (!__builtin_cpu_supports("sse4.1")) return 0;
        fn = decode_sse41;
        break;
    case ENSEMBLE_IMA4_AVX512VBMI:
        if (!has_avx512vbmi()) return 0;
        break;
#endif
    default: return 0;
    }
    decode2_with(path, fn, blocks0, deltas0, out0, blocks1, deltas1, out1, count, tables);
    return 1;
}

int ensemble_ima4_decode_path(int path, const uint8_t *blocks, const int8_t *deltas, long count, float *out,
                              const ensemble_ima4_tables *tables) {
    switch (path) {
    case ENSEMBLE_IMA4_SCALAR: decode_portable(blocks, deltas, count, out, tables); return 1;
#if defined(__x86_64__)
    case ENSEMBLE_IMA4_SSE41:
        if (!__builtin_cpu_supports("sse4.1")) return 0;
        decode_sse41(blocks, deltas, count, out, tables);
        return 1;
    case ENSEMBLE_IMA4_AVX512VBMI:
        if (!has_avx512vbmi()) return 0;
        decode_avx512(blocks, deltas, count, out, tables);
        return 1;
#endif
    default: return 0;
    }
}
