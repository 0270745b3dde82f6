/* fast_base64.h: the bulk of a plain base64 text decoded 32 characters a step with AVX2, when the
 * processor has it. The Swift core (Encoding/Base64.swift) decodes the rest, and all of it on
 * other processors; the two give the same bytes (tests and the receipt fuzz target compare both
 * with OpenSSL's decoder on every input). */
#ifndef IAPV_FAST_BASE64_H
#define IAPV_FAST_BASE64_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decodes whole steps of 32 characters of standard base64 (A-Z a-z 0-9 + /, no padding, no
 * whitespace) from `in` (`len` characters) into `out`, three bytes for every four characters,
 * and stops before the first step that holds any other character or does not fit. Returns how
 * many characters it decoded (a multiple of 32; 0 without AVX2). `out` must have room for
 * len / 4 * 3 + 4 bytes: each step writes 4 bytes past its own 24, which the next step or the
 * caller overwrites. */
size_t fast_base64_decode(const uint8_t *in, size_t len, uint8_t *out);

#ifdef __cplusplus
}
#endif
#endif
