/* Jansson for Swift: json_typeof and friends are macros, so the core reads `type` directly. */
#ifndef IAPV_CJANSSON_SHIM_H
#define IAPV_CJANSSON_SHIM_H
#include <jansson.h>

static inline int cjansson_type(const json_t *j) { return j ? (int)j->type : -1; }
#endif
