/* OpenSSL for Swift: headers the core uses, plus inline wrappers for function-like macros. */
#ifndef IAPV_COPENSSL_SHIM_H
#define IAPV_COPENSSL_SHIM_H
#include <stdlib.h>
#include <string.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

static inline long cossl_bio_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int cossl_sk_x509_num(const STACK_OF(X509) *s) { return sk_X509_num(s); }
static inline X509 *cossl_sk_x509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
static inline STACK_OF(X509) *cossl_sk_x509_new(void) { return sk_X509_new_null(); }
static inline int cossl_sk_x509_push(STACK_OF(X509) *s, X509 *x) { return sk_X509_push(s, x); }
static inline void cossl_sk_x509_free(STACK_OF(X509) *s) { sk_X509_free(s); }
static inline unsigned long cossl_xn_flag_rfc2253(void) { return XN_FLAG_RFC2253; }
static inline void cossl_openssl_free(void *p) { OPENSSL_free(p); }

/* The first OCSP responder URL of a certificate's Authority Information Access, copied with
 * malloc (free it), or NULL. */
static inline char *cossl_ocsp_url(X509 *x) {
    STACK_OF(OPENSSL_STRING) *urls = X509_get1_ocsp(x);
    char *out = NULL;
    if (urls && sk_OPENSSL_STRING_num(urls) > 0) {
        const char *u = sk_OPENSSL_STRING_value(urls, 0);
        size_t n = strlen(u);
        out = (char *)malloc(n + 1);
        if (out) memcpy(out, u, n + 1);
    }
    X509_email_free(urls);
    return out;
}

/* PKCS7 accessors: the struct is public but its unions are awkward from Swift. */
static inline int cossl_pkcs7_is_signed(const PKCS7 *p7) { return PKCS7_type_is_signed(p7); }
static inline STACK_OF(X509) *cossl_pkcs7_certs(const PKCS7 *p7) {
    return PKCS7_type_is_signed(p7) && p7->d.sign ? p7->d.sign->cert : NULL;
}
static inline int cossl_pkcs7_signer_count(const PKCS7 *p7) {
    STACK_OF(PKCS7_SIGNER_INFO) *si = PKCS7_get_signer_info((PKCS7 *)p7);
    return si ? sk_PKCS7_SIGNER_INFO_num(si) : 0;
}
static inline PKCS7_SIGNER_INFO *cossl_pkcs7_signer(const PKCS7 *p7, int i) {
    STACK_OF(PKCS7_SIGNER_INFO) *si = PKCS7_get_signer_info((PKCS7 *)p7);
    return si ? sk_PKCS7_SIGNER_INFO_value(si, i) : NULL;
}
/* 1 when the SignedData digestAlgorithms SET holds exactly one entry and it names the SignerInfo's
 * digest; see SignedDataEnvelope.swift for why the cached path holds receipts to the same rule. */
static inline int cossl_pkcs7_digest_set_is_only(const PKCS7 *p7, const PKCS7_SIGNER_INFO *si) {
    if (!PKCS7_type_is_signed(p7) || !p7->d.sign || !p7->d.sign->md_algs || !si || !si->digest_alg) return 0;
    STACK_OF(X509_ALGOR) *algs = p7->d.sign->md_algs;
    if (sk_X509_ALGOR_num(algs) != 1) return 0;
    const X509_ALGOR *only = sk_X509_ALGOR_value(algs, 0);
    return only && only->algorithm && si->digest_alg->algorithm
        && OBJ_cmp(only->algorithm, si->digest_alg->algorithm) == 0;
}
/* Fields outside the signature that App Store receipts never carry; both paths refuse them. */
static inline int cossl_pkcs7_has_crls(const PKCS7 *p7) {
    return PKCS7_type_is_signed(p7) && p7->d.sign && p7->d.sign->crl != NULL;
}
static inline int cossl_pkcs7_signer_has_unsigned_attributes(const PKCS7_SIGNER_INFO *si) {
    return si && si->unauth_attr != NULL;
}
/* The embedded `data` content, or NULL when it is detached or not `data`. */
static inline ASN1_OCTET_STRING *cossl_pkcs7_data(const PKCS7 *p7) {
    if (!PKCS7_type_is_signed(p7) || !p7->d.sign || !p7->d.sign->contents) return NULL;
    PKCS7 *inner = p7->d.sign->contents;
    if (!PKCS7_type_is_data(inner)) return NULL;
    return inner->d.data;
}
#endif
