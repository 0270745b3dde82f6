/* The host's side of the C snippets in README.md and the docs that are parts of a program: the
 * names they use without defining them. Tests/docs/run_examples.py compiles each such snippet as
 * the body of a function after this header; nothing is run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <iapverify.h>

static const unsigned char receipt[] = { 0 };
static const size_t receipt_len = sizeof receipt;
static const int64_t now_ms = 1767225600000;
static void log_rejection(const char *verdict) { (void)verdict; }
