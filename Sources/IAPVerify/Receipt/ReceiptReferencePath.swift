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
        guard let p7 = referenceDecode(der, &report) else { return false }
        defer { PKCS7_free(p7) }
        guard let (data, si) = referenceStructure(p7, &report),
              let scheme = referenceAlgorithms(p7, si, &report) else { return false }
        let content: ArraySlice<UInt8> = {
            guard let p = ASN1_STRING_get0_data(data) else { return [] }
            return Array(UnsafeBufferPointer(start: p, count: Int(max(0, ASN1_STRING_length(data)))))[...]
        }()
        guard acceptPayload(content, &report), let created = report.payload?.creationDateMs,
              referenceChainAndSignature(p7, scheme: scheme, createdMs: created, &report) else { return false }
        return decodeSignedPayload(content, &report)
    }

    /// Check 2's decoding, by OpenSSL: one PKCS#7 structure and nothing after it.
    private func referenceDecode(_ der: [UInt8], _ report: inout ReceiptReport) -> UnsafeMutablePointer<PKCS7>? {
        var consumed = 0
        let parsed: UnsafeMutablePointer<PKCS7>? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            let r = d2i_PKCS7(nil, &p, buf.count)
            if let p, let base = buf.baseAddress { consumed = p - base }
            return r
        }
        guard let p7 = parsed else {
            report.fail(.structure, .malformed, "OpenSSL cannot decode the receipt as PKCS#7")
            return nil
        }
        guard consumed == der.count else {
            PKCS7_free(p7)
            report.fail(.structure, .malformed, "the receipt has trailing bytes after the PKCS#7 structure")
            return nil
        }
        return p7
    }

    /// Check 2's shape rules on the decoded structure: signed data with attached content, one
    /// SignerInfo, no CRLs, no unsigned attributes. Returns the content and the SignerInfo.
    private func referenceStructure(_ p7: UnsafeMutablePointer<PKCS7>, _ report: inout ReceiptReport)
        -> (UnsafeMutablePointer<ASN1_OCTET_STRING>, UnsafeMutablePointer<PKCS7_SIGNER_INFO>)? {
        guard cossl_pkcs7_is_signed(p7) != 0 else {
            report.fail(.structure, .malformed, "the ContentInfo is not signedData")
            return nil
        }
        guard let data = cossl_pkcs7_data(p7) else {
            report.fail(.structure, .malformed, "the signed content is detached or not of type data")
            return nil
        }
        if let certs = cossl_pkcs7_certs(p7), cossl_sk_x509_num(certs) > EnvelopeLimits.maxCertificates {
            report.fail(.structure, .malformed, "the receipt embeds more than \(EnvelopeLimits.maxCertificates) certificates")
            return nil
        }
        guard cossl_pkcs7_signer_count(p7) == 1, let si = cossl_pkcs7_signer(p7, 0) else {
            report.fail(.structure, .malformed, "the receipt must have exactly one SignerInfo")
            return nil
        }
        guard cossl_pkcs7_has_crls(p7) == 0 else {
            report.fail(.structure, .malformed, "the receipt carries a CRLs field; App Store receipts have none")
            return nil
        }
        guard cossl_pkcs7_signer_has_unsigned_attributes(si) == 0 else {
            report.fail(.structure, .malformed, "the SignerInfo carries unsigned attributes; App Store receipts have none")
            return nil
        }
        report.mark(.structure, .ok)
        return (data, si)
    }

    /// Check 3: the digest and the signature scheme the SignerInfo names, and a digest set that
    /// lists only the signer's digest. Returns the scheme the signing key must have.
    private func referenceAlgorithms(_ p7: UnsafeMutablePointer<PKCS7>, _ si: UnsafeMutablePointer<PKCS7_SIGNER_INFO>,
                                     _ report: inout ReceiptReport) -> SignatureScheme? {
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
            return nil
        }
        guard let scheme, scheme.1 == nil || scheme.1 == digest else {
            report.fail(.algorithm, .unsupportedAlgorithm, "the signature algorithm is not RSA PKCS#1 v1.5 or ECDSA with the SignerInfo digest")
            return nil
        }
        guard cossl_pkcs7_digest_set_is_only(p7, si) != 0 else {
            report.fail(.algorithm, .unsupportedAlgorithm, "the SignedData digestAlgorithms SET must list only the signer's digest")
            return nil
        }
        report.mark(.algorithm, .ok)
        report.digest = digest
        report.scheme = scheme.0
        return scheme.0
    }

    /// Checks 4–7 by OpenSSL: PKCS7_verify at the receipt's creation date, then the same chain
    /// policy as the fast path over the signer it found, then the signature and the key type.
    private func referenceChainAndSignature(_ p7: UnsafeMutablePointer<PKCS7>, scheme: SignatureScheme, createdMs created: Int64,
                                            _ report: inout ReceiptReport) -> Bool {
        let xcode = isXcode(report)
        let anchors = anchorsFor(report)
        guard let (verified, reason) = referencePKCS7Verify(p7, anchors: anchors, createdMs: created) else {
            report.fail(.chain, .untrustedChain, "out of memory")
            return false
        }
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
        do {
            let chain = try ChainValidator.validate(signer: signer, untrusted: Self.referenceCertificates(p7), anchors: anchors,
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
        guard signer.publicKey()?.scheme == scheme else {
            report.fail(.signature, .signatureInvalid, "the signing key type does not match the SignerInfo signature algorithm")
            return false
        }
        report.mark(.signature, .ok)
        return true
    }

    /// PKCS7_verify with a store of `anchors` that validates at the creation date (in whole
    /// seconds, rounded down): whether it verified, and the reason of OpenSSL's last error.
    /// Nil when the store or the output BIO cannot be made.
    private func referencePKCS7Verify(_ p7: UnsafeMutablePointer<PKCS7>, anchors: TrustAnchors, createdMs created: Int64) -> (Bool, Int32)? {
        let seconds = created >= 0 ? created / 1000 : (created - 999) / 1000
        guard let store = anchors.makeStore(validatingAt: seconds), let out = BIO_new(BIO_s_mem()) else { return nil }
        defer {
            X509_STORE_free(store)
            BIO_free(out)
        }
        ERR_clear_error()
        let verified = PKCS7_verify(p7, nil, store, nil, out, 0) == 1
        let reason = ERR_GET_REASON(ERR_peek_last_error())
        ERR_clear_error()
        return (verified, reason)
    }

    /// The certificates the receipt embeds, borrowed for the chain policy.
    private static func referenceCertificates(_ p7: UnsafeMutablePointer<PKCS7>) -> [X509Certificate] {
        var untrusted: [X509Certificate] = []
        if let certs = cossl_pkcs7_certs(p7) {
            for i in 0..<cossl_sk_x509_num(certs) {
                if let x = cossl_sk_x509_value(certs, i), let c = X509Certificate(borrowing: x) { untrusted.append(c) }
            }
        }
        return untrusted
    }

    private static func nid(_ algor: UnsafeMutablePointer<X509_ALGOR>?) -> Int32 {
        guard let algor else { return NID_undef }
        var obj: OpaquePointer?
        X509_ALGOR_get0(&obj, nil, nil, algor)
        return obj.map { OBJ_obj2nid($0) } ?? NID_undef
    }
}
