// The reference crypto path for checks 2–7: d2i_PKCS7 and PKCS7_verify with a per-call store.
// It exists so that tests and the fuzzer can hold the fast path to OpenSSL's answer (whatever
// the fast path calls valid, this path must call valid too). It is not public API.
//
// Shared with the fast path: receipt bytes, the header read of the payload (acceptPayload), the
// Xcode rule and anchors, the chain policy (ChainValidator.validate with Apple's markers), the
// full payload decode after the signature, and checks 8–13.
// Different: decoding (OpenSSL's PKCS7 instead of the strict profile), the certificate chain
// (PKCS7_verify builds it, then the same policy re-validates it), no chain cache, and the
// signature (PKCS7_verify, plus the key-type check it skips).

import COpenSSL

extension ReceiptChecker {
    func referenceCryptoChecks(_ der: [UInt8], _ report: inout ReceiptReport) -> Bool {
        defer { ERR_clear_error() }
        var consumed = 0
        let parsed: UnsafeMutablePointer<PKCS7>? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            let r = d2i_PKCS7(nil, &p, buf.count)
            if let p, let base = buf.baseAddress { consumed = p - base }
            return r
        }
        guard let p7 = parsed else {
            report.fail(.structure, .malformed, "OpenSSL cannot decode the receipt as PKCS#7")
            return false
        }
        defer { PKCS7_free(p7) }
        guard consumed == der.count else {
            report.fail(.structure, .malformed, "the receipt has trailing bytes after the PKCS#7 structure")
            return false
        }
        guard cossl_pkcs7_is_signed(p7) != 0 else {
            report.fail(.structure, .malformed, "the ContentInfo is not signedData")
            return false
        }
        guard let data = cossl_pkcs7_data(p7) else {
            report.fail(.structure, .malformed, "the signed content is detached or not of type data")
            return false
        }
        if let certs = cossl_pkcs7_certs(p7), cossl_sk_x509_num(certs) > EnvelopeLimits.maxCertificates {
            report.fail(.structure, .malformed, "the receipt embeds more than \(EnvelopeLimits.maxCertificates) certificates")
            return false
        }
        guard cossl_pkcs7_signer_count(p7) == 1, let si = cossl_pkcs7_signer(p7, 0) else {
            report.fail(.structure, .malformed, "the receipt must have exactly one SignerInfo")
            return false
        }
        guard cossl_pkcs7_has_crls(p7) == 0 else {
            report.fail(.structure, .malformed, "the receipt carries a CRLs field; App Store receipts have none")
            return false
        }
        guard cossl_pkcs7_signer_has_unsigned_attributes(si) == 0 else {
            report.fail(.structure, .malformed, "the SignerInfo carries unsigned attributes; App Store receipts have none")
            return false
        }
        report.mark(.structure, .ok)
        var digestAlg: UnsafeMutablePointer<X509_ALGOR>?
        var sigAlg: UnsafeMutablePointer<X509_ALGOR>?
        PKCS7_SIGNER_INFO_get0_algs(si, nil, &digestAlg, &sigAlg)
        let digestNID = Self.nid(digestAlg)
        let sigNID = Self.nid(sigAlg)
        let digest: DigestAlgorithm? = digestNID == NID_sha1 ? .sha1 : digestNID == NID_sha256 ? .sha256 : nil
        let scheme: (SignatureScheme, DigestAlgorithm?)? = {
            switch sigNID {
            case NID_rsaEncryption: return (.rsa, nil)
            case NID_sha1WithRSAEncryption: return (.rsa, .sha1)
            case NID_sha256WithRSAEncryption: return (.rsa, .sha256)
            case NID_X9_62_id_ecPublicKey: return (.ecdsa, nil)
            case NID_ecdsa_with_SHA1: return (.ecdsa, .sha1)
            case NID_ecdsa_with_SHA256: return (.ecdsa, .sha256)
            default: return nil
            }
        }()
        guard let digest else {
            report.fail(.algorithm, .unsupportedAlgorithm, "the content digest is not SHA-1 or SHA-256")
            return false
        }
        guard let scheme, scheme.1 == nil || scheme.1 == digest else {
            report.fail(.algorithm, .unsupportedAlgorithm, "the signature algorithm is not RSA PKCS#1 v1.5 or ECDSA with the SignerInfo digest")
            return false
        }
        guard cossl_pkcs7_digest_set_is_only(p7, si) != 0 else {
            report.fail(.algorithm, .unsupportedAlgorithm, "the SignedData digestAlgorithms SET must list only the signer's digest")
            return false
        }
        report.mark(.algorithm, .ok)
        report.digest = digest
        report.scheme = scheme.0
        let content: ArraySlice<UInt8> = {
            guard let p = ASN1_STRING_get0_data(data) else { return [] }
            return Array(UnsafeBufferPointer(start: p, count: Int(max(0, ASN1_STRING_length(data)))))[...]
        }()
        guard acceptPayload(content, &report), let created = report.payload?.creationDateMs else { return false }

        let xcode = isXcode(report)
        let anchors = anchorsFor(report)
        let seconds = created >= 0 ? created / 1000 : (created - 999) / 1000
        guard let store = anchors.makeStore(validatingAt: seconds), let out = BIO_new(BIO_s_mem()) else {
            report.fail(.chain, .untrustedChain, "out of memory")
            return false
        }
        defer {
            X509_STORE_free(store)
            BIO_free(out)
        }
        ERR_clear_error()
        let verified = PKCS7_verify(p7, nil, store, nil, out, 0) == 1
        let reason = ERR_GET_REASON(ERR_peek_last_error())
        ERR_clear_error()
        if !verified, reason == PKCS7_R_CERTIFICATE_VERIFY_ERROR || reason == PKCS7_R_SIGNER_CERTIFICATE_NOT_FOUND {
            report.fail(.chain, .untrustedChain, "OpenSSL PKCS7_verify rejects the certificate chain at the receipt creation date")
            return false
        }
        // The marker policy needs the built path, which PKCS7_verify does not return.
        guard let signers = PKCS7_get0_signers(p7, nil, 0) else {
            report.fail(.chain, .untrustedChain, "the signer's certificate is not embedded in the receipt")
            return false
        }
        defer { cossl_sk_x509_free(signers) }
        guard cossl_sk_x509_num(signers) == 1, let signerX = cossl_sk_x509_value(signers, 0),
              let signer = X509Certificate(borrowing: signerX) else {
            report.fail(.chain, .untrustedChain, "the signer's certificate is not embedded in the receipt")
            return false
        }
        var untrusted: [X509Certificate] = []
        if let certs = cossl_pkcs7_certs(p7) {
            for i in 0..<cossl_sk_x509_num(certs) {
                if let x = cossl_sk_x509_value(certs, i), let c = X509Certificate(borrowing: x) { untrusted.append(c) }
            }
        }
        do {
            let chain = try ChainValidator.validate(signer: signer, untrusted: untrusted, anchors: anchors,
                                                    atMs: created, applePolicy: !xcode)
            report.chain = VerifiedChain(chain)?.summaries ?? []
        } catch {
            record(ChainRefusal(error), &report)
            return false
        }
        report.mark(.chain, .ok)
        report.mark(.signer, xcode ? .skipped : .ok)
        guard verified else {
            report.fail(.signature, .signatureInvalid, "OpenSSL PKCS7_verify rejects the signature")
            return false
        }
        // PKCS7_verify picks the scheme from the key and ignores the SignerInfo's algorithm OID;
        // a mislabelled signature is rejected here as on the cached path.
        guard signer.publicKey()?.scheme == scheme.0 else {
            report.fail(.signature, .signatureInvalid, "the signing key type does not match the SignerInfo signature algorithm")
            return false
        }
        report.mark(.signature, .ok)
        return decodeSignedPayload(content, &report)
    }

    private static func nid(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> Int32 {
        guard let algor else { return NID_undef }
        var obj: OpaquePointer?
        X509_ALGOR_get0(&obj, nil, nil, algor)
        return obj.map { OBJ_obj2nid($0) } ?? NID_undef
    }
}
