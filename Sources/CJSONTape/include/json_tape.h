/* json_tape.h: the JSON bodies Apple sends (/verifyReceipt responses, App Store Server API
 * answers, JWS payloads) and the entitlement input, parsed by simdjson into its tape.
 *
 * The tape is simdjson's flat parse result: one 64-bit word per value (two for numbers), built in
 * one pass into buffers the parser reuses; nothing is allocated per value. Reading it is a few
 * inline functions below, so the Swift core walks it without a call per field. The layout is
 * simdjson's documented tape format (simdjson 3.x: doc/tape.md); json_tape.cpp checks the
 * version at build time.
 *
 * Parsing is as strict as the Jansson reader the config uses: duplicate keys, NUL characters
 * and integers beyond int64 are errors, and the top level must be an object or an array. */
#ifndef IAPV_JSON_TAPE_H
#define IAPV_JSON_TAPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed document: owns a parser (with its tape) until json_tape_free. */
typedef struct json_tape json_tape;

/* What the inline readers need: the tape words and the string buffer. */
typedef struct {
    const uint64_t *words;
    const uint8_t *strings;
} json_tape_view;

/* Value kinds, as simdjson writes them in the top byte of a tape word. */
enum {
    JSON_TAPE_OBJECT = '{',
    JSON_TAPE_ARRAY = '[',
    JSON_TAPE_STRING = '"',
    JSON_TAPE_INT64 = 'l',
    JSON_TAPE_UINT64 = 'u',
    JSON_TAPE_DOUBLE = 'd',
    JSON_TAPE_TRUE = 't',
    JSON_TAPE_FALSE = 'f',
    JSON_TAPE_NULL = 'n'
};

/* The root value's index in a view. */
#define JSON_TAPE_ROOT 1u

/* Parses `length` bytes. On success returns the document; on failure NULL with *error set to a
 * static, readable reason. Thread-safe: each thread keeps a few idle parsers for reuse. */
json_tape *json_tape_parse(const void *bytes, size_t length, const char **error);
json_tape_view json_tape_get_view(const json_tape *doc);
/* Releases the document (its parser goes back to this thread's idle list). NULL is fine. */
void json_tape_free(json_tape *doc);

static inline unsigned json_tape_kind(json_tape_view t, uint32_t at) { return (unsigned)(t.words[at] >> 56); }

/* The index just past the value at `at` (past the closing brace for containers). */
static inline uint32_t json_tape_after(json_tape_view t, uint32_t at) {
    switch (json_tape_kind(t, at)) {
    case JSON_TAPE_OBJECT: case JSON_TAPE_ARRAY: return (uint32_t)t.words[at];
    case JSON_TAPE_INT64: case JSON_TAPE_UINT64: case JSON_TAPE_DOUBLE: return at + 2;
    default: return at + 1;
    }
}

/* For a container: how many elements (array) or members (object) it holds, as simdjson counts
 * them while parsing; 0xFFFFFF means that many or more (the count saturates). */
static inline uint32_t json_tape_count(json_tape_view t, uint32_t at) { return (uint32_t)((t.words[at] >> 32) & 0xFFFFFF); }

/* For a container: the index of its closing brace (its members lie in (at, end)). */
static inline uint32_t json_tape_end(json_tape_view t, uint32_t at) { return (uint32_t)t.words[at] - 1; }

/* For a string: its UTF-8 bytes (not NUL-terminated here) and length. */
static inline const uint8_t *json_tape_string(json_tape_view t, uint32_t at, uint32_t *length) {
    const uint8_t *p = t.strings + (t.words[at] & 0x00FFFFFFFFFFFFFFull);
    memcpy(length, p, sizeof *length);
    return p + sizeof *length;
}

static inline int64_t json_tape_int64(json_tape_view t, uint32_t at) {
    int64_t v;
    memcpy(&v, &t.words[at + 1], sizeof v);
    return v;
}

static inline double json_tape_double(json_tape_view t, uint32_t at) {
    double v;
    memcpy(&v, &t.words[at + 1], sizeof v);
    return v;
}

/* The value of `key` in the object at `at`, or 0 when absent (keys are unique: see above). */
static inline uint32_t json_tape_find(json_tape_view t, uint32_t at, const void *key, size_t key_length) {
    uint32_t end = json_tape_end(t, at);
    uint32_t i = at + 1;
    while (i < end) {
        uint32_t n;
        const uint8_t *k = json_tape_string(t, i, &n);
        if (n == key_length && memcmp(k, key, key_length) == 0) return i + 1;
        i = json_tape_after(t, i + 1);
    }
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif
