// ES256 signatures as JWS carries them: raw r‖s (IEEE P1363), 32 bytes each, converted to the
// DER form OpenSSL verifies. The key must be an EC P-256 key.

import COpenSSL

enum ES256 {
    /// Verifies a 64-byte r‖s signature over `message` with SHA-256.
    static func verify(signature: [UInt8], message: [UInt8], key: PublicKey) -> Bool {
        guard signature.count == 64, key.scheme == .ecdsa, EVP_PKEY_get_bits(key.raw) == 256,
              let der = derSignature(signature) else { return false }
        return message.withUnsafeBytes { key.verify(signature: der[...], message: $0, digest: .sha256) }
    }

    /// r‖s → DER ECDSA-Sig-Value, via OpenSSL's own encoder.
    static func derSignature(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress.map { $0 + 32 }, 32, nil) }
        guard let r, let s else { BN_free(r); BN_free(s); return nil }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        var out: UnsafeMutablePointer<UInt8>?
        let n = i2d_ECDSA_SIG(sig, &out)
        guard n > 0, let out else { return nil }
        defer { cossl_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(n)))
    }
}
