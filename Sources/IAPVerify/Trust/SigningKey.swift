// A P-256 private key that signs ECDSA with SHA-256: the developer's App Store Connect key, which
// ServerAPI's Signer holds. The key never leaves this object.

import COpenSSL

final class SigningKey: @unchecked Sendable {
    // @unchecked: the EVP_PKEY is never mutated after init, and OpenSSL 3 signs with a const key
    // from any number of threads.
    private let key: OpaquePointer

    enum LoadFailure: Error {
        /// Not a readable, unencrypted PEM private key.
        case unreadable
        /// A private key, but not EC P-256.
        case notP256
    }

    /// A PKCS#8 (or SEC1) PEM P-256 private key. Encrypted keys are refused, never prompted for.
    init(pem: [UInt8]) throws(LoadFailure) {
        defer { ERR_clear_error() }
        let loaded: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // A password callback that gives none: an encrypted key fails instead of prompting.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let pkey = loaded else { throw .unreadable }
        var name = [CChar](repeating: 0, count: 64)
        var nameLength = 0
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC,
              EVP_PKEY_get_group_name(pkey, &name, name.count, &nameLength) == 1,
              ["prime256v1", "P-256", "secp256r1"].contains(String(decoding: name.prefix(nameLength).map { UInt8(bitPattern: $0) }, as: UTF8.self)) else {
            EVP_PKEY_free(pkey)
            throw .notP256
        }
        key = pkey
    }

    deinit { EVP_PKEY_free(key) }

    /// ES256 over `message`: the 64-byte r‖s JWS uses. nil only if OpenSSL fails.
    func signES256(_ message: [UInt8]) -> [UInt8]? {
        guard let der = signDER(message) else { return nil }
        return der.withUnsafeBufferPointer { buf -> [UInt8]? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let sig = d2i_ECDSA_SIG(nil, &p, buf.count) else { return nil }
            defer { ECDSA_SIG_free(sig) }
            var out = [UInt8](repeating: 0, count: 64)
            guard let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig),
                  out.withUnsafeMutableBufferPointer({ BN_bn2binpad(r, $0.baseAddress, 32) }) == 32,
                  out.withUnsafeMutableBufferPointer({ BN_bn2binpad(s, $0.baseAddress! + 32, 32) }) == 32 else { return nil }
            return out
        }
    }

    /// ECDSA with SHA-256 over `message`, DER-encoded (the form promotional offer signatures use).
    /// nil only if OpenSSL fails.
    func signDER(_ message: [UInt8]) -> [UInt8]? {
        guard let ctx = EVP_MD_CTX_new() else { return nil }
        defer {
            EVP_MD_CTX_free(ctx)
            ERR_clear_error()
        }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { return nil }
        var length = 0
        let ok = message.withUnsafeBufferPointer { m in EVP_DigestSign(ctx, nil, &length, m.baseAddress, m.count) }
        guard ok == 1, length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { m in
            out.withUnsafeMutableBufferPointer { o in EVP_DigestSign(ctx, o.baseAddress, &length, m.baseAddress, m.count) }
        }
        guard signed == 1 else { return nil }
        return Array(out.prefix(length))
    }
}
