/* The AVX2 step of base64 decoding: classify 32 characters by range, turn each into its 6-bit
 * value by the offset of its range, then pack four values into three bytes with two multiply-adds
 * and one byte shuffle. Any character outside the alphabet ends the bulk before its step, so the
 * caller's scalar loop meets it and refuses the text exactly as it would have. */
#include "fast_base64.h"

#include <stdlib.h>

/* The portable path is forced by building with -DIAPV_NO_AVX2 (no AVX2 code at all), or at run
 * time by IAPV_NO_AVX2 in the environment (any value; read once per process): then this returns 0
 * and the Swift decoder does all of it, as on a processor without AVX2 or another architecture. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(IAPV_NO_AVX2)
#include <immintrin.h>

__attribute__((target("avx2")))
static size_t decode_avx2(const uint8_t *in, size_t len, uint8_t *out) {
    const __m256i before_A = _mm256_set1_epi8('A' - 1), after_Z = _mm256_set1_epi8('Z' + 1);
    const __m256i before_a = _mm256_set1_epi8('a' - 1), after_z = _mm256_set1_epi8('z' + 1);
    const __m256i before_0 = _mm256_set1_epi8('0' - 1), after_9 = _mm256_set1_epi8('9' + 1);
    const __m256i plus = _mm256_set1_epi8('+'), slash = _mm256_set1_epi8('/');
    /* A-Z 0-25, a-z 26-51, 0-9 52-61, + 62, / 63: the offset added to each range. */
    const __m256i to_upper = _mm256_set1_epi8(-65), to_lower = _mm256_set1_epi8(-71), to_digit = _mm256_set1_epi8(4);
    const __m256i to_plus = _mm256_set1_epi8(19), to_slash = _mm256_set1_epi8(16);
    /* Pairs of values to 12 bits (first * 64 + second), then pairs of those to 24 bits. */
    const __m256i pair_weights = _mm256_set1_epi32(0x01400140), quad_weights = _mm256_set1_epi32(0x00011000);
    /* Each 32-bit lane holds its three bytes in reverse order in its low 24 bits. */
    const __m256i order = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
                                           2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    size_t done = 0;
    while (len - done >= 32) {
        __m256i c = _mm256_loadu_si256((const __m256i *)(in + done));
        /* Signed compares: a byte of 0x80 or more is negative, so it is in no range. */
        __m256i upper = _mm256_and_si256(_mm256_cmpgt_epi8(c, before_A), _mm256_cmpgt_epi8(after_Z, c));
        __m256i lower = _mm256_and_si256(_mm256_cmpgt_epi8(c, before_a), _mm256_cmpgt_epi8(after_z, c));
        __m256i digit = _mm256_and_si256(_mm256_cmpgt_epi8(c, before_0), _mm256_cmpgt_epi8(after_9, c));
        __m256i is_plus = _mm256_cmpeq_epi8(c, plus), is_slash = _mm256_cmpeq_epi8(c, slash);
        __m256i valid = _mm256_or_si256(_mm256_or_si256(upper, lower), _mm256_or_si256(_mm256_or_si256(digit, is_plus), is_slash));
        if ((uint32_t)_mm256_movemask_epi8(valid) != 0xFFFFFFFFu) break;
        __m256i offset = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(upper, to_upper), _mm256_and_si256(lower, to_lower)),
            _mm256_or_si256(_mm256_and_si256(digit, to_digit),
                            _mm256_or_si256(_mm256_and_si256(is_plus, to_plus), _mm256_and_si256(is_slash, to_slash))));
        __m256i values = _mm256_add_epi8(c, offset);
        __m256i packed = _mm256_madd_epi16(_mm256_maddubs_epi16(values, pair_weights), quad_weights);
        __m256i bytes = _mm256_shuffle_epi8(packed, order);
        uint8_t *to = out + done / 4 * 3;
        _mm_storeu_si128((__m128i *)to, _mm256_castsi256_si128(bytes));
        _mm_storeu_si128((__m128i *)(to + 12), _mm256_extracti128_si256(bytes, 1));
        done += 32;
    }
    return done;
}

/* 1: use AVX2, 0: do not, -1: not decided yet. Threads that race to decide decide the same. */
static int use_avx2 = -1;

size_t fast_base64_decode(const uint8_t *in, size_t len, uint8_t *out) {
    if (len < 32) return 0;
    int use = __atomic_load_n(&use_avx2, __ATOMIC_RELAXED);
    if (use < 0) {
        use = getenv("IAPV_NO_AVX2") == NULL && __builtin_cpu_supports("avx2");
        __atomic_store_n(&use_avx2, use, __ATOMIC_RELAXED);
    }
    return use ? decode_avx2(in, len, out) : 0;
}
#else
size_t fast_base64_decode(const uint8_t *in, size_t len, uint8_t *out) {
    (void)in; (void)len; (void)out;
    return 0;
}
#endif
