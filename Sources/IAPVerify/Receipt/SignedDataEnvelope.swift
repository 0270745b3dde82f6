// The PKCS#7 / CMS SignedData container of an app receipt, decoded with BERTree.
// Nothing here is trusted: this only locates the content, certificates and the one SignerInfo.

/// The parts of a SignedData that verification needs, as slices of the input bytes.
struct SignedDataEnvelope {
    /// The `data` content octets (BER chunks already joined); for DER, a slice of the input
    /// (a large receipt's payload is most of it, and is not copied).
    var content: ArraySlice<UInt8>
    /// The exact encoded `certificates [0]` field; the verified-chain cache is keyed on it.
    var certificatesField: ArraySlice<UInt8>
    /// Each embedded certificate's encoding, in the order given.
    var certificates: [ArraySlice<UInt8>]
    var signer: SignerInfo
}

struct SignerInfo {
    /// The exact encoding of the signer identifier (issuerAndSerialNumber).
    var identifier: ArraySlice<UInt8>
    var issuer: ArraySlice<UInt8>
    var serial: ArraySlice<UInt8>
    var digestOID: ArraySlice<UInt8>
    var signatureOID: ArraySlice<UInt8>
    /// The `signedAttrs [0]` field as encoded, when present.
    var signedAttributes: BERNode?
    var signature: ArraySlice<UInt8>

    var digest: DigestAlgorithm? {
        if digestOID.elementsEqual(OID.sha1) { return .sha1 }
        if digestOID.elementsEqual(OID.sha256) { return .sha256 }
        return nil
    }

    /// The scheme, and the digest it is bound to when the OID names one (sha256WithRSA...).
    var scheme: (SignatureScheme, DigestAlgorithm?)? {
        switch Array(signatureOID) {
        case OID.rsaEncryption: return (.rsa, nil)
        case OID.sha1WithRSA: return (.rsa, .sha1)
        case OID.sha256WithRSA: return (.rsa, .sha256)
        case OID.ecPublicKey: return (.ecdsa, nil)
        case OID.ecdsaWithSHA1: return (.ecdsa, .sha1)
        case OID.ecdsaWithSHA256: return (.ecdsa, .sha256)
        default: return nil
        }
    }
}

/// Why an envelope could not be used: the verdict plus a sentence.
enum EnvelopeProblem: Error {
    case malformed(String)
    case unsupportedAlgorithm(String)
}

/// Limits on the envelope (see README, "Limits").
package enum EnvelopeLimits {
    /// Apple embeds 3 certificates (Xcode 1); more than this is not a receipt.
    public static let maxCertificates = 10
}
