// Check 5 (chain to a configured root, RFC 5280, at the receipt creation date) and check 6
// (Apple's marker policy), done by OpenSSL's X509_verify_cert on a per-call context.

import COpenSSL

/// One certificate of a validated path, as the result JSON shows it.
public struct CertificateSummary: Sendable, Equatable {
    public var subject: String
    public var notBeforeMs: Int64
    public var notAfterMs: Int64
    public var sha256: String
}

/// A path that passed checks 5 and 6, leaf first.
struct ValidatedChain {
    var certificates: [X509Certificate]
}

enum ChainFailure: Error {
    case untrusted(String)
    case notAppleSigner(String)
}

enum ChainValidator {
    /// Finds the embedded certificate the SignerInfo names by issuer and serial number.
    ///
    /// The SignerInfo is not signed, so its copy of the issuer name may be encoded differently
    /// from the certificate's (another string type, other letter case). Names are compared the
    /// way OpenSSL's PKCS7_verify finds its signer (X509_NAME_cmp on the canonical form, serials
    /// by value), so that both crypto paths pick the same certificate.
    static func signerIndex(issuer issuerName: ArraySlice<UInt8>, serial serialNumber: ArraySlice<UInt8>, in certificates: [X509Certificate]) -> Int? {
        defer { ERR_clear_error() }
        let issuer: OpaquePointer? = issuerName.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_X509_NAME(nil, &p, buf.count)
        }
        guard let issuer else { return nil }
        defer { X509_NAME_free(issuer) }
        let serial: UnsafeMutablePointer<ASN1_INTEGER>? = serialNumber.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_ASN1_INTEGER(nil, &p, buf.count)
        }
        guard let serial else { return nil }
        defer { ASN1_INTEGER_free(serial) }
        return certificates.firstIndex { c in
            ASN1_INTEGER_cmp(X509_get0_serialNumber(c.raw), serial) == 0
                && X509_NAME_cmp(X509_get_issuer_name(c.raw), issuer) == 0
        }
    }

    /// Validates `signer` up to a root in `anchors` at `atMs`, using `untrusted` as candidates.
    /// With `applePolicy`, also enforces the 3-certificate shape and the marker OIDs.
    static func validate(signer: X509Certificate, untrusted: [X509Certificate], anchors: TrustAnchors,
                         atMs: Int64, applePolicy: Bool,
                         instant: ValidationInstant = .receiptCreation) throws(ChainFailure) -> ValidatedChain {
        guard let ctx = X509_STORE_CTX_new() else { throw .untrusted("out of memory building the chain") }
        defer {
            X509_STORE_CTX_free(ctx)
            ERR_clear_error()
        }
        guard let stack = cossl_sk_x509_new() else { throw .untrusted("out of memory building the chain") }
        defer { cossl_sk_x509_free(stack) }
        for c in untrusted { _ = cossl_sk_x509_push(stack, c.raw) }
        guard X509_STORE_CTX_init(ctx, anchors.store, signer.raw, stack) == 1 else {
            throw .untrusted("could not initialise chain verification")
        }
        let seconds = atMs >= 0 ? atMs / 1000 : (atMs - 999) / 1000
        X509_STORE_CTX_set_time(ctx, 0, time_t(seconds))
        if X509_verify_cert(ctx) != 1 {
            let code = X509_STORE_CTX_get_error(ctx)
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown error"
            throw .untrusted("the certificate chain does not verify to a configured root at the \(instant.label) (\(RFC3339.format(atMs))): \(text)")
        }
        guard let chainStack = X509_STORE_CTX_get0_chain(ctx) else { throw .untrusted("no chain was built") }
        var chain: [X509Certificate] = []
        for i in 0..<cossl_sk_x509_num(chainStack) {
            guard let x = cossl_sk_x509_value(chainStack, i), let c = X509Certificate(borrowing: x) else {
                throw .untrusted("could not read the built chain")
            }
            chain.append(c)
        }
        guard let root = chain.last, anchors.contains(root) else {
            throw .untrusted("the chain does not end in a configured root")
        }
        guard let leaf = chain.first, leaf.allowsDigitalSignature else {
            throw .untrusted("the signing certificate's key usage does not allow digital signatures")
        }
        if applePolicy {
            guard chain.count == 3 else {
                throw .notAppleSigner("the chain has \(chain.count) certificates; an App Store signer has exactly 3 (leaf, WWDR intermediate, root)")
            }
            guard chain[1].hasExtension(OID.appleWWDRIntermediateMarker) else {
                throw .notAppleSigner("the intermediate lacks Apple's WWDR marker OID \(OID.appleWWDRIntermediateMarker)")
            }
            guard chain[0].hasExtension(OID.appleSigningLeafMarker) else {
                throw .notAppleSigner("the signing certificate lacks Apple's receipt-signing marker OID \(OID.appleSigningLeafMarker)")
            }
            guard !chain[0].isCA else {
                throw .notAppleSigner("the signing certificate is a CA; an App Store signer is an end-entity certificate")
            }
        }
        return ValidatedChain(certificates: chain)
    }
}
