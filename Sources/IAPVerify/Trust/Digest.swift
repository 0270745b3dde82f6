// SHA-1 and SHA-256 through OpenSSL: the content digests receipts are signed over, the device
// hash, and certificate fingerprints.

import COpenSSL

/// Message digests, with the EVP_MD objects fetched once (OpenSSL 3 fetches are lock-heavy).
enum Digest {
    nonisolated(unsafe) private static let sha1MD: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil)
    nonisolated(unsafe) private static let sha256MD: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    static func md(_ d: DigestAlgorithm) -> OpaquePointer? {
        switch d {
        case .sha1: return sha1MD
        case .sha256: return sha256MD
        }
    }

    static func hash<C: Collection>(_ d: DigestAlgorithm, _ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: d == .sha1 ? 20 : 32)
        var len: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { o -> Bool in
            let done = bytes.withContiguousStorageIfAvailable { b in
                EVP_Digest(b.baseAddress, b.count, o.baseAddress, &len, md(d), nil) == 1
            }
            if let done { return done }
            let copy = Array(bytes)
            return copy.withUnsafeBufferPointer { b in
                EVP_Digest(b.baseAddress, b.count, o.baseAddress, &len, md(d), nil) == 1
            }
        }
        return ok ? out : []
    }

    static func sha1<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 { hash(.sha1, bytes) }
    static func sha256<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 { hash(.sha256, bytes) }
}
