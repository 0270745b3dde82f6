/*
 * floor.h: an engineered C floor for App Store receipts.
 *
 * What a receipt call has to do and no more, in plain C over libcrypto: base64 decode, a direct
 * DER walk of the PKCS#7 SignedData, the signer's key from a chain cache keyed by the exact
 * certificate bytes, one EVP_DigestVerify over the content, the payload's attributes (strings as
 * pointers into the decoded buffer, dates as Unix ms), and a minimal entitlement walk. The
 * benchmark (floor_bench.c) measures the library against it.
 *
 * Not a validator to ship: it exists to be the lower bound a library ratio is read against.
 */
#ifndef IAPV_FLOOR_H
#define IAPV_FLOOR_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#define FL_NONE INT64_MIN          /* an absent date */

typedef struct { const uint8_t *p; size_t n; } fl_str;

typedef struct {
    int64_t quantity;              /* 1701 */
    fl_str  product_id;            /* 1702 */
    fl_str  transaction_id;        /* 1703 */
    fl_str  original_transaction_id; /* 1705 */
    int64_t purchase_ms;           /* 1704 */
    int64_t expires_ms;            /* 1708, FL_NONE when absent or empty */
    int64_t cancellation_ms;       /* 1712, FL_NONE when absent or empty */
    int64_t web_order_line_item_id; /* 1711 */
    /* What only the result document needs (fl_write_in_app): */
    int64_t original_purchase_ms;  /* 1706 */
    int64_t product_type;          /* 1707 */
    fl_str  promotional_offer_id;  /* 1721 */
    signed char has_quantity, has_web_order, has_product_type;
    signed char trial, intro;      /* 1713, 1719: -1 absent */
    fl_str  record;                /* the record's attributes (the SET's content) */
} fl_purchase;

/* One product's entitlement: the latest unrevoked expiry (or none) against now. */
typedef struct {
    fl_str  product_id;
    int64_t latest_expiry_ms;      /* FL_NONE: no unrevoked purchase with an expiry */
    int     any_expiry;            /* some transaction has an expiry: a subscription */
    int     unrevoked_without_expiry; /* an unrevoked purchase that does not expire */
    int     active;                /* subscription: latest unrevoked expiry > now;
                                      otherwise (owned, the library's rule without a catalog): an
                                      unrevoked purchase at or before now */
} fl_product;

/* Everything a call produces. Its arrays are allocated once and grown only when a receipt has
 * more purchases than any before it; the strings point into buf (the decoded receipt). */
typedef struct {
    uint8_t *buf; size_t buf_cap;  /* decoded DER */
    fl_str  bundle_id;             /* 2 */
    fl_str  app_version;           /* 3 */
    int64_t created_ms;            /* 12 */
    int     digest_nid;            /* NID_sha1 or NID_sha256 */
    fl_purchase *iap; size_t n_iap, iap_cap;
    fl_product *products; size_t n_products;
    uint32_t *slots; size_t slot_cap;  /* open addressing over products, slot_cap a power of 2 */
    size_t n_active;
    uint8_t *out; size_t out_cap;  /* fl_write_in_app's document */
} fl_receipt;

/* The verified-chain cache: certificates field bytes + signer issuer/serial -> the leaf's key. */
typedef struct {
    uint8_t *certs; size_t certs_len;
    uint8_t *sid; size_t sid_len;
    EVP_PKEY *key;
} fl_chain;

typedef struct {
    X509_STORE *roots;
    fl_chain chains[8];
    int n_chains;
    unsigned long chain_verifications;  /* how many times X509_verify_cert ran (cache misses) */
    EVP_MD_CTX *md;
} fl_ctx;

enum {
    FL_OK = 0, FL_E_BASE64, FL_E_STRUCTURE, FL_E_ALGORITHM, FL_E_CHAIN, FL_E_SIGNATURE, FL_E_PAYLOAD, FL_E_MEMORY
};

/* roots: Apple's root certificates (PEM files). Returns 0 on success. */
int  fl_ctx_init(fl_ctx *ctx, const char *const *root_pem_paths, int n);
void fl_ctx_free(fl_ctx *ctx);
void fl_receipt_free(fl_receipt *r);

/* One call: b64 is the receipt as hosts get it. Returns FL_OK or the first failing step. */
int fl_verify_receipt(fl_ctx *ctx, const char *b64, size_t len, int64_t now_ms, fl_receipt *out);

const char *fl_error_name(int code);

/* The contract's per-purchase output, engineered in C: the receipt's `in_app` array exactly as the
 * library writes it (every member, the unknown attributes as base64), into r->out. Returns its
 * length. It bounds from below what any implementation of the result JSON pays per purchase. */
size_t fl_write_in_app(fl_receipt *r);

#endif
