/*
 * floor.c: the engineered C floor for App Store receipts (see floor.h).
 *
 * Per call: base64 -> DER walk of ContentInfo/SignedData (DER only: definite lengths, a primitive
 * content OCTET STRING; BER with indefinite lengths or chunked content is refused as structure)
 * -> the signer's key from the chain cache (X509_verify_cert against the roots at the receipt's
 * creation date on a miss) -> EVP_DigestVerify over the content -> the payload attributes ->
 * the entitlement walk. No allocation per call once the buffers have grown to the largest
 * receipt seen, apart from what EVP_DigestVerifyInit does inside libcrypto.
 */
#include "floor.h"

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- base64 ----------------------------------------------------------------------------------- */

enum { B64_BAD = -1, B64_WS = -2, B64_PAD = -3 };
static int8_t b64_table[256];
static int b64_ready;

static void b64_init(void) {
    for (int i = 0; i < 256; i++) b64_table[i] = B64_BAD;
    const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; i++) b64_table[(unsigned char)a[i]] = (int8_t)i;
    b64_table['-'] = 62;   /* URL-safe alphabet too */
    b64_table['_'] = 63;
    b64_table[' '] = b64_table['\n'] = b64_table['\r'] = b64_table['\t'] = B64_WS;
    b64_table['='] = B64_PAD;
    b64_ready = 1;
}

/* Returns the decoded length, or -1. out must hold len / 4 * 3 + 3 bytes. */
static long b64_decode(const unsigned char *s, size_t n, uint8_t *out) {
    size_t i = 0, o = 0;
    /* Fast path: whole quads of alphabet characters. */
    while (i + 4 <= n) {
        int a = b64_table[s[i]], b = b64_table[s[i + 1]], c = b64_table[s[i + 2]], d = b64_table[s[i + 3]];
        if ((a | b | c | d) < 0) break;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        out[o] = (uint8_t)(v >> 16); out[o + 1] = (uint8_t)(v >> 8); out[o + 2] = (uint8_t)v;
        o += 3;
        i += 4;
    }
    /* Slow path: whitespace, padding, a final partial quad. */
    uint32_t acc = 0;
    int bits = 0;
    for (; i < n; i++) {
        int v = b64_table[s[i]];
        if (v >= 0) {
            acc = acc << 6 | (uint32_t)v;
            bits += 6;
            if (bits >= 8) { bits -= 8; out[o++] = (uint8_t)(acc >> bits); }
        } else if (v == B64_WS) {
            continue;
        } else if (v == B64_PAD) {
            for (; i < n; i++) if (b64_table[s[i]] != B64_PAD && b64_table[s[i]] != B64_WS) return -1;
            break;
        } else {
            return -1;
        }
    }
    return (long)o;
}

/* ---- DER ---------------------------------------------------------------------------------------- */

typedef struct { const uint8_t *p, *end; } der;

/* Reads one TLV at d->p: its tag, its value, and moves past it. Definite lengths only. */
static int der_next(der *d, unsigned *tag, der *val) {
    const uint8_t *p = d->p;
    if (d->end - p < 2) return 0;
    unsigned t = *p++;
    if ((t & 0x1f) == 0x1f) return 0;          /* high tag numbers never occur here */
    size_t len = *p++;
    if (len & 0x80) {
        unsigned k = (unsigned)(len & 0x7f);
        if (k == 0 || k > 4 || (size_t)(d->end - p) < k) return 0;   /* 0: BER indefinite */
        len = 0;
        while (k--) len = len << 8 | *p++;
    }
    if ((size_t)(d->end - p) < len) return 0;
    *tag = t;
    val->p = p;
    val->end = p + len;
    d->p = p + len;
    return 1;
}

static int der_expect(der *d, unsigned tag, der *val) {
    unsigned t;
    return der_next(d, &t, val) && t == tag;
}

static int der_small_int(der v, int64_t *out) {
    size_t n = (size_t)(v.end - v.p);
    if (n == 0 || n > 8) return 0;
    int64_t x = (v.p[0] & 0x80) ? -1 : 0;
    for (size_t i = 0; i < n; i++) x = (int64_t)((uint64_t)x << 8 | v.p[i]);
    *out = x;
    return 1;
}

static int oid_is(der v, const uint8_t *oid, size_t n) {
    return (size_t)(v.end - v.p) == n && memcmp(v.p, oid, n) == 0;
}

static const uint8_t OID_SIGNED_DATA[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02};
static const uint8_t OID_DATA[]        = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01};
static const uint8_t OID_SHA1[]        = {0x2b, 0x0e, 0x03, 0x02, 0x1a};
static const uint8_t OID_SHA256[]      = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01};
static const uint8_t OID_RSA[]         = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
static const uint8_t OID_SHA1_RSA[]    = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05};
static const uint8_t OID_SHA256_RSA[]  = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b};

/* ---- dates ---------------------------------------------------------------------------------- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const uint8_t *p, int n, unsigned *out) {
    unsigned x = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        x = x * 10 + (unsigned)(p[i] - '0');
    }
    *out = x;
    return 1;
}

/* RFC 3339 as receipts write it: YYYY-MM-DDTHH:MM:SS[.fff]Z. Empty -> FL_NONE. */
static int parse_date(const uint8_t *p, size_t n, int64_t *out) {
    if (n == 0) { *out = FL_NONE; return 1; }
    unsigned Y, M, D, h, mi, s, ms = 0;
    if (n < 20 || p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':') return 0;
    if (!digits(p, 4, &Y) || !digits(p + 5, 2, &M) || !digits(p + 8, 2, &D) || !digits(p + 11, 2, &h) ||
        !digits(p + 14, 2, &mi) || !digits(p + 17, 2, &s))
        return 0;
    size_t i = 19;
    if (p[i] == '.') {
        i++;
        unsigned scale = 100;
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) { ms += (unsigned)(p[i] - '0') * scale; scale /= 10; }
    }
    if (i + 1 != n || p[i] != 'Z' || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || s > 60) return 0;
    *out = ((days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + s) * 1000) + ms;
    return 1;
}

/* ---- payload ---------------------------------------------------------------------------------- */

/* An attribute's value wraps one string TLV (UTF8String 0x0c or IA5String 0x16). */
static int attr_string(der value, unsigned tag, fl_str *out) {
    der v;
    if (!der_expect(&value, tag, &v)) return 0;
    out->p = v.p;
    out->n = (size_t)(v.end - v.p);
    return 1;
}
static int attr_date(der value, int64_t *out) {
    fl_str s;
    return attr_string(value, 0x16, &s) && parse_date(s.p, s.n, out);
}
static int attr_int(der value, int64_t *out) {
    der v;
    return der_expect(&value, 0x02, &v) && der_small_int(v, out);
}

/* Iterates a SET of SEQUENCE { INTEGER type, INTEGER version, OCTET STRING value }. */
static int next_attr(der *set, int64_t *type, der *value) {
    der seq, t, ver;
    if (!der_expect(set, 0x30, &seq)) return 0;
    if (!der_expect(&seq, 0x02, &t) || !der_small_int(t, type)) return 0;
    if (!der_expect(&seq, 0x02, &ver)) return 0;
    return der_expect(&seq, 0x04, value);
}

static int grow(fl_receipt *r) {
    size_t cap = r->iap_cap ? r->iap_cap * 2 : 64;
    fl_purchase *iap = realloc(r->iap, cap * sizeof *iap);
    if (!iap) return 0;
    r->iap = iap;
    fl_product *pr = realloc(r->products, cap * sizeof *pr);
    if (!pr) return 0;
    r->products = pr;
    r->iap_cap = cap;
    return 1;
}

static int decode_purchase(der value, fl_purchase *p) {
    der set;
    if (!der_expect(&value, 0x31, &set)) return 0;
    memset(p, 0, sizeof *p);
    p->expires_ms = p->cancellation_ms = p->purchase_ms = p->original_purchase_ms = FL_NONE;
    p->trial = p->intro = -1;
    p->record = (fl_str){set.p, (size_t)(set.end - set.p)};
    while (set.p < set.end) {
        int64_t type, flag;
        der v;
        if (!next_attr(&set, &type, &v)) return 0;
        switch (type) {
        case 1701: if (!attr_int(v, &p->quantity)) return 0; p->has_quantity = 1; break;
        case 1702: if (!attr_string(v, 0x0c, &p->product_id)) return 0; break;
        case 1703: if (!attr_string(v, 0x0c, &p->transaction_id)) return 0; break;
        case 1705: if (!attr_string(v, 0x0c, &p->original_transaction_id)) return 0; break;
        case 1704: if (!attr_date(v, &p->purchase_ms)) return 0; break;
        case 1706: if (!attr_date(v, &p->original_purchase_ms)) return 0; break;
        case 1707: if (!attr_int(v, &p->product_type)) return 0; p->has_product_type = 1; break;
        case 1708: if (!attr_date(v, &p->expires_ms)) return 0; break;
        case 1712: if (!attr_date(v, &p->cancellation_ms)) return 0; break;
        case 1711: if (!attr_int(v, &p->web_order_line_item_id)) return 0; p->has_web_order = 1; break;
        case 1713: if (!attr_int(v, &flag)) return 0; p->trial = flag != 0; break;
        case 1719: if (!attr_int(v, &flag)) return 0; p->intro = flag != 0; break;
        case 1721: if (!attr_string(v, 0x0c, &p->promotional_offer_id)) return 0; break;
        default: break;
        }
    }
    return p->product_id.p != NULL;
}

static int decode_payload(der content, fl_receipt *r) {
    der set;
    if (!der_expect(&content, 0x31, &set)) return 0;
    r->bundle_id = (fl_str){0, 0};
    r->app_version = (fl_str){0, 0};
    r->created_ms = FL_NONE;
    r->n_iap = 0;
    while (set.p < set.end) {
        int64_t type;
        der v;
        if (!next_attr(&set, &type, &v)) return 0;
        switch (type) {
        case 2: if (!attr_string(v, 0x0c, &r->bundle_id)) return 0; break;
        case 3: if (!attr_string(v, 0x0c, &r->app_version)) return 0; break;
        case 12: if (!attr_date(v, &r->created_ms)) return 0; break;
        case 17:
            if (r->n_iap == r->iap_cap && !grow(r)) return 0;
            if (!decode_purchase(v, &r->iap[r->n_iap])) return 0;
            r->n_iap++;
            break;
        default: break;
        }
    }
    return r->bundle_id.p != NULL && r->created_ms != FL_NONE;
}

/* ---- entitlements ------------------------------------------------------------------------------ */

static uint32_t hash(fl_str s) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < s.n; i++) h = (h ^ s.p[i]) * 16777619u;
    return h;
}

static int entitlements(fl_receipt *r, int64_t now_ms) {
    size_t need = 16;
    while (need < r->n_iap * 2) need *= 2;
    if (need > r->slot_cap) {
        uint32_t *s = realloc(r->slots, need * sizeof *s);
        if (!s) return 0;
        r->slots = s;
        r->slot_cap = need;
    }
    memset(r->slots, 0, r->slot_cap * sizeof *r->slots);
    size_t mask = r->slot_cap - 1;
    r->n_products = 0;
    for (size_t i = 0; i < r->n_iap; i++) {
        fl_purchase *p = &r->iap[i];
        size_t h = hash(p->product_id) & mask;
        fl_product *pr = NULL;
        for (;;) {
            uint32_t s = r->slots[h];
            if (s == 0) {
                pr = &r->products[r->n_products];
                *pr = (fl_product){p->product_id, FL_NONE, 0, 0, 0};
                r->slots[h] = (uint32_t)++r->n_products;
                break;
            }
            fl_product *q = &r->products[s - 1];
            if (q->product_id.n == p->product_id.n && memcmp(q->product_id.p, p->product_id.p, p->product_id.n) == 0) { pr = q; break; }
            h = (h + 1) & mask;
        }
        if (p->expires_ms != FL_NONE) pr->any_expiry = 1;
        if (p->cancellation_ms != FL_NONE && p->cancellation_ms <= now_ms) continue;   /* revoked */
        if (p->purchase_ms != FL_NONE && p->purchase_ms > now_ms) continue;            /* not yet */
        if (p->expires_ms == FL_NONE) pr->unrevoked_without_expiry = 1;
        else if (p->expires_ms > pr->latest_expiry_ms) pr->latest_expiry_ms = p->expires_ms;
    }
    r->n_active = 0;
    for (size_t i = 0; i < r->n_products; i++) {
        fl_product *pr = &r->products[i];
        pr->active = pr->any_expiry ? pr->latest_expiry_ms != FL_NONE && pr->latest_expiry_ms > now_ms
                                    : pr->unrevoked_without_expiry;
        r->n_active += (size_t)pr->active;
    }
    return 1;
}

/* ---- chain cache -------------------------------------------------------------------------------- */

static EVP_MD *md_sha1, *md_sha256;

int fl_ctx_init(fl_ctx *ctx, const char *const *roots, int n) {
    memset(ctx, 0, sizeof *ctx);
    if (!b64_ready) b64_init();
    if (!md_sha1) md_sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    if (!md_sha256) md_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    ctx->roots = X509_STORE_new();
    X509_STORE_set_purpose(ctx->roots, X509_PURPOSE_ANY);
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(roots[i], "r");
        if (!f) return -1;
        X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
        fclose(f);
        if (!x) return -1;
        X509_STORE_add_cert(ctx->roots, x);
        X509_free(x);
    }
    ctx->md = EVP_MD_CTX_new();
    return md_sha1 && md_sha256 && ctx->md ? 0 : -1;
}

void fl_ctx_free(fl_ctx *ctx) {
    for (int i = 0; i < ctx->n_chains; i++) {
        free(ctx->chains[i].certs);
        free(ctx->chains[i].sid);
        EVP_PKEY_free(ctx->chains[i].key);
    }
    X509_STORE_free(ctx->roots);
    EVP_MD_CTX_free(ctx->md);
}

void fl_receipt_free(fl_receipt *r) {
    free(r->out);
    free(r->buf);
    free(r->iap);
    free(r->products);
    free(r->slots);
    memset(r, 0, sizeof *r);
}

/* A cache miss: parse the certificates, find the signer by issuer and serial, verify the chain at
 * the receipt's creation date, and keep the leaf's key under the exact bytes. */
static EVP_PKEY *verify_chain(fl_ctx *ctx, der certs, der sid, int64_t at_ms) {
    der name, serial, s = sid;
    if (!der_expect(&s, 0x30, &name)) return NULL;
    size_t name_len = (size_t)(s.p - sid.p);   /* the issuer Name TLV, tag included */
    if (!der_expect(&s, 0x02, &serial)) return NULL;
    size_t serial_len = (size_t)(serial.end - serial.p);
    STACK_OF(X509) *all = sk_X509_new_null();
    X509 *leaf = NULL;
    const uint8_t *p = certs.p;
    while (p < certs.end) {
        X509 *x = d2i_X509(NULL, &p, certs.end - p);
        if (!x) break;
        sk_X509_push(all, x);
        unsigned char *ib = NULL, *sb = NULL;
        int il = i2d_X509_NAME(X509_get_issuer_name(x), &ib);
        int sl = i2d_ASN1_INTEGER(X509_get0_serialNumber(x), &sb);
        der st = {sb, sb + (sl > 0 ? sl : 0)}, sval;
        if (il > 0 && (size_t)il == name_len && memcmp(ib, sid.p, name_len) == 0 && der_expect(&st, 0x02, &sval) &&
            (size_t)(sval.end - sval.p) == serial_len && memcmp(sval.p, serial.p, serial_len) == 0)
            leaf = x;
        OPENSSL_free(ib);
        OPENSSL_free(sb);
    }
    EVP_PKEY *key = NULL;
    if (leaf) {
        X509_STORE_CTX *sc = X509_STORE_CTX_new();
        X509_STORE_CTX_init(sc, ctx->roots, leaf, all);
        X509_STORE_CTX_set_time(sc, 0, (time_t)(at_ms / 1000));
        ctx->chain_verifications++;
        if (X509_verify_cert(sc) == 1) key = X509_get_pubkey(leaf);
        X509_STORE_CTX_free(sc);
    }
    sk_X509_pop_free(all, X509_free);
    ERR_clear_error();
    if (!key) return NULL;
    fl_chain *c = &ctx->chains[ctx->n_chains < 8 ? ctx->n_chains++ : 7];
    if (c->key) { free(c->certs); free(c->sid); EVP_PKEY_free(c->key); }
    c->certs_len = (size_t)(certs.end - certs.p);
    c->sid_len = (size_t)(sid.end - sid.p);
    c->certs = malloc(c->certs_len);
    c->sid = malloc(c->sid_len);
    memcpy(c->certs, certs.p, c->certs_len);
    memcpy(c->sid, sid.p, c->sid_len);
    c->key = key;
    return key;
}

static EVP_PKEY *chain_key(fl_ctx *ctx, der certs, der sid, int64_t at_ms) {
    size_t cl = (size_t)(certs.end - certs.p), sl = (size_t)(sid.end - sid.p);
    for (int i = 0; i < ctx->n_chains; i++) {
        fl_chain *c = &ctx->chains[i];
        if (c->certs_len == cl && c->sid_len == sl && memcmp(c->sid, sid.p, sl) == 0 && memcmp(c->certs, certs.p, cl) == 0)
            return c->key;
    }
    return verify_chain(ctx, certs, sid, at_ms);
}

/* ---- the call ---------------------------------------------------------------------------------- */

int fl_verify_receipt(fl_ctx *ctx, const char *b64, size_t len, int64_t now_ms, fl_receipt *r) {
    size_t need = len / 4 * 3 + 3;
    if (need > r->buf_cap) {
        uint8_t *b = realloc(r->buf, need);
        if (!b) return FL_E_MEMORY;
        r->buf = b;
        r->buf_cap = need;
    }
    long n = b64_decode((const unsigned char *)b64, len, r->buf);
    if (n <= 0) return FL_E_BASE64;

    /* ContentInfo { signedData, [0] SignedData } */
    der all = {r->buf, r->buf + n}, ci, v, sd, x;
    if (!der_expect(&all, 0x30, &ci)) return FL_E_STRUCTURE;
    if (!der_expect(&ci, 0x06, &v) || !oid_is(v, OID_SIGNED_DATA, sizeof OID_SIGNED_DATA)) return FL_E_STRUCTURE;
    if (!der_expect(&ci, 0xa0, &v) || !der_expect(&v, 0x30, &sd)) return FL_E_STRUCTURE;
    /* SignedData { version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos } */
    if (!der_expect(&sd, 0x02, &x) || !der_expect(&sd, 0x31, &x)) return FL_E_STRUCTURE;
    der eci, content;
    if (!der_expect(&sd, 0x30, &eci) || !der_expect(&eci, 0x06, &v) || !oid_is(v, OID_DATA, sizeof OID_DATA)) return FL_E_STRUCTURE;
    if (!der_expect(&eci, 0xa0, &v) || !der_expect(&v, 0x04, &content)) return FL_E_STRUCTURE;
    unsigned tag;
    der certs = {0, 0}, signers;
    if (!der_next(&sd, &tag, &v)) return FL_E_STRUCTURE;
    if (tag == 0xa0) { certs = v; if (!der_next(&sd, &tag, &v)) return FL_E_STRUCTURE; }
    if (tag == 0xa1) { if (!der_next(&sd, &tag, &v)) return FL_E_STRUCTURE; }
    if (tag != 0x31 || !certs.p) return FL_E_STRUCTURE;
    signers = v;
    /* SignerInfo { version, issuerAndSerialNumber, digestAlgorithm, digestEncryptionAlgorithm, signature } */
    der si, sid, alg, sig;
    if (!der_expect(&signers, 0x30, &si) || !der_expect(&si, 0x02, &x)) return FL_E_STRUCTURE;
    if (!der_expect(&si, 0x30, &sid)) return FL_E_STRUCTURE;   /* issuer Name TLV, serial INTEGER TLV */
    if (!der_expect(&si, 0x30, &alg) || !der_expect(&alg, 0x06, &v)) return FL_E_STRUCTURE;
    const EVP_MD *md;
    if (oid_is(v, OID_SHA1, sizeof OID_SHA1)) { md = md_sha1; r->digest_nid = NID_sha1; }
    else if (oid_is(v, OID_SHA256, sizeof OID_SHA256)) { md = md_sha256; r->digest_nid = NID_sha256; }
    else return FL_E_ALGORITHM;
    if (!der_next(&si, &tag, &alg)) return FL_E_STRUCTURE;
    if (tag != 0x30) return FL_E_ALGORITHM;   /* [0] signed attributes: receipts have none */
    if (!der_expect(&alg, 0x06, &v)) return FL_E_STRUCTURE;
    if (!oid_is(v, OID_RSA, sizeof OID_RSA) && !oid_is(v, OID_SHA1_RSA, sizeof OID_SHA1_RSA) &&
        !oid_is(v, OID_SHA256_RSA, sizeof OID_SHA256_RSA))
        return FL_E_ALGORITHM;
    if (!der_expect(&si, 0x04, &sig)) return FL_E_STRUCTURE;

    /* The payload first: a cache miss validates the chain at its creation date. */
    if (!decode_payload(content, r)) return FL_E_PAYLOAD;
    EVP_PKEY *key = chain_key(ctx, certs, sid, r->created_ms);
    if (!key) return FL_E_CHAIN;
    EVP_MD_CTX_reset(ctx->md);   /* a context reused across keys must be reset first */
    if (EVP_DigestVerifyInit(ctx->md, NULL, md, NULL, key) != 1 ||
        EVP_DigestVerify(ctx->md, sig.p, (size_t)(sig.end - sig.p), content.p, (size_t)(content.end - content.p)) != 1) {
        if (getenv("FLOOR_DEBUG")) ERR_print_errors_fp(stderr);
        ERR_clear_error();
        return FL_E_SIGNATURE;
    }
    if (!entitlements(r, now_ms)) return FL_E_MEMORY;
    return FL_OK;
}

const char *fl_error_name(int code) {
    static const char *names[] = {"ok", "base64", "structure", "algorithm", "chain", "signature", "payload", "memory"};
    return code >= 0 && code <= FL_E_MEMORY ? names[code] : "?";
}

/* ---- the in_app document ------------------------------------------------------------------------ */

typedef struct { uint8_t *p; size_t n; } wbuf;   /* room was reserved for the whole document */

#define PUT(w, lit) (memcpy((w)->p + (w)->n, lit, sizeof(lit) - 1), (w)->n += sizeof(lit) - 1)

static void put_int(wbuf *w, int64_t v) {
    char tmp[24];
    int i = 24;
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[--i] = (char)('0' + m % 10); m /= 10; } while (m);
    if (v < 0) tmp[--i] = '-';
    memcpy(w->p + w->n, tmp + i, (size_t)(24 - i));
    w->n += (size_t)(24 - i);
}

static void put_date(wbuf *w, int64_t ms) { if (ms == FL_NONE) PUT(w, "null"); else put_int(w, ms); }

/* A JSON string with the library's escapes; null when absent. */
static void put_str(wbuf *w, fl_str s, int empty_is_null) {
    if (!s.p || (empty_is_null && s.n == 0)) { PUT(w, "null"); return; }
    static const char hex[] = "0123456789abcdef";
    w->p[w->n++] = '"';
    for (size_t i = 0; i < s.n; i++) {
        uint8_t b = s.p[i];
        if (b >= 0x20 && b != '"' && b != '\\' && b != 0x7f) { w->p[w->n++] = b; continue; }
        w->p[w->n++] = '\\';
        switch (b) {
        case '"': w->p[w->n++] = '"'; break;
        case '\\': w->p[w->n++] = '\\'; break;
        case '\n': w->p[w->n++] = 'n'; break;
        case '\r': w->p[w->n++] = 'r'; break;
        case '\t': w->p[w->n++] = 't'; break;
        default: PUT(w, "u00"); w->p[w->n++] = (uint8_t)hex[b >> 4]; w->p[w->n++] = (uint8_t)hex[b & 15];
        }
    }
    w->p[w->n++] = '"';
}

/* The in-app types the library reads into fields; the others are its unknown attributes. */
static int read_type(int64_t t) {
    return (t >= 1701 && t <= 1708) || t == 1711 || t == 1712 || t == 1713 || t == 1719 || t == 1721;
}

size_t fl_write_in_app(fl_receipt *r) {
    size_t need = 64;
    for (size_t i = 0; i < r->n_iap; i++) need += 800 + r->iap[i].record.n * 2;
    if (need > r->out_cap) {
        uint8_t *o = realloc(r->out, need);
        if (!o) return 0;
        r->out = o;
        r->out_cap = need;
    }
    wbuf w = {r->out, 0};
    w.p[w.n++] = '[';
    for (size_t i = 0; i < r->n_iap; i++) {
        const fl_purchase *p = &r->iap[i];
        if (i) w.p[w.n++] = ',';
        PUT(&w, "{\"quantity\":"); put_int(&w, p->has_quantity ? p->quantity : 1);
        PUT(&w, ",\"product_id\":"); put_str(&w, p->product_id, 1);
        PUT(&w, ",\"transaction_id\":"); put_str(&w, p->transaction_id, 1);
        PUT(&w, ",\"original_transaction_id\":"); put_str(&w, p->original_transaction_id, 0);
        PUT(&w, ",\"purchase_date_ms\":"); put_date(&w, p->purchase_ms);
        PUT(&w, ",\"original_purchase_date_ms\":"); put_date(&w, p->original_purchase_ms);
        PUT(&w, ",\"expires_date_ms\":"); put_date(&w, p->expires_ms);
        PUT(&w, ",\"cancellation_date_ms\":"); put_date(&w, p->cancellation_ms);
        PUT(&w, ",\"cancellation_reason\":null,\"web_order_line_item_id\":");
        if (p->has_web_order) { w.p[w.n++] = '"'; put_int(&w, p->web_order_line_item_id); w.p[w.n++] = '"'; } else PUT(&w, "null");
        PUT(&w, ",\"is_trial_period\":"); if (p->trial == 1) PUT(&w, "true"); else PUT(&w, "false");
        PUT(&w, ",\"is_in_intro_offer_period\":"); if (p->intro == 1) PUT(&w, "true"); else PUT(&w, "false");
        PUT(&w, ",\"is_upgraded\":false,\"promotional_offer_id\":"); put_str(&w, p->promotional_offer_id, 0);
        PUT(&w, ",\"in_app_ownership_type\":null,\"subscription_group_identifier\":null");
        if (p->has_product_type) { PUT(&w, ",\"product_type\":"); put_int(&w, p->product_type); }
        /* The attributes the library does not read, as base64, walked again from the record. */
        der set = {p->record.p, p->record.p + p->record.n};
        int listed = 0;
        while (set.p < set.end) {
            der seq, t, ver, v;
            int64_t type, version;
            if (!der_expect(&set, 0x30, &seq) || !der_expect(&seq, 0x02, &t) || !der_small_int(t, &type) ||
                !der_expect(&seq, 0x02, &ver) || !der_small_int(ver, &version) || !der_expect(&seq, 0x04, &v)) return 0;
            if (read_type(type)) continue;
            if (listed) PUT(&w, ",{\"type\":"); else PUT(&w, ",\"unknown_attributes\":[{\"type\":");
            listed = 1;
            put_int(&w, type);
            PUT(&w, ",\"version\":"); put_int(&w, version);
            PUT(&w, ",\"value_base64\":\"");
            if (v.end > v.p) w.n += (size_t)EVP_EncodeBlock(w.p + w.n, v.p, (int)(v.end - v.p));
            PUT(&w, "\"}");
        }
        if (listed) w.p[w.n++] = ']';
        w.p[w.n++] = '}';
    }
    w.p[w.n++] = ']';
    return w.n;
}
