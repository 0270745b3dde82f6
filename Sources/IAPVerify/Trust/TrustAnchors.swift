// Trust anchors: the roots a chain must end in. The store holds roots only (never
// intermediates), never loads system paths and never allows partial chains.
// Immutable after init; OpenSSL locks the store internally, so threads may share it.

import COpenSSL
import Glibc

final class TrustAnchors: @unchecked Sendable {
    let roots: [X509Certificate]
    let store: OpaquePointer
    /// SHA-256 over the roots' DER, in order: names this anchor set in the process-wide chain
    /// cache, so verifiers with the same roots share verified chains and others never do.
    let identity: [UInt8]

    /// Builds a store from certificates that must each be a self-signed CA.
    /// - Parameters:
    ///   - pinned: roots trusted by their pinned SHA-256 (the built-in Apple roots): put first in
    ///     the store without checks; their own signatures are not the trust, the pin is.
    ///   - what: names the config section in error messages.
    ///   - requireCA: false for Xcode's StoreKit certificates, which sign directly (the JWS one
    ///     has no keyCertSign usage); they must still be self-signed.
    init(pinned: [X509Certificate] = [], roots: [X509Certificate], what: String, requireCA: Bool = true) throws(IAPVFailure) {
        for (i, root) in roots.enumerated() {
            guard root.isCA || !requireCA, root.isSelfSigned else {
                throw .config("\(what)[\(pinned.count + i)] (\(root.subject)) is not a self-signed CA certificate; only roots can be anchors")
            }
        }
        let all = pinned + roots
        guard let store = X509_STORE_new() else { throw IAPVFailure(.noMemory, "could not allocate an X509_STORE") }
        // The store takes its own reference on each certificate (X509_up_ref), so pinned roots
        // shared between verifiers outlive any one store.
        for root in all where X509_STORE_add_cert(store, root.raw) != 1 {
            ERR_clear_error()  // a duplicate root is harmless
        }
        var framed: [UInt8] = []
        for root in all {
            let n = UInt32(truncatingIfNeeded: root.der.count)
            framed += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            framed += root.der
        }
        let identity = Digest.sha256(framed)
        guard identity.count == 32 else {
            X509_STORE_free(store)
            throw IAPVFailure(.internal, "could not fingerprint the trust anchors")
        }
        self.identity = identity
        self.roots = all
        self.store = store
    }

    deinit { X509_STORE_free(store) }

    /// True when `cert` is byte-for-byte one of the configured roots.
    func contains(_ cert: X509Certificate) -> Bool {
        roots.contains { $0.der == cert.der }
    }

    /// A fresh store for OpenSSL's own PKCS7_verify, with the validation time fixed in it.
    /// The caller owns the result and frees it with X509_STORE_free.
    func makeStore(validatingAt seconds: Int64) -> OpaquePointer? {
        guard let s = X509_STORE_new() else { return nil }
        for root in roots { _ = X509_STORE_add_cert(s, root.raw) }
        ERR_clear_error()
        if let param = X509_STORE_get0_param(s) {
            X509_VERIFY_PARAM_set_time(param, time_t(seconds))
        }
        X509_STORE_set_purpose(s, X509_PURPOSE_ANY)
        return s
    }

    /// Reads each PEM string as exactly one certificate.
    static func certificates(fromPEM pems: [String], what: String) throws(IAPVFailure) -> [X509Certificate] {
        var out: [X509Certificate] = []
        for (i, pem) in pems.enumerated() {
            var bytes = Array(pem.utf8)
            let cert: X509Certificate? = bytes.withUnsafeMutableBytes { raw in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                guard let x = PEM_read_bio_X509(bio, nil, nil, nil) else { return nil }
                defer { X509_free(x) }
                return X509Certificate(borrowing: x)
            }
            bytes.removeAll()
            ERR_clear_error()
            guard let cert else {
                throw .config("\(what)[\(i)] is not a PEM certificate (expected -----BEGIN CERTIFICATE-----)")
            }
            out.append(cert)
        }
        return out
    }
}

/// Anchor sets built from config PEM, remembered by exactly what built them, so a host that builds
/// a verifier per call parses and checks its own roots once per process, as the built-in ones are.
/// Only sets that passed every check are remembered: a bad config fails the same way each time.
/// Bounded (oldest out); a mutex held for one lookup or insertion.
enum ConfigAnchors {
    struct Key: Hashable {
        let withAppleRoots: Bool
        let requireCA: Bool
        let pems: [String]
    }

    static let capacity = 32
    nonisolated(unsafe) private static var entries: [Key: TrustAnchors] = [:]
    nonisolated(unsafe) private static var order: [Key] = []
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()

    /// The anchors for `pems` (with the built-in roots first when `withAppleRoots`), each PEM
    /// read and checked as TrustAnchors.certificates and TrustAnchors.init do.
    static func anchors(pems: [String], withAppleRoots: Bool, requireCA: Bool,
                        pemWhat: String, what: String) throws(IAPVFailure) -> TrustAnchors {
        let key = Key(withAppleRoots: withAppleRoots, requireCA: requireCA, pems: pems)
        pthread_mutex_lock(lock)
        let known = entries[key]
        pthread_mutex_unlock(lock)
        if let known { return known }
        let pinned = withAppleRoots ? try AppleRoots.certificates.get() : []
        let roots = try TrustAnchors.certificates(fromPEM: pems, what: pemWhat)
        let made = try TrustAnchors(pinned: pinned, roots: roots, what: what, requireCA: requireCA)
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let raced = entries[key] { return raced }
        if entries.count >= capacity, !order.isEmpty { entries[order.removeFirst()] = nil }
        entries[key] = made
        order.append(key)
        return made
    }

    static var count: Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return entries.count
    }
}
