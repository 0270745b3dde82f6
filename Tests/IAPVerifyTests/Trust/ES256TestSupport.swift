// Test-only ES256 helpers: a compact JWS checked against one known key (Wycheproof vectors, the
// developer tokens and offer signatures this library writes). Apple tokens go through
// `verifyJWS`, which also validates the x5c chain; the product never verifies against a bare key.

import COpenSSL
@testable import IAPVerify

extension ES256 {
    /// Strict compact form, `alg` exactly ES256, then the signature.
    static func verifyCompact(_ token: [UInt8], key: PublicKey) -> Bool {
        guard case .success(let jws) = token.withUnsafeBytes({ CompactJWS.parse($0) }),
              case .success(let header) = jws.header.withUnsafeBytes({ JSONDocument.parse($0, what: "header", status: .invalidArgument) }),
              header.root[literal: "alg"]?.string == "ES256" else { return false }
        return verify(signature: jws.signature, message: jws.signingInput, key: key)
    }

    /// A public key from a DER SubjectPublicKeyInfo.
    static func publicKey(spki der: [UInt8]) -> PublicKey? {
        der.withUnsafeBufferPointer { buf -> PublicKey? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let k = d2i_PUBKEY(nil, &p, buf.count) else { ERR_clear_error(); return nil }
            defer { EVP_PKEY_free(k) }
            return PublicKey(borrowing: k)
        }
    }
}
