// Owning Swift wrappers for the OpenSSL objects the verifier keeps: certificates and public keys.
// Both are immutable once built and safe to share between threads (OpenSSL 3 reference counts
// and caches atomically); each wrapper frees its object on deinit.

import COpenSSL

/// An X.509 certificate decoded by OpenSSL.
final class X509Certificate: @unchecked Sendable {
    let raw: OpaquePointer
    let der: [UInt8]

    /// Decodes exactly one DER certificate; trailing bytes are rejected.
    init?<C: Collection>(der bytes: C) where C.Element == UInt8 {
        let der = Array(bytes)
        guard !der.isEmpty, der.count < Int(Int32.max) else { return nil }
        var consumed = 0
        let cert: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            let x = d2i_X509(nil, &p, buf.count)
            if let p, let base = buf.baseAddress { consumed = p - base }
            return x
        }
        ERR_clear_error()
        guard let cert else { return nil }
        guard consumed == der.count else { X509_free(cert); return nil }
        self.raw = cert
        self.der = der
    }

    /// Takes a reference on a certificate owned elsewhere (for example in a verified chain).
    init?(borrowing x: OpaquePointer) {
        var out: UnsafeMutablePointer<UInt8>?
        let n = i2d_X509(x, &out)
        guard n > 0, let out else { return nil }
        der = Array(UnsafeBufferPointer(start: out, count: Int(n)))
        cossl_openssl_free(out)
        guard X509_up_ref(x) == 1 else { return nil }
        raw = x
    }

    deinit { X509_free(raw) }

    var notBeforeMs: Int64? { Self.milliseconds(X509_get0_notBefore(raw)) }
    var notAfterMs: Int64? { Self.milliseconds(X509_get0_notAfter(raw)) }

    /// RFC 2253 form, for logs and result JSON.
    var subject: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, X509_get_subject_name(raw), 0, cossl_xn_flag_rfc2253())
        var data: UnsafeMutablePointer<CChar>?
        let n = cossl_bio_mem_data(bio, &data)
        guard n > 0, let data else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: n) {
            String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self)
        }
    }

    var sha256Hex: String { Hex.encode(Digest.sha256(der), uppercase: true) }

    /// Whether the certificate carries an extension with this dotted OID.
    func hasExtension(_ dotted: String) -> Bool {
        guard let obj = OBJ_txt2obj(dotted, 1) else { return false }
        defer { ASN1_OBJECT_free(obj) }
        return X509_get_ext_by_OBJ(raw, obj, -1) >= 0
    }

    /// True for a CA certificate (basicConstraints CA:TRUE or a v1 self-signed root).
    var isCA: Bool { X509_check_ca(raw) != 0 }

    /// True when the certificate is self-issued and its own signature verifies.
    var isSelfSigned: Bool {
        let r = X509_self_signed(raw, 1)
        ERR_clear_error()
        return r == 1
    }

    /// Whether a key usage extension, if present, allows digital signatures.
    var allowsDigitalSignature: Bool {
        let ku = X509_get_key_usage(raw)
        return ku == UInt32.max || ku & UInt32(KU_DIGITAL_SIGNATURE) != 0
    }

    /// The certificate's key; `prepared` for a key kept to verify many signatures (see PublicKey).
    func publicKey(prepared: Bool = false) -> PublicKey? {
        guard let k = X509_get0_pubkey(raw) else { return nil }
        return PublicKey(borrowing: k, prepared: prepared)
    }

    static func milliseconds(_ t: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let t else { return nil }
        var tm = COpenSSL.tm()
        guard ASN1_TIME_to_tm(t, &tm) == 1 else { return nil }
        let days = RFC3339.daysFromCivil(year: Int64(tm.tm_year) + 1900, month: Int64(tm.tm_mon) + 1, day: Int64(tm.tm_mday))
        return (days * 86_400 + Int64(tm.tm_hour) * 3600 + Int64(tm.tm_min) * 60 + Int64(tm.tm_sec)) * 1000
    }
}

/// A public key that verifies signatures with a prefetched digest.
final class PublicKey: @unchecked Sendable {
    let raw: OpaquePointer
    /// Verification contexts already initialised with this key, for SHA-1 and SHA-256 (only for
    /// keys that stay, like a cached chain's leaf): a call copies one instead of looking the
    /// algorithm up in the provider store under locks. Never changed after init, so any thread
    /// may copy from them.
    private let preparedSHA1: OpaquePointer?
    private let preparedSHA256: OpaquePointer?

    init?(borrowing key: OpaquePointer, prepared: Bool = false) {
        guard EVP_PKEY_up_ref(key) == 1 else { return nil }
        raw = key
        preparedSHA1 = prepared ? Self.prepare(key, .sha1) : nil
        preparedSHA256 = prepared ? Self.prepare(key, .sha256) : nil
    }

    deinit {
        EVP_MD_CTX_free(preparedSHA1)
        EVP_MD_CTX_free(preparedSHA256)
        EVP_PKEY_free(raw)
    }

    /// nil when OpenSSL will not verify with this key and digest: each call then initialises its
    /// own context, and fails the same way.
    private static func prepare(_ key: OpaquePointer, _ digest: DigestAlgorithm) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard let ctx = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestVerifyInit(ctx, nil, Digest.md(digest), nil, key) == 1 else {
            EVP_MD_CTX_free(ctx)
            return nil
        }
        return ctx
    }

    var scheme: SignatureScheme? {
        switch EVP_PKEY_get_base_id(raw) {
        case EVP_PKEY_RSA: return .rsa
        case EVP_PKEY_EC: return .ecdsa
        default: return nil
        }
    }

    /// Verifies `signature` over `message` hashed with `digest` (RSA PKCS#1 v1.5 or DER ECDSA).
    func verify(signature: ArraySlice<UInt8>, message: UnsafeRawBufferPointer, digest: DigestAlgorithm) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(ctx)
            ERR_clear_error()
        }
        if let prepared = digest == .sha1 ? preparedSHA1 : preparedSHA256 {
            guard EVP_MD_CTX_copy_ex(ctx, prepared) == 1 else { return false }
        } else {
            guard EVP_DigestVerifyInit(ctx, nil, Digest.md(digest), nil, raw) == 1 else { return false }
        }
        return signature.withUnsafeBufferPointer { sig in
            EVP_DigestVerify(ctx, sig.baseAddress, sig.count,
                             message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
        }
    }
}
