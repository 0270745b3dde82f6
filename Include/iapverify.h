/*
 * iapverify.h: the C ABI of libiapverify, one audited App Store purchase validator.
 *
 * Conventions
 *   - Every function returns an iapv_status (0 = the call answered) or a plain value.
 *     A forged, expired or foreign receipt is a normal answer: IAPV_OK plus a verdict.
 *   - Input bytes come as (pointer, length) and are never NUL-terminated.
 *   - The library does no I/O, reads no clock and starts no threads. Time comes from now_ms
 *     (Unix milliseconds, UTC) passed by the caller.
 *   - Ownership: handles returned through an out-parameter belong to the caller and are
 *     released with the matching *_free function. Strings returned by accessors are borrowed
 *     and stay valid until their handle is freed. The library never returns memory that the
 *     caller must free().
 *   - Threads: an iapv_verifier is immutable and may be used by any number of threads at once.
 *     An iapv_result belongs to one caller; read it from one thread at a time. Do not free a
 *     handle while another thread still uses it.
 *
 * The manual (every config key, option, verdict and result field) is in docs/ of the source
 * tree: docs/README.md lists its pages.
 */
#ifndef IAPVERIFY_H
#define IAPVERIFY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------------------------- */

/* The library version, as the top-level VERSION file says (make test checks that they agree). */
#define IAPV_VERSION_MAJOR  0
#define IAPV_VERSION_MINOR  2
#define IAPV_VERSION_PATCH  0
#define IAPV_VERSION_STRING "0.2.0"

#define IAPV_ABI_VERSION 1

/* The ABI version of the loaded library; compare with IAPV_ABI_VERSION. Thread-safe. */
uint32_t iapv_abi_version(void);

/* The library version, e.g. "0.2.0". Static storage; never free it. Thread-safe. */
const char *iapv_version_string(void);

/* ---- status ----------------------------------------------------------------------------- */

/* Could the call answer? 0 = yes, negative = no (see the error message for why). */
typedef int32_t iapv_status;
#define IAPV_OK                   0
#define IAPV_E_INVALID_ARGUMENT  -1   /* NULL where not allowed, bad options JSON, bad now */
#define IAPV_E_CONFIG            -2   /* verifier config rejected */
#define IAPV_E_TOO_LARGE         -3   /* input over the configured cap */
#define IAPV_E_NO_MEMORY         -4
#define IAPV_E_INTERNAL          -5

/* The macro name of a status, e.g. "IAPV_E_CONFIG"; "IAPV_E_UNKNOWN" for other values.
 * Static storage; never free it. Thread-safe. */
const char *iapv_status_name(iapv_status s);

/* The size of iapv_error.message, NUL included. Bindings that allocate an iapv_error read it
 * from iapv_error_message_size() so that they follow the loaded library. */
#define IAPV_ERROR_MESSAGE_SIZE 248
size_t iapv_error_message_size(void);

/* Caller-allocated error details. May be NULL wherever it is accepted. Written only when the
 * status is not IAPV_OK; message is always NUL-terminated UTF-8 and says what to fix. */
typedef struct iapv_error {
    int32_t  code;          /* the same iapv_status the call returned */
    uint32_t reserved;
    char     message[IAPV_ERROR_MESSAGE_SIZE];
} iapv_error;

/* ---- handles ---------------------------------------------------------------------------- */

typedef struct iapv_verifier iapv_verifier;   /* immutable, shareable across threads */
typedef struct iapv_result   iapv_result;     /* per call, owned by the caller */

/* Builds a verifier from a JSON config (docs: the config). config_json need not be NUL-terminated.
 * On success *out receives a handle to release with iapv_verifier_free; on failure *out is
 * NULL and the status is IAPV_E_CONFIG (with a message naming the key) or another error.
 * Thread-safe. */
iapv_status iapv_verifier_new(const char *config_json, size_t config_len,
                              iapv_verifier **out, iapv_error *err);

/* Releases a verifier. NULL is fine. No other thread may be using it. */
void iapv_verifier_free(iapv_verifier *v);

/* ---- calls ------------------------------------------------------------------------------ */

/* Verifies an App Store app receipt: DER, or base64 (standard or URL-safe alphabet, padding
 * optional, whitespace ignored). options_json holds per-call options (docs: the options) and may be
 * NULL with options_len 0; each call reads only its own keys and refuses another call's with
 * IAPV_E_INVALID_ARGUMENT ("does not apply to ..."). now_ms is the caller's trusted time.
 * Returns IAPV_OK with *out set to a result whose verdict says what the receipt is worth, or an
 * error status with *out NULL: IAPV_E_TOO_LARGE over max_input_bytes, IAPV_E_INVALID_ARGUMENT
 * for bad options or a missing device_id under device_check "required".
 * Thread-safe: any number of threads may share v. The input is read only during the call. */
iapv_status iapv_verify_receipt(const iapv_verifier *v, const uint8_t *receipt, size_t len,
                                const char *options_json, size_t options_len, int64_t now_ms,
                                iapv_result **out, iapv_error *err);

/* Interprets the JSON body a host got back from Apple's /verifyReceipt (docs: responses). Pass
 * options {"environment":"Production"|"Sandbox","attempt":N} saying where the body came from
 * ("endpoint" and the lower-case spelling are deprecated: they work until the next release and
 * are listed in the result's "deprecations").
 * The result carries "status", "action" (accept, retry_sandbox, retry_production, retry_later,
 * give_up, fix_configuration, reject), "retry_after_ms", and for an accepted body the
 * entitlements, purchases and delivery plan. A body that fails the bundle or environment
 * checks is rejected like a receipt would be. The host must fetch the body over TLS from
 * Apple's hosts: the JSON itself proves nothing.
 * Thread-safe; the body is read only during the call. */
iapv_status iapv_interpret_response(const iapv_verifier *v, const uint8_t *body, size_t len,
                                    const char *options_json, size_t options_len, int64_t now_ms,
                                    iapv_result **out, iapv_error *err);

/* Computes entitlements, purchases and the delivery plan from
 * {"transactions":[...],"renewal_info":[...]} (docs: the entitlement input), as the host stores them. The verdict
 * is "valid" when the input has that shape and "malformed" otherwise.
 * Thread-safe; the input is read only during the call. */
iapv_status iapv_compute_entitlements(const iapv_verifier *v, const uint8_t *input_json, size_t len,
                                      const char *options_json, size_t options_len, int64_t now_ms,
                                      iapv_result **out, iapv_error *err);

/* Verifies a StoreKit 2 compact JWS (a signed transaction, renewal info, app transaction or an
 * App Store Server Notification V2): ES256, an x5c chain of 3 to a configured root (Apple Root
 * CA - G3 built in) validated at the payload's signedDate, Apple's marker OIDs, then the bundle
 * id and environment. Nested signed data in a notification is verified too. Options may carry
 * "last_signed_date_ms" and "seen_notification_uuids"; the result's notification "action" is
 * then "ignore_stale" or "ignore_duplicate" instead of "apply".
 * Thread-safe; the token is read only during the call. */
iapv_status iapv_verify_jws(const iapv_verifier *v, const uint8_t *jws, size_t len,
                            const char *options_json, size_t options_len, int64_t now_ms,
                            iapv_result **out, iapv_error *err);

/* Reads the transaction id out of an iOS 6 style transaction receipt (the base64 property list
 * SKPaymentTransaction.transactionReceipt gave), WITHOUT verifying anything: no check of its
 * signature is possible here. The verdict is "unverified" when the id was read (the result has
 * "trusted": false, "transaction_id", "environment" and "purchase_info"), else "malformed"; it is
 * never valid. Look the id up with the App Store Server API before granting anything.
 * No verifier needed; thread-safe. */
iapv_status iapv_read_transaction_receipt(const uint8_t *receipt, size_t len,
                                          iapv_result **out, iapv_error *err);

/* ---- App Store Server API, without I/O (docs: the server API) ----------------------------- */

typedef struct iapv_signer iapv_signer;       /* immutable, shareable across threads */

/* Builds a signer from {"private_key_pem": "<the .p8 key from App Store Connect>", "key_id": ...,
 * "issuer_id": ..., "bundle_id": ...} (and, for tests only, "test_base_url"). The key must be an
 * unencrypted EC P-256 private key. A missing, unknown or wrong key is IAPV_E_CONFIG. The private
 * key never appears in a result or an error message. Thread-safe. */
iapv_status iapv_signer_new(const char *config_json, size_t config_len,
                            iapv_signer **out, iapv_error *err);

/* Releases a signer. NULL is fine. No other thread may be using it. */
void iapv_signer_free(iapv_signer *s);

/* A bearer token for the App Store Server API, issued at now_ms and valid 5 minutes:
 * {"token": "<JWT>", "issued_at_ms": ..., "expires_at_ms": ...}. For hosts that build their own
 * requests; iapv_api_request puts a fresh token in each request. The verdict is "token". */
iapv_status iapv_api_token(const iapv_signer *s, int64_t now_ms, iapv_result **out, iapv_error *err);

/* The exact HTTP request for one App Store Server API call. call_json names the endpoint and its
 * parameters, e.g. {"endpoint": "transaction_history", "environment": "Production",
 * "transaction_id": "...", "revision": "...", "query": {...}, "body": {...}} (docs: the server API).
 * The result is {"method", "url", "headers": {...}, "body": "<text>" | null, ...}: send it as is.
 * An unknown endpoint or a bad parameter is IAPV_E_INVALID_ARGUMENT. The verdict is "request".
 * Thread-safe. */
iapv_status iapv_api_request(const iapv_signer *s, const char *call_json, size_t len, int64_t now_ms,
                             iapv_result **out, iapv_error *err);

/* Signs what an app asks its server for, with the signer's key (docs: offer signatures).
 * request_json: {"kind": "promotional_offer_v1" | "promotional_offer" |
 * "introductory_offer_eligibility" | "advanced_commerce_request", "nonce": "<a UUID you made for
 * this request>", and the kind's fields: product_id, offer_identifier, app_account_token (V1),
 * transaction_id, allow_introductory_offer, request (the Advanced Commerce request JSON as text)}.
 * now_ms is the signing time (V1 timestamp; V2 iat). The result is {"kind", "key_id", "nonce",
 * "timestamp_ms", "signature" (V1, base64 DER) , "jws" (V2)}; its verdict is "signature".
 * A missing or bad field is IAPV_E_INVALID_ARGUMENT. Thread-safe. */
iapv_status iapv_sign(const iapv_signer *s, const char *request_json, size_t len, int64_t now_ms,
                      iapv_result **out, iapv_error *err);

/* Interprets an App Store Server API answer. options_json must say which call it answers and how:
 * {"endpoint": "transaction_history", "environment": "Production", "http_status": 200,
 *  "retry_after": "<header text>", "attempt": N} (plus delivered_transaction_ids, orders and
 * renewal_info as for other calls). The result has "action" (accept, next_page, retry_later,
 * retry_sandbox, give_up, fix_configuration, reject), "retry_after_ms", "next_page", Apple's
 * "error_code", and for an accepted answer the verified transactions, renewal infos,
 * entitlements, purchases and delivery plan. Every signed item must verify, or none counts.
 * Thread-safe; the body is read only during the call. */
iapv_status iapv_interpret_api_response(const iapv_verifier *v, const uint8_t *body, size_t len,
                                        const char *options_json, size_t options_len, int64_t now_ms,
                                        iapv_result **out, iapv_error *err);

/* ---- results ---------------------------------------------------------------------------- */

/* The verdict, e.g. "valid" or "signature_invalid". Borrowed from r; NULL if r is NULL. */
const char *iapv_result_verdict(const iapv_result *r);

/* 1 when the verdict is "valid", else 0 (also for NULL). */
int iapv_result_is_valid(const iapv_result *r);

/* The result as UTF-8 JSON (docs: the results), NUL-terminated; its length (without the NUL) goes to
 * *len_out when len_out is not NULL. Borrowed from r; NULL if r is NULL. */
const char *iapv_result_json(const iapv_result *r, size_t *len_out);

/* Releases a result and every string borrowed from it. NULL is fine. */
void iapv_result_free(iapv_result *r);

#ifdef __cplusplus
}
#endif

#endif /* IAPVERIFY_H */
