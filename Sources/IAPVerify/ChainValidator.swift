// Check 5 (chain to a configured root, RFC 5280, at the receipt creation date) and check 6
// (Apple's marker policy), done by OpenSSL's X509_verify_cert on a per-call context.

import COpenSSL
import SwiftASN1

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
    /// Finds the embedded certificate the SignerInfo names (issuer + serial, compared as DER).
    static func signerIndex(_ signer: SignerInfo, in certificates: [ArraySlice<UInt8>]) -> Int? {
        guard let issuer = signer.issuer, let serial = signer.serial else { return nil }
        for (i, der) in certificates.enumerated() {
            if let id = identity(der), id.serial.elementsEqual(serial), id.issuer.elementsEqual(issuer) {
                return i
            }
        }
        return nil
    }

    /// The encoded serial number and issuer of a certificate.
    private static func identity(_ der: ArraySlice<UInt8>) -> (serial: ArraySlice<UInt8>, issuer: ArraySlice<UInt8>)? {
        guard let cert = try? BER.parse(der), case .constructed(let parts) = cert.content,
              let tbs = parts.first(where: { _ in true }), case .constructed(let fields) = tbs.content else {
            return nil
        }
        var it = fields.makeIterator()
        guard var node = it.next() else { return nil }
        if node.identifier == .context0 {
            guard let n = it.next() else { return nil }
            node = n
        }
        let serial = node.encodedBytes
        guard it.next() != nil, let issuer = it.next() else { return nil }
        return (serial, issuer.encodedBytes)
    }

    /// Validates `signer` up to a root in `anchors` at `atMs`, using `untrusted` as candidates.
    /// With `applePolicy`, also enforces the 3-certificate shape and the marker OIDs.
    static func validate(signer: X509Certificate, untrusted: [X509Certificate], anchors: TrustAnchors,
                         atMs: Int64, applePolicy: Bool,
                         timeLabel: String = "receipt creation date") throws(ChainFailure) -> ValidatedChain {
        guard let ctx = X509_STORE_CTX_new() else { throw .untrusted("out of memory building the chain") }
        defer {
            X509_STORE_CTX_free(ctx)
            ERR_clear_error()
        }
        guard let stack = iapv_sk_x509_new() else { throw .untrusted("out of memory building the chain") }
        defer { iapv_sk_x509_free(stack) }
        for c in untrusted { _ = iapv_sk_x509_push(stack, c.raw) }
        guard X509_STORE_CTX_init(ctx, anchors.store, signer.raw, stack) == 1 else {
            throw .untrusted("could not initialise chain verification")
        }
        let seconds = atMs >= 0 ? atMs / 1000 : (atMs - 999) / 1000
        X509_STORE_CTX_set_time(ctx, 0, time_t(seconds))
        if X509_verify_cert(ctx) != 1 {
            let code = X509_STORE_CTX_get_error(ctx)
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown error"
            throw .untrusted("the certificate chain does not verify to a configured root at the \(timeLabel) (\(RFC3339.format(atMs))): \(text)")
        }
        guard let chainStack = X509_STORE_CTX_get0_chain(ctx) else { throw .untrusted("no chain was built") }
        var chain: [X509Certificate] = []
        for i in 0..<iapv_sk_x509_num(chainStack) {
            guard let x = iapv_sk_x509_value(chainStack, i), let c = X509Certificate(borrowing: x) else {
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
